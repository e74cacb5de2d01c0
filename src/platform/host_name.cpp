#include "platform/host_name.h"

#include <unistd.h>

namespace gw::platform {

std::string hostName() {
  // HOST_NAME_MAX is 64 on Linux; the spare byte keeps the name terminated when it is truncated.
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return {};
  return buf;
}

}  // namespace gw::platform
