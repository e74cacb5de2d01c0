// The NVML function table, filled by dlsym from whichever library was loaded (the real
// libnvidia-ml.so.1 or the simulator). A null entry means the installed driver lacks that symbol:
// callers treat it as "not supported", never as a crash.
#pragma once

#include <string>
#include <vector>

#include "common/result.h"
#include "nvml/nvml_abi.h"
#include "platform/dynlib.h"

namespace gw::nvml {

struct NvmlApi {
#define GW_NVML_POINTER(name, ret, params) ret(*name) params = nullptr;
  GW_NVML_FUNCTIONS(GW_NVML_POINTER)
#undef GW_NVML_POINTER

  // Optional simulator extras (sim/sim_control.h); null on real NVML.
  const char* (*gwSimLastError)() = nullptr;
  double (*gwSimGetTime)() = nullptr;
  void (*gwSimSetTime)(double) = nullptr;

  std::vector<std::string> missing;  // symbols the library does not export
  std::size_t resolved = 0;
};

// Loads the library and resolves every symbol of GW_NVML_FUNCTIONS. Fails only when the library
// itself cannot be loaded, or lacks even nvmlInit and nvmlShutdown.
Result<NvmlApi> loadNvmlApi(platform::DynamicLibrary& lib);

// Picks the newest versioned entry point that the library has: f_v3, then f_v2, then f.
template <typename F>
F newest(F v3, F v2 = nullptr, F plain = nullptr) {
  return v3 ? v3 : (v2 ? v2 : plain);
}

}  // namespace gw::nvml
