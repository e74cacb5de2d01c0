// Text from outside the program (another node's agent, a Prometheus, an HTTP error body) on the
// operator's terminal: a control character in it would be obeyed, not shown (ESC sequences can
// retitle the window, clear the screen, move the cursor over what was printed before). Every such
// string is passed through printable() before it is printed.
#pragma once

#include <string>
#include <string_view>

namespace gw::cli {

// C0 controls and DEL as \xNN, the C1 controls as \u0080..\u009f (their UTF-8 form) and any byte
// that is not part of valid UTF-8 as \xNN; everything else, UTF-8 included, unchanged. With
// keep_newlines, '\n' stays (a multi-line text); a tab always stays.
std::string printable(std::string_view text, bool keep_newlines = false);

}  // namespace gw::cli
