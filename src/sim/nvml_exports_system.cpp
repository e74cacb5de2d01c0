// Library lifetime, system queries, device enumeration, and the gwSim* controls.
#include "sim/export_api.h"

#include <mutex>

#include <cstdio>
#include <cstdlib>

using namespace gw::sim;

namespace {

// "0000:18:00.0", "00000000:18:00.0" or "18:00.0", any case.
bool parsePciBusId(const char* s, unsigned* dom, unsigned* bus, unsigned* dev, unsigned* fn) {
  char tail = 0;
  if (std::sscanf(s, "%x:%x:%x.%x%c", dom, bus, dev, fn, &tail) == 4) return true;
  *dom = 0;
  return std::sscanf(s, "%x:%x.%x%c", bus, dev, fn, &tail) == 3;
}

}  // namespace

extern "C" {

nvmlReturn_t nvmlInit_v2(void) { return initLibrary(); }
nvmlReturn_t nvmlInit(void) { return initLibrary(); }
nvmlReturn_t nvmlInitWithFlags(unsigned int /*flags*/) { return initLibrary(); }
nvmlReturn_t nvmlShutdown(void) { return shutdownLibrary(); }

nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned int length) {
  GW_ENTER_SYSTEM();
  return copyString(version, length, c.world->scenario.driver_version);
}

nvmlReturn_t nvmlSystemGetNVMLVersion(char* version, unsigned int length) {
  GW_ENTER_SYSTEM();
  return copyString(version, length, c.world->scenario.nvml_version);
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion(int* cudaDriverVersion) {
  GW_ENTER_SYSTEM();
  if (!cudaDriverVersion) return NVML_ERROR_INVALID_ARGUMENT;
  *cudaDriverVersion = c.world->scenario.cuda_driver_version;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int* cudaDriverVersion) {
  return nvmlSystemGetCudaDriverVersion(cudaDriverVersion);
}

nvmlReturn_t nvmlSystemGetProcessName(unsigned int pid, char* name, unsigned int length) {
  GW_ENTER_SYSTEM();
  if (!name || length == 0) return NVML_ERROR_INVALID_ARGUMENT;
  const ProcessConfig* p = c.world->findProcess(pid, c.t);
  if (!p) return NVML_ERROR_NOT_FOUND;
  return copyString(name, length, p->name);
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* deviceCount) {
  GW_ENTER_SYSTEM();
  if (!deviceCount) return NVML_ERROR_INVALID_ARGUMENT;
  // A GPU that fell off the bus still counts, as with the real driver.
  *deviceCount = static_cast<unsigned>(c.world->gpus.size());
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCount(unsigned int* deviceCount) { return nvmlDeviceGetCount_v2(deviceCount); }

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device) {
  GW_ENTER_SYSTEM();
  if (!device || index >= c.world->gpus.size()) return NVML_ERROR_INVALID_ARGUMENT;
  Device* gpu = c.world->gpus[index].get();
  if (passGates(&c, gpu, __func__) != NVML_SUCCESS) return c.rc;
  *device = reinterpret_cast<nvmlDevice_t>(gpu);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t* device) {
  return nvmlDeviceGetHandleByIndex_v2(index, device);
}

nvmlReturn_t nvmlDeviceGetHandleByUUID(const char* uuid, nvmlDevice_t* device) {
  GW_ENTER_SYSTEM();
  if (!uuid || !device) return NVML_ERROR_INVALID_ARGUMENT;
  Device* found = nullptr;
  {
    // MIG devices come and go (sim/mig.h); the gates below may sleep, so not under the lock.
    std::lock_guard lock(c.world->mig_mu);
    for (auto* list : {&c.world->gpus, &c.world->migs}) {
      for (auto& d : *list) {
        if (d->uuid != uuid || d->gone.load()) continue;
        found = d.get();
        break;
      }
      if (found) break;
    }
  }
  if (!found) return NVML_ERROR_NOT_FOUND;
  Device* gpu = found->is_mig ? found->parent : found;
  if (passGates(&c, gpu, __func__) != NVML_SUCCESS) return c.rc;
  *device = reinterpret_cast<nvmlDevice_t>(found);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char* pciBusId, nvmlDevice_t* device) {
  GW_ENTER_SYSTEM();
  unsigned dom = 0, bus = 0, dev = 0, fn = 0;
  if (!pciBusId || !device || !parsePciBusId(pciBusId, &dom, &bus, &dev, &fn)) return NVML_ERROR_INVALID_ARGUMENT;
  for (auto& d : c.world->gpus) {
    const GpuConfig& g = *d->cfg;
    if (g.pci_domain != dom || g.pci_bus != bus || g.pci_device != dev || g.pci_function != fn) continue;
    if (passGates(&c, d.get(), __func__) != NVML_SUCCESS) return c.rc;
    *device = reinterpret_cast<nvmlDevice_t>(d.get());
    return NVML_SUCCESS;
  }
  return NVML_ERROR_NOT_FOUND;
}

// ------------------------------------------------------------------------------------------
// Simulator controls (sim_control.h).

const char* gwSimLastError(void) { return lastError(); }

double gwSimGetTime(void) {
  if (World* w = currentWorld()) return w->clock.now();
  const char* start = std::getenv("GPUWARDEN_SIM_START");
  return start ? std::strtod(start, nullptr) : 0.0;
}

void gwSimSetTime(double seconds) {
  if (World* w = currentWorld()) w->clock.set(seconds);
}

}  // extern "C"
