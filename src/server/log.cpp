#include "server/log.h"

#include <unistd.h>

#include "platform/clock.h"

namespace gw::server {

void logLine(const std::string& level, const std::string& message) {
  std::string line = platform::formatRfc3339(platform::wallMs()) + " gpuwarden " + level + ": " + message;
  // Newlines inside a message would break "one line per event".
  for (auto& ch : line)
    if (ch == '\n' || ch == '\r') ch = ' ';
  line += '\n';
  // One write(2) so that lines from different threads do not interleave.
  ssize_t r = ::write(STDERR_FILENO, line.data(), line.size());
  (void)r;
}

}  // namespace gw::server
