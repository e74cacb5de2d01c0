// Reading a file an operator names (a configuration, a web configuration, a certificate): it must
// be a regular file (a directory, a FIFO or a device is refused, without hanging in open(2)) of at
// most max_bytes, checked while it is read too (it may grow meanwhile).
#pragma once

#include <cstddef>
#include <string>

#include "common/result.h"

namespace gw::platform {

// `what` names the file in messages ("the configuration"): "PATH: the configuration must be a
// regular file (this is a directory)", "PATH: the configuration is N bytes; at most M".
Result<std::string> readRegularFile(const std::string& path, std::size_t max_bytes, const std::string& what);

}  // namespace gw::platform
