// Topology (PCIe ancestry, CPU and memory affinity), MIG, and processes.
#include "sim/export_api.h"

#include <mutex>

#include <algorithm>

#include "sim/world.h"

using namespace gw::sim;

namespace {

constexpr unsigned kMaxMigDevices = 7;

nvmlGpuTopologyLevel_t commonAncestor(const GpuConfig& a, const GpuConfig& b) {
  if (a.index == b.index) return NVML_TOPOLOGY_INTERNAL;
  if (a.pcie_switch >= 0 && a.pcie_switch == b.pcie_switch) return NVML_TOPOLOGY_SINGLE;
  if (a.host_bridge == b.host_bridge) {
    // Several switches below one host bridge is PXB; a GPU directly on the bridge is PHB.
    return a.pcie_switch >= 0 && b.pcie_switch >= 0 ? NVML_TOPOLOGY_MULTIPLE : NVML_TOPOLOGY_HOSTBRIDGE;
  }
  if (a.numa_node == b.numa_node) return NVML_TOPOLOGY_NODE;
  return NVML_TOPOLOGY_SYSTEM;
}

void setBit(unsigned long* set, unsigned size, unsigned bit) {
  constexpr unsigned kBits = sizeof(unsigned long) * 8;
  if (bit / kBits < size) set[bit / kBits] |= 1ul << (bit % kBits);
}

bool onInstance(const ProcessConfig& p, const Device& d) {
  return !d.is_mig || (p.gpu_instance == d.mig->gpu_instance_id && p.compute_instance == d.mig->compute_instance_id);
}

// Fills any of the three process-info layouts, with NVML's buffer-size contract: too small a
// buffer gets INSUFFICIENT_SIZE and the count needed.
template <typename Info>
nvmlReturn_t listProcesses(const Call& c, unsigned* info_count, Info* infos, bool compute) {
  if (!info_count) return NVML_ERROR_INVALID_ARGUMENT;
  const Device& d = *c.dev;
  unsigned n = 0;
  if (compute) {
    for (const auto& p : d.cfg->processes) n += processPresent(p, c.t) && onInstance(p, d) ? 1 : 0;
  }
  if (*info_count < n) {
    *info_count = n;
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  if (n > 0 && !infos) return NVML_ERROR_INVALID_ARGUMENT;
  unsigned i = 0;
  if (compute) {
    for (const auto& p : d.cfg->processes) {
      if (!processPresent(p, c.t) || !onInstance(p, d)) continue;
      Info info{};
      info.pid = p.pid;
      info.usedGpuMemory = p.memory_mib * 1024ull * 1024ull;
      if constexpr (requires { info.gpuInstanceId; }) {
        info.gpuInstanceId = p.gpu_instance ? *p.gpu_instance : kNoInstance;
        info.computeInstanceId = p.gpu_instance ? p.compute_instance : kNoInstance;
      }
      infos[i++] = info;
    }
  }
  *info_count = n;
  return NVML_SUCCESS;
}

}  // namespace

extern "C" {

nvmlReturn_t nvmlDeviceGetTopologyCommonAncestor(nvmlDevice_t device1, nvmlDevice_t device2,
                                                 nvmlGpuTopologyLevel_t* pathInfo) {
  GW_ENTER_DEVICE(device1, MigPolicy::kParent);
  ::gw::sim::Call c2 = enterDevice(device2, __func__, MigPolicy::kParent);
  if (!c2) return c2.rc;
  if (!pathInfo) return NVML_ERROR_INVALID_ARGUMENT;
  *pathInfo = commonAncestor(*c.dev->cfg, *c2.dev->cfg);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCpuAffinity(nvmlDevice_t device, unsigned int cpuSetSize, unsigned long* cpuSet) {
  GW_ENTER_DEVICE(device, MigPolicy::kParent);
  if (!cpuSet || cpuSetSize == 0) return NVML_ERROR_INVALID_ARGUMENT;
  std::fill(cpuSet, cpuSet + cpuSetSize, 0ul);
  for (const auto& [first, last] : c.dev->cfg->cpus) {
    for (unsigned cpu = first; cpu <= last; ++cpu) setBit(cpuSet, cpuSetSize, cpu);
  }
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMemoryAffinity(nvmlDevice_t device, unsigned int nodeSetSize, unsigned long* nodeSet,
                                         nvmlAffinityScope_t scope) {
  GW_ENTER_DEVICE(device, MigPolicy::kParent);
  if (!nodeSet || nodeSetSize == 0 || scope > NVML_AFFINITY_SCOPE_SOCKET) return NVML_ERROR_INVALID_ARGUMENT;
  std::fill(nodeSet, nodeSet + nodeSetSize, 0ul);
  // One socket per NUMA node in the simulated hosts, so both scopes give the same set.
  setBit(nodeSet, nodeSetSize, static_cast<unsigned>(c.dev->cfg->numa_node));
  return NVML_SUCCESS;
}

// ---------------------------------------------------------------------------------------------
// MIG.

nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int* currentMode, unsigned int* pendingMode) {
  GW_ENTER_DEVICE(device, MigPolicy::kPhysicalOnly);
  if (!currentMode || !pendingMode) return NVML_ERROR_INVALID_ARGUMENT;
  if (!c.dev->profile->mig_capable) return NVML_ERROR_NOT_SUPPORTED;
  *currentMode = *pendingMode = c.dev->mig_current.load() ? NVML_DEVICE_MIG_ENABLE : NVML_DEVICE_MIG_DISABLE;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t device, unsigned int* count) {
  GW_ENTER_DEVICE(device, MigPolicy::kMigAware);
  if (!count || c.dev->is_mig) return NVML_ERROR_INVALID_ARGUMENT;
  if (!c.dev->profile->mig_capable) return NVML_ERROR_NOT_SUPPORTED;
  *count = kMaxMigDevices;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t device, unsigned int index, nvmlDevice_t* migDevice) {
  GW_ENTER_DEVICE(device, MigPolicy::kMigAware);
  if (!migDevice || c.dev->is_mig || index >= kMaxMigDevices) return NVML_ERROR_INVALID_ARGUMENT;
  if (!c.dev->profile->mig_capable) return NVML_ERROR_NOT_SUPPORTED;
  std::lock_guard lock(c.world->mig_mu);
  if (index >= c.dev->mig_children.size()) return NVML_ERROR_NOT_FOUND;
  *migDevice = reinterpret_cast<nvmlDevice_t>(c.dev->mig_children[index]);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetDeviceHandleFromMigDeviceHandle(nvmlDevice_t migDevice, nvmlDevice_t* device) {
  GW_ENTER_DEVICE(migDevice, MigPolicy::kMigAware);
  if (!device || !c.dev->is_mig) return NVML_ERROR_INVALID_ARGUMENT;
  *device = reinterpret_cast<nvmlDevice_t>(c.dev->parent);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceIsMigDeviceHandle(nvmlDevice_t device, unsigned int* isMigDevice) {
  GW_ENTER_DEVICE(device, MigPolicy::kMigAware);
  if (!isMigDevice) return NVML_ERROR_INVALID_ARGUMENT;
  *isMigDevice = c.dev->is_mig ? 1 : 0;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t device, unsigned int* id) {
  GW_ENTER_DEVICE(device, MigPolicy::kMigAware);
  if (!id) return NVML_ERROR_INVALID_ARGUMENT;
  if (!c.dev->is_mig) return NVML_ERROR_NOT_SUPPORTED;
  *id = c.dev->mig->gpu_instance_id;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetComputeInstanceId(nvmlDevice_t device, unsigned int* id) {
  GW_ENTER_DEVICE(device, MigPolicy::kMigAware);
  if (!id) return NVML_ERROR_INVALID_ARGUMENT;
  if (!c.dev->is_mig) return NVML_ERROR_NOT_SUPPORTED;
  *id = c.dev->mig->compute_instance_id;
  return NVML_SUCCESS;
}

// ---------------------------------------------------------------------------------------------
// Processes.

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int* infoCount,
                                                     nvmlProcessInfo_t* infos) {
  GW_ENTER_DEVICE(device, MigPolicy::kMigAware);
  return listProcesses(c, infoCount, infos, true);
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t device, unsigned int* infoCount,
                                                     nvmlProcessInfo_v2_t* infos) {
  GW_ENTER_DEVICE(device, MigPolicy::kMigAware);
  return listProcesses(c, infoCount, infos, true);
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t device, unsigned int* infoCount,
                                                  nvmlProcessInfo_v1_t* infos) {
  GW_ENTER_DEVICE(device, MigPolicy::kMigAware);
  return listProcesses(c, infoCount, infos, true);
}

nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t device, unsigned int* infoCount,
                                                      nvmlProcessInfo_t* infos) {
  GW_ENTER_DEVICE(device, MigPolicy::kMigAware);
  // Compute nodes run no graphics contexts.
  return listProcesses(c, infoCount, infos, false);
}

nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t device, nvmlProcessUtilizationSample_t* utilization,
                                             unsigned int* processSamplesCount, unsigned long long lastSeenTimeStamp) {
  GW_ENTER_DEVICE(device, MigPolicy::kPhysicalOnly);
  if (!processSamplesCount) return NVML_ERROR_INVALID_ARGUMENT;
  if (c.dev->mig_current.load()) return NVML_ERROR_NOT_SUPPORTED;
  const StepState s = c.dev->physics->at(c.t);
  // One sample per running process for the current step, stamped at the step's start.
  const auto stamp = static_cast<unsigned long long>(c.world->epochUs(static_cast<double>(s.step) * kStepSeconds));
  double shares = 0;
  unsigned n = 0;
  for (const auto& p : c.dev->cfg->processes) {
    if (!processRunning(p, c.t)) continue;
    shares += p.share;
    ++n;
  }
  if (stamp <= lastSeenTimeStamp) n = 0;
  if (n == 0) return NVML_ERROR_NOT_FOUND;
  if (!utilization || *processSamplesCount < n) {
    *processSamplesCount = n;
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  unsigned i = 0;
  for (const auto& p : c.dev->cfg->processes) {
    if (!processRunning(p, c.t)) continue;
    double f = shares > 0 ? p.share / shares : 0;
    nvmlProcessUtilizationSample_t& u = utilization[i++];
    u = {};
    u.pid = p.pid;
    u.timeStamp = stamp;
    u.smUtil = static_cast<unsigned>(s.util_gpu * f + 0.5);
    u.memUtil = static_cast<unsigned>(s.util_mem * f + 0.5);
  }
  *processSamplesCount = n;
  return NVML_SUCCESS;
}

}  // extern "C"
