#include "cli/printable.h"

#include <cstdio>

namespace gw::cli {
namespace {

void escapeByte(std::string& out, unsigned char c) {
  char b[5];
  std::snprintf(b, sizeof b, "\\x%02x", c);
  out += b;
}

// The length of the valid UTF-8 sequence at the start of `s` (overlong forms, surrogates and code
// points past U+10FFFF are invalid), or 0.
std::size_t utf8Length(std::string_view s, char32_t* cp) {
  const auto c0 = static_cast<unsigned char>(s[0]);
  std::size_t n = 0;
  char32_t v = 0, min = 0;
  if (c0 >= 0xC2 && c0 <= 0xDF) {
    n = 2, v = c0 & 0x1F, min = 0x80;
  } else if (c0 >= 0xE0 && c0 <= 0xEF) {
    n = 3, v = c0 & 0x0F, min = 0x800;
  } else if (c0 >= 0xF0 && c0 <= 0xF4) {
    n = 4, v = c0 & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (s.size() < n) return 0;
  for (std::size_t i = 1; i < n; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if ((c & 0xC0) != 0x80) return 0;
    v = (v << 6) | (c & 0x3F);
  }
  if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 0;
  *cp = v;
  return n;
}

}  // namespace

std::string printable(std::string_view text, bool keep_newlines) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      if ((c < 0x20 && c != '\t' && !(keep_newlines && c == '\n')) || c == 0x7F)
        escapeByte(out, c);
      else
        out += static_cast<char>(c);
      ++i;
      continue;
    }
    char32_t cp = 0;
    const std::size_t n = utf8Length(text.substr(i), &cp);
    if (n == 0) {
      escapeByte(out, c);
      ++i;
    } else if (cp <= 0x9F) {  // a C1 control
      char b[8];
      std::snprintf(b, sizeof b, "\\u%04x", static_cast<unsigned>(cp));
      out += b;
      i += n;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  return out;
}

}  // namespace gw::cli
