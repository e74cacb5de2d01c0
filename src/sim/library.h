// Process-wide state of the simulator library: the current world, the nvmlInit reference
// count, the last error, and the gate every NVML entry point passes through (initialised?
// handle valid? GPU lost? call hanging?).
#pragma once

#include <string>

#include "nvml/nvml_abi.h"
#include "sim/world.h"

namespace gw::sim {

nvmlReturn_t initLibrary();
nvmlReturn_t shutdownLibrary();
World* currentWorld();

void setLastError(std::string message);
void clearLastError();
// The last error message; the pointer stays valid for the life of the process.
const char* lastError();

// How an entry point treats a MIG device handle.
enum class MigPolicy {
  kPhysicalOnly,  // NOT_SUPPORTED on a MIG handle (as real NVML for power, clocks, ...)
  kParent,        // answer for the parent GPU (PCI info, architecture, ...)
  kMigAware,      // the function looks at the MIG device itself
};

struct Call {
  nvmlReturn_t rc = NVML_SUCCESS;
  World* world = nullptr;
  Device* dev = nullptr;  // per the policy: the MIG device or the physical GPU
  Device* gpu = nullptr;  // always the physical GPU
  double t = 0;           // simulated time of the call
  explicit operator bool() const { return rc == NVML_SUCCESS; }
};

// For calls without a device: initialised, and the driver still there.
Call enterSystem(const char* function);
// For calls on a device. `function` is the NVML name, matched by hang faults' `call:`.
Call enterDevice(nvmlDevice_t device, const char* function, MigPolicy policy);
// Gates of a GPU by index (nvmlDeviceGetHandleByIndex): lost and hang faults.
nvmlReturn_t passGates(Call* call, Device* gpu, const char* function);

// As the driver: only root changes a GPU's settings, and a scenario with `privileged: false` is a
// context where even root may not (a container without CAP_SYS_ADMIN).
bool mayChangeSettings(const Call& c);
// A setter's change is written to the state file before the setter answers, so that the next
// process (the next `gpuwarden smi`) reads it back. Takes World::mig_mu: call it without.
nvmlReturn_t saved(const Call& c);

}  // namespace gw::sim
