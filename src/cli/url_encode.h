// Percent-encoding of a query-string value, for the commands that ask a running agent.
#pragma once

#include <cctype>
#include <cstdio>
#include <string>

namespace gw::cli {

// RFC 3986 unreserved characters pass; every other byte becomes %XX.
inline std::string urlEncode(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      out += buf;
    }
  }
  return out;
}

}  // namespace gw::cli
