#include "nvml/nvml_api.h"

namespace gw::nvml {

Result<NvmlApi> loadNvmlApi(platform::DynamicLibrary& lib) {
  NvmlApi api;
#define GW_NVML_RESOLVE(name, ret, params)                       \
  api.name = reinterpret_cast<ret(*) params>(lib.symbol(#name)); \
  if (api.name) {                                                \
    ++api.resolved;                                              \
  } else {                                                       \
    api.missing.emplace_back(#name);                             \
  }
  GW_NVML_FUNCTIONS(GW_NVML_RESOLVE)
#undef GW_NVML_RESOLVE
  api.gwSimLastError = reinterpret_cast<const char* (*)()>(lib.symbol("gwSimLastError"));
  api.gwSimGetTime = reinterpret_cast<double (*)()>(lib.symbol("gwSimGetTime"));
  api.gwSimSetTime = reinterpret_cast<void (*)(double)>(lib.symbol("gwSimSetTime"));

  if (!api.nvmlInit_v2 && !api.nvmlInit) {
    return Status::Error(lib.path() + " does not export nvmlInit: it is not an NVML library");
  }
  if (!api.nvmlShutdown) return Status::Error(lib.path() + " does not export nvmlShutdown");
  return api;
}

}  // namespace gw::nvml
