// Included FIRST by every nvml_exports_*.cpp: the NVML and gwSim declarations get default
// visibility here, while the rest of the library is built with -fvisibility=hidden, so the
// .so exports exactly the NVML ABI and the gwSim* controls.
#pragma once

#pragma GCC visibility push(default)
#include "nvml/nvml_abi.h"
#include "sim/sim_control.h"
#pragma GCC visibility pop

#include <cstring>
#include <string_view>

#include "sim/library.h"

namespace gw::sim {

inline nvmlReturn_t copyString(char* dst, unsigned length, std::string_view s) {
  if (!dst) return NVML_ERROR_INVALID_ARGUMENT;
  if (s.size() + 1 > length) return NVML_ERROR_INSUFFICIENT_SIZE;
  std::memcpy(dst, s.data(), s.size());
  dst[s.size()] = '\0';
  return NVML_SUCCESS;
}

// One field of the GPU's current physics step, e.g. sample<&StepState::power_w>(c).
template <auto Member>
auto sample(const Call& c) {
  return c.gpu->physics->read(c.t, [](const StepState& s) { return s.*Member; });
}

}  // namespace gw::sim

// Opens an entry point on a device: returns the gate's error, else leaves `c` usable.
#define GW_ENTER_DEVICE(device, policy)                                 \
  ::gw::sim::Call c = ::gw::sim::enterDevice(device, __func__, policy); \
  if (!c) return c.rc

#define GW_ENTER_SYSTEM()                               \
  ::gw::sim::Call c = ::gw::sim::enterSystem(__func__); \
  if (!c) return c.rc
