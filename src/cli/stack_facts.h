// What the stack checks (doctor, diag r1) need from the process and from NVML, gathered one way.
#pragma once

#include <map>
#include <string>

#include "doctor/doctor.h"
#include "nvml/nvml.h"

namespace gw::cli {

// The process environment (PATH, LD_LIBRARY_PATH, CUDA_HOME ...) as a map.
std::map<std::string, std::string> processEnvironment();
// Driver versions and per-GPU facts from an open session.
doctor::NvmlFacts nvmlFactsFrom(const nvml::Session& session);

}  // namespace gw::cli
