// This machine's name, as alerts, labels and Slurm's node name start from it: one reading of
// gethostname(2) for every layer.
#pragma once

#include <string>

namespace gw::platform {

// The host name (possibly fully qualified); "" when the system will not say.
std::string hostName();

}  // namespace gw::platform
