// Per-device identity and the time-varying readings: memory, clocks, power, thermal,
// utilisation, and the settings the product may change (smi's setters).
#include <unistd.h>

#include "sim/export_api.h"

#include <algorithm>
#include <cmath>

#include "sim/faults.h"
#include "sim/sim_state.h"
#include "sim/world.h"

using namespace gw::sim;

namespace {

constexpr unsigned kMigReservedMib = 12;  // per-instance driver allocations

unsigned long long mibToBytes(unsigned long long mib) { return mib * 1024ull * 1024ull; }

// Memory held by processes present at t; on a MIG device only those of its instance.
unsigned long long processMib(const Device& d, double t) {
  unsigned long long sum = 0;
  for (const auto& p : d.cfg->processes) {
    if (!processPresent(p, t)) continue;
    if (d.is_mig && (p.gpu_instance != d.mig->gpu_instance_id || p.compute_instance != d.mig->compute_instance_id))
      continue;
    sum += p.memory_mib;
  }
  return sum;
}

unsigned rounded(double v) { return static_cast<unsigned>(std::lround(std::max(0.0, v))); }

template <typename F>
nvmlReturn_t changeSettings(const Call& c, F&& change) {
  {
    std::lock_guard lock(c.dev->settings_mu);
    change(c.dev->settings);
  }
  return saved(c);
}

// Locked clocks, graphics or memory: [min, max] within the board's range [lo, hi], as the driver
// checks; the reset passes 0 for all four, which releases the lock.
using LockField = unsigned DeviceSettings::*;
nvmlReturn_t lockClocks(const Call& c, unsigned min, unsigned max, unsigned lo, unsigned hi, LockField min_field,
                        LockField max_field) {
  if (!mayChangeSettings(c)) return NVML_ERROR_NO_PERMISSION;
  if (min > max || min < lo || max > hi) return NVML_ERROR_INVALID_ARGUMENT;
  return changeSettings(c, [&](DeviceSettings& s) {
    s.*min_field = min;
    s.*max_field = max;
  });
}

// The applications clock of `type`: what -ac set (`set`, when one is given and set it), else the
// board's default.
nvmlReturn_t applicationsClock(const GpuProfile& P, const DeviceSettings* set, nvmlClockType_t type,
                               unsigned int* clockMHz) {
  switch (type) {
    case NVML_CLOCK_GRAPHICS:
    case NVML_CLOCK_SM:
      *clockMHz = set && set->app_graphics ? set->app_graphics : P.app_graphics_clock;
      return NVML_SUCCESS;
    case NVML_CLOCK_MEM:
      *clockMHz = set && set->app_mem ? set->app_mem : P.app_mem_clock;
      return NVML_SUCCESS;
    case NVML_CLOCK_VIDEO:
      *clockMHz = P.max_video_clock;
      return NVML_SUCCESS;
    default:
      return NVML_ERROR_INVALID_ARGUMENT;
  }
}

}  // namespace

extern "C" {

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned int length) {
  GW_ENTER_DEVICE(device, MigPolicy::kMigAware);
  return copyString(name, length, c.dev->name);
}

nvmlReturn_t nvmlDeviceGetBrand(nvmlDevice_t device, nvmlBrandType_t* type) {
  GW_ENTER_DEVICE(device, MigPolicy::kParent);
  if (!type) return NVML_ERROR_INVALID_ARGUMENT;
  *type = c.dev->profile->brand;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int* index) {
  GW_ENTER_DEVICE(device, MigPolicy::kPhysicalOnly);
  if (!index) return NVML_ERROR_INVALID_ARGUMENT;
  *index = c.dev->index;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetSerial(nvmlDevice_t device, char* serial, unsigned int length) {
  GW_ENTER_DEVICE(device, MigPolicy::kParent);
  if (c.dev->serial.empty()) return NVML_ERROR_NOT_SUPPORTED;  // GeForce boards have none
  return copyString(serial, length, c.dev->serial);
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid, unsigned int length) {
  GW_ENTER_DEVICE(device, MigPolicy::kMigAware);
  return copyString(uuid, length, c.dev->uuid);
}

nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t device, unsigned int* minorNumber) {
  GW_ENTER_DEVICE(device, MigPolicy::kParent);
  if (!minorNumber) return NVML_ERROR_INVALID_ARGUMENT;
  *minorNumber = c.dev->minor;  // /dev/nvidiaN: the driver's numbering, not NVML's index
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetBoardPartNumber(nvmlDevice_t device, char* partNumber, unsigned int length) {
  GW_ENTER_DEVICE(device, MigPolicy::kParent);
  return copyString(partNumber, length, c.dev->profile->part_number);
}

// One GPU per board on every simulated profile. The board id follows the PCI address as the
// recorded H200 at 00:06.0 answered 0x6: bus << 8 | device.
nvmlReturn_t nvmlDeviceGetMultiGpuBoard(nvmlDevice_t device, unsigned int* multiGpuBool) {
  GW_ENTER_DEVICE(device, MigPolicy::kParent);
  if (!multiGpuBool) return NVML_ERROR_INVALID_ARGUMENT;
  *multiGpuBool = 0;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetBoardId(nvmlDevice_t device, unsigned int* boardId) {
  GW_ENTER_DEVICE(device, MigPolicy::kParent);
  if (!boardId) return NVML_ERROR_INVALID_ARGUMENT;
  *boardId = c.dev->pci.bus << 8U | c.dev->pci.device;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetInforomImageVersion(nvmlDevice_t device, char* version, unsigned int length) {
  GW_ENTER_DEVICE(device, MigPolicy::kParent);
  return copyString(version, length, c.dev->profile->inforom_image);
}

nvmlReturn_t nvmlDeviceGetInforomVersion(nvmlDevice_t device, nvmlInforomObject_t object, char* version,
                                         unsigned int length) {
  GW_ENTER_DEVICE(device, MigPolicy::kParent);
  std::string_view v;
  switch (object) {
    case NVML_INFOROM_OEM:
      v = c.dev->profile->inforom_oem;
      break;
    case NVML_INFOROM_ECC:
      v = c.dev->profile->inforom_ecc;
      break;
    case NVML_INFOROM_POWER:
      v = c.dev->profile->inforom_power;
      break;
    default:
      return NVML_ERROR_INVALID_ARGUMENT;
  }
  if (v.empty()) return NVML_ERROR_NOT_SUPPORTED;
  return copyString(version, length, v);
}

nvmlReturn_t nvmlDeviceGetVbiosVersion(nvmlDevice_t device, char* version, unsigned int length) {
  GW_ENTER_DEVICE(device, MigPolicy::kParent);
  return copyString(version, length, c.dev->profile->vbios);
}

nvmlReturn_t nvmlDeviceValidateInforom(nvmlDevice_t device) {
  GW_ENTER_DEVICE(device, MigPolicy::kPhysicalOnly);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t* pci) {
  GW_ENTER_DEVICE(device, MigPolicy::kParent);
  if (!pci) return NVML_ERROR_INVALID_ARGUMENT;
  *pci = c.dev->pci;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetPciInfo_v2(nvmlDevice_t device, nvmlPciInfo_t* pci) {
  return nvmlDeviceGetPciInfo_v3(device, pci);
}
nvmlReturn_t nvmlDeviceGetPciInfo(nvmlDevice_t device, nvmlPciInfo_t* pci) {
  return nvmlDeviceGetPciInfo_v3(device, pci);
}

nvmlReturn_t nvmlDeviceGetArchitecture(nvmlDevice_t device, nvmlDeviceArchitecture_t* arch) {
  GW_ENTER_DEVICE(device, MigPolicy::kParent);
  if (!arch) return NVML_ERROR_INVALID_ARGUMENT;
  *arch = c.dev->profile->architecture;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int* major, int* minor) {
  GW_ENTER_DEVICE(device, MigPolicy::kParent);
  if (!major || !minor) return NVML_ERROR_INVALID_ARGUMENT;
  *major = c.dev->profile->cc_major;
  *minor = c.dev->profile->cc_minor;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetNumGpuCores(nvmlDevice_t device, unsigned int* numCores) {
  GW_ENTER_DEVICE(device, MigPolicy::kMigAware);
  if (!numCores) return NVML_ERROR_INVALID_ARGUMENT;
  const GpuProfile& P = *c.dev->profile;
  *numCores = c.dev->is_mig ? P.cuda_cores / P.sm_count * c.dev->mig->profile->sm_count : P.cuda_cores;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetAttributes_v2(nvmlDevice_t device, nvmlDeviceAttributes_t* a) {
  GW_ENTER_DEVICE(device, MigPolicy::kMigAware);
  if (!a) return NVML_ERROR_INVALID_ARGUMENT;
  *a = {};
  const GpuProfile& P = *c.dev->profile;
  if (c.dev->is_mig) {
    const MigProfile& m = *c.dev->mig->profile;
    a->multiprocessorCount = m.sm_count;
    a->sharedCopyEngineCount = m.copy_engines;
    a->sharedDecoderCount = m.decoders;
    a->sharedJpegCount = m.gpu_slices == 7 ? 1 : 0;
    a->sharedOfaCount = m.gpu_slices == 7 ? 1 : 0;
    a->gpuInstanceSliceCount = m.gpu_slices;
    a->computeInstanceSliceCount = m.gpu_slices;
    a->memorySizeMB = m.memory_mib;
  } else {
    a->multiprocessorCount = P.sm_count;
    a->gpuInstanceSliceCount = P.mig_capable ? 7 : 0;
    a->computeInstanceSliceCount = P.mig_capable ? 7 : 0;
    a->memorySizeMB = P.memory_mib;
  }
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t* memory) {
  GW_ENTER_DEVICE(device, MigPolicy::kMigAware);
  if (!memory) return NVML_ERROR_INVALID_ARGUMENT;
  if (memory->version != nvmlMemory_v2) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  const Device& d = *c.dev;
  unsigned long long total = d.is_mig ? d.mig->profile->memory_mib : d.profile->memory_mib;
  unsigned long long reserved = d.is_mig ? kMigReservedMib : d.profile->reserved_mib;
  unsigned long long used = processMib(d, c.t);
  memory->total = mibToBytes(total);
  memory->reserved = mibToBytes(reserved);
  memory->used = mibToBytes(used);
  memory->free = mibToBytes(total - reserved - used);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory) {
  GW_ENTER_DEVICE(device, MigPolicy::kMigAware);
  if (!memory) return NVML_ERROR_INVALID_ARGUMENT;
  // v1 counts the driver reservation as used, as the real v1 call does.
  const Device& d = *c.dev;
  unsigned long long total = d.is_mig ? d.mig->profile->memory_mib : d.profile->memory_mib;
  unsigned long long used = processMib(d, c.t) + (d.is_mig ? kMigReservedMib : d.profile->reserved_mib);
  memory->total = mibToBytes(total);
  memory->used = mibToBytes(used);
  memory->free = mibToBytes(total - used);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetBAR1MemoryInfo(nvmlDevice_t device, nvmlBAR1Memory_t* bar1) {
  GW_ENTER_DEVICE(device, MigPolicy::kParent);
  if (!bar1) return NVML_ERROR_INVALID_ARGUMENT;
  unsigned long long used = 2 + (sample<&StepState::busy>(c) && !c.dev->cfg->processes.empty() ? 30 : 0);
  bar1->bar1Total = mibToBytes(c.dev->profile->bar1_mib);
  bar1->bar1Used = mibToBytes(used);
  bar1->bar1Free = bar1->bar1Total - bar1->bar1Used;
  return NVML_SUCCESS;
}

// Confidential computing arrived with Hopper; the simulator's GPUs never run with it on, so the
// protected memory is all zero, as the recorded H200 (CC off) answered.
nvmlReturn_t nvmlDeviceGetConfComputeProtectedMemoryUsage(nvmlDevice_t device, nvmlMemory_t* memory) {
  GW_ENTER_DEVICE(device, MigPolicy::kParent);
  if (!memory) return NVML_ERROR_INVALID_ARGUMENT;
  if (c.dev->profile->architecture < NVML_DEVICE_ARCH_HOPPER) return NVML_ERROR_NOT_SUPPORTED;
  *memory = nvmlMemory_t{0, 0, 0};
  return NVML_SUCCESS;
}

// No simulated board runs HMM or ATS (no Grace profile, and HMM needs the open kernel modules the
// simulator does not model), nor has a chip-to-chip link: the recorded H200 answered None and
// Disabled.
nvmlReturn_t nvmlDeviceGetAddressingMode(nvmlDevice_t device, nvmlDeviceAddressingMode_v1_t* mode) {
  GW_ENTER_DEVICE(device, MigPolicy::kParent);
  if (!mode) return NVML_ERROR_INVALID_ARGUMENT;
  if (mode->version != nvmlDeviceAddressingMode_v1) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  mode->value = NVML_DEVICE_ADDRESSING_MODE_NONE;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetC2cModeInfoV(nvmlDevice_t device, nvmlC2cModeInfo_v1_t* c2cModeInfo) {
  GW_ENTER_DEVICE(device, MigPolicy::kParent);
  if (!c2cModeInfo) return NVML_ERROR_INVALID_ARGUMENT;
  c2cModeInfo->isC2cEnabled = 0;
  return NVML_SUCCESS;
}

// On an NVSwitch system each GPU registers with the fabric (a single HGX board: one clique 0, a
// cluster UUID of zeros), as the scenario's fabric faults have it at the call's time; elsewhere the
// call succeeds with the state NOT_SUPPORTED, as the recorded PCIe H200 answered (nvidia-smi: N/A).
nvmlReturn_t nvmlDeviceGetGpuFabricInfoV(nvmlDevice_t device, nvmlGpuFabricInfo_v3_t* info) {
  GW_ENTER_DEVICE(device, MigPolicy::kParent);
  if (!info) return NVML_ERROR_INVALID_ARGUMENT;
  const unsigned version = info->version;
  if (version != nvmlGpuFabricInfo_v3 && version != nvmlGpuFabricInfo_v2) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  nvmlGpuFabricInfo_v3_t out{};
  if (c.world->scenario.nvswitch_count) out = fabricAt(c.gpu->physics->faults(), 0, c.t);
  out.version = version;
  // A v2 caller's struct ends before the summary.
  std::memcpy(info, &out, version == nvmlGpuFabricInfo_v3 ? sizeof out : sizeof(nvmlGpuFabricInfo_v2_t));
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMemoryBusWidth(nvmlDevice_t device, unsigned int* busWidth) {
  GW_ENTER_DEVICE(device, MigPolicy::kParent);
  if (!busWidth) return NVML_ERROR_INVALID_ARGUMENT;
  *busWidth = c.dev->profile->memory_bus_width;
  return NVML_SUCCESS;
}

// ---------------------------------------------------------------------------------------------
// Clocks.

nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned int* clock) {
  GW_ENTER_DEVICE(device, MigPolicy::kPhysicalOnly);
  if (!clock) return NVML_ERROR_INVALID_ARGUMENT;
  if (type >= NVML_CLOCK_COUNT) return NVML_ERROR_INVALID_ARGUMENT;
  unsigned v = c.dev->physics->read(c.t, [type](const StepState& s) {
    return type == NVML_CLOCK_MEM ? s.mem_clock : type == NVML_CLOCK_VIDEO ? s.video_clock : s.sm_clock;
  });
  // Locked clocks hold the clock inside the locked range, whatever the load asks for.
  const DeviceSettings set = c.dev->readSettings();
  auto clamp = [](unsigned x, unsigned lo, unsigned hi) { return hi == 0 ? x : std::clamp(x, lo, hi); };
  if (type == NVML_CLOCK_MEM) v = clamp(v, set.mem_lock_min, set.mem_lock_max);
  if (type == NVML_CLOCK_SM || type == NVML_CLOCK_GRAPHICS) v = clamp(v, set.gpu_lock_min, set.gpu_lock_max);
  *clock = v;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned int* clock) {
  GW_ENTER_DEVICE(device, MigPolicy::kParent);
  if (!clock) return NVML_ERROR_INVALID_ARGUMENT;
  const GpuProfile& P = *c.dev->profile;
  switch (type) {
    case NVML_CLOCK_GRAPHICS:
      *clock = P.max_graphics_clock;
      return NVML_SUCCESS;
    case NVML_CLOCK_SM:
      *clock = P.max_sm_clock;
      return NVML_SUCCESS;
    case NVML_CLOCK_MEM:
      *clock = P.max_mem_clock;
      return NVML_SUCCESS;
    case NVML_CLOCK_VIDEO:
      *clock = P.max_video_clock;
      return NVML_SUCCESS;
    default:
      return NVML_ERROR_INVALID_ARGUMENT;
  }
}

nvmlReturn_t nvmlDeviceGetApplicationsClock(nvmlDevice_t device, nvmlClockType_t type, unsigned int* clockMHz) {
  GW_ENTER_DEVICE(device, MigPolicy::kParent);
  if (!clockMHz) return NVML_ERROR_INVALID_ARGUMENT;
  const DeviceSettings set = c.gpu->readSettings();
  return applicationsClock(*c.dev->profile, &set, type, clockMHz);
}

nvmlReturn_t nvmlDeviceGetDefaultApplicationsClock(nvmlDevice_t device, nvmlClockType_t type, unsigned int* clockMHz) {
  GW_ENTER_DEVICE(device, MigPolicy::kParent);
  if (!clockMHz) return NVML_ERROR_INVALID_ARGUMENT;
  return applicationsClock(*c.dev->profile, nullptr, type, clockMHz);
}

nvmlReturn_t nvmlDeviceGetClock(nvmlDevice_t device, nvmlClockType_t type, nvmlClockId_t id, unsigned int* clockMHz) {
  switch (id) {
    case NVML_CLOCK_ID_CURRENT:
      return nvmlDeviceGetClockInfo(device, type, clockMHz);
    case NVML_CLOCK_ID_APP_CLOCK_TARGET:
      return nvmlDeviceGetApplicationsClock(device, type, clockMHz);
    case NVML_CLOCK_ID_APP_CLOCK_DEFAULT:
      return nvmlDeviceGetDefaultApplicationsClock(device, type, clockMHz);
    case NVML_CLOCK_ID_CUSTOMER_BOOST_MAX:
      return nvmlDeviceGetMaxClockInfo(device, type, clockMHz);
    default: {
      GW_ENTER_DEVICE(device, MigPolicy::kParent);
      return NVML_ERROR_INVALID_ARGUMENT;
    }
  }
}

nvmlReturn_t nvmlDeviceGetPerformanceState(nvmlDevice_t device, nvmlPstates_t* pState) {
  GW_ENTER_DEVICE(device, MigPolicy::kPhysicalOnly);
  if (!pState) return NVML_ERROR_INVALID_ARGUMENT;
  *pState = sample<&StepState::pstate>(c);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t device, unsigned long long* reasons) {
  GW_ENTER_DEVICE(device, MigPolicy::kPhysicalOnly);
  if (!reasons) return NVML_ERROR_INVALID_ARGUMENT;
  *reasons = sample<&StepState::reasons>(c);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetSupportedClocksThrottleReasons(nvmlDevice_t device, unsigned long long* supported) {
  GW_ENTER_DEVICE(device, MigPolicy::kPhysicalOnly);
  if (!supported) return NVML_ERROR_INVALID_ARGUMENT;
  *supported = nvmlClocksThrottleReasonGpuIdle | nvmlClocksThrottleReasonApplicationsClocksSetting |
               nvmlClocksThrottleReasonSwPowerCap | nvmlClocksThrottleReasonHwSlowdown |
               nvmlClocksThrottleReasonSyncBoost | nvmlClocksThrottleReasonSwThermalSlowdown |
               nvmlClocksThrottleReasonHwThermalSlowdown | nvmlClocksThrottleReasonHwPowerBrakeSlowdown |
               nvmlClocksThrottleReasonDisplayClockSetting;
  return NVML_SUCCESS;
}

// ---------------------------------------------------------------------------------------------
// Power and thermal.

nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int* power) {
  GW_ENTER_DEVICE(device, MigPolicy::kPhysicalOnly);
  if (!power) return NVML_ERROR_INVALID_ARGUMENT;
  *power = rounded(sample<&StepState::power_w>(c) * 1000);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPowerManagementMode(nvmlDevice_t device, nvmlEnableState_t* mode) {
  GW_ENTER_DEVICE(device, MigPolicy::kPhysicalOnly);
  if (!mode) return NVML_ERROR_INVALID_ARGUMENT;
  *mode = NVML_FEATURE_ENABLED;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPowerManagementLimit(nvmlDevice_t device, unsigned int* limit) {
  GW_ENTER_DEVICE(device, MigPolicy::kPhysicalOnly);
  if (!limit) return NVML_ERROR_INVALID_ARGUMENT;
  *limit = c.dev->physics->powerLimitMwAt(c.t);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPowerManagementLimitConstraints(nvmlDevice_t device, unsigned int* minLimit,
                                                          unsigned int* maxLimit) {
  GW_ENTER_DEVICE(device, MigPolicy::kPhysicalOnly);
  if (!minLimit || !maxLimit) return NVML_ERROR_INVALID_ARGUMENT;
  *minLimit = c.dev->profile->power_min_mw;
  *maxLimit = c.dev->profile->power_max_mw;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPowerManagementDefaultLimit(nvmlDevice_t device, unsigned int* defaultLimit) {
  GW_ENTER_DEVICE(device, MigPolicy::kPhysicalOnly);
  if (!defaultLimit) return NVML_ERROR_INVALID_ARGUMENT;
  *defaultLimit = c.dev->profile->power_default_mw;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device, unsigned int* limit) {
  return nvmlDeviceGetPowerManagementLimit(device, limit);
}

nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t device, unsigned long long* energy) {
  GW_ENTER_DEVICE(device, MigPolicy::kPhysicalOnly);
  if (!energy) return NVML_ERROR_INVALID_ARGUMENT;
  *energy = c.dev->physics->read(c.t, [t = c.t](const StepState& s) {
    // Interpolated within the step, so the counter moves between steps too.
    double into_step = std::max(0.0, t - static_cast<double>(s.step) * kStepSeconds);
    return static_cast<unsigned long long>(s.energy_mj + s.power_w * into_step * 1000);
  });
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, nvmlTemperatureSensors_t sensor, unsigned int* temp) {
  GW_ENTER_DEVICE(device, MigPolicy::kPhysicalOnly);
  if (!temp || sensor != NVML_TEMPERATURE_GPU) return NVML_ERROR_INVALID_ARGUMENT;
  *temp = rounded(sample<&StepState::temp>(c));
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetTemperatureThreshold(nvmlDevice_t device, nvmlTemperatureThresholds_t type,
                                               unsigned int* temp) {
  GW_ENTER_DEVICE(device, MigPolicy::kPhysicalOnly);
  if (!temp) return NVML_ERROR_INVALID_ARGUMENT;
  const GpuProfile& P = *c.dev->profile;
  switch (type) {
    case NVML_TEMPERATURE_THRESHOLD_SHUTDOWN:
      *temp = P.temp_shutdown;
      return NVML_SUCCESS;
    case NVML_TEMPERATURE_THRESHOLD_SLOWDOWN:
      *temp = P.temp_slowdown;
      return NVML_SUCCESS;
    case NVML_TEMPERATURE_THRESHOLD_MEM_MAX:
      if (!P.hbm) return NVML_ERROR_NOT_SUPPORTED;
      *temp = P.temp_mem_max;
      return NVML_SUCCESS;
    case NVML_TEMPERATURE_THRESHOLD_GPU_MAX:
      *temp = P.temp_gpu_max;
      return NVML_SUCCESS;
    default:
      return NVML_ERROR_INVALID_ARGUMENT;
  }
}

nvmlReturn_t nvmlDeviceGetNumFans(nvmlDevice_t device, unsigned int* numFans) {
  GW_ENTER_DEVICE(device, MigPolicy::kPhysicalOnly);
  if (!numFans) return NVML_ERROR_INVALID_ARGUMENT;
  if (c.dev->profile->fans == 0) return NVML_ERROR_NOT_SUPPORTED;
  *numFans = c.dev->profile->fans;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetFanSpeed_v2(nvmlDevice_t device, unsigned int fan, unsigned int* speed) {
  GW_ENTER_DEVICE(device, MigPolicy::kPhysicalOnly);
  if (!speed) return NVML_ERROR_INVALID_ARGUMENT;
  if (c.dev->profile->fans == 0) return NVML_ERROR_NOT_SUPPORTED;  // SXM and passive boards
  if (fan >= c.dev->profile->fans) return NVML_ERROR_INVALID_ARGUMENT;
  *speed = sample<&StepState::fan>(c);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetFanSpeed(nvmlDevice_t device, unsigned int* speed) {
  return nvmlDeviceGetFanSpeed_v2(device, 0, speed);
}

// ---------------------------------------------------------------------------------------------
// Utilisation.

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t* utilization) {
  GW_ENTER_DEVICE(device, MigPolicy::kPhysicalOnly);
  if (!utilization) return NVML_ERROR_INVALID_ARGUMENT;
  if (c.dev->mig_current.load()) return NVML_ERROR_NOT_SUPPORTED;  // as on a real GPU in MIG mode
  *utilization = c.dev->physics->read(c.t, [](const StepState& s) {
    return nvmlUtilization_t{rounded(s.util_gpu), rounded(s.util_mem)};
  });
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetEncoderUtilization(nvmlDevice_t device, unsigned int* utilization,
                                             unsigned int* samplingPeriodUs) {
  GW_ENTER_DEVICE(device, MigPolicy::kPhysicalOnly);
  if (!utilization || !samplingPeriodUs) return NVML_ERROR_INVALID_ARGUMENT;
  *utilization = 0;
  *samplingPeriodUs = 167000;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetDecoderUtilization(nvmlDevice_t device, unsigned int* utilization,
                                             unsigned int* samplingPeriodUs) {
  return nvmlDeviceGetEncoderUtilization(device, utilization, samplingPeriodUs);
}

// No workload of the simulator decodes JPEG or computes optical flow: idle engines, as the
// recorded H200 answered (0 %).
nvmlReturn_t nvmlDeviceGetJpgUtilization(nvmlDevice_t device, unsigned int* utilization,
                                         unsigned int* samplingPeriodUs) {
  return nvmlDeviceGetEncoderUtilization(device, utilization, samplingPeriodUs);
}

nvmlReturn_t nvmlDeviceGetOfaUtilization(nvmlDevice_t device, unsigned int* utilization,
                                         unsigned int* samplingPeriodUs) {
  return nvmlDeviceGetEncoderUtilization(device, utilization, samplingPeriodUs);
}

// ---------------------------------------------------------------------------------------------
// Modes and settings.

// Accounting is off with the driver's default buffer of 4000 processes (a real H200 on 580.159.04).
nvmlReturn_t nvmlDeviceGetAccountingMode(nvmlDevice_t device, nvmlEnableState_t* mode) {
  GW_ENTER_DEVICE(device, MigPolicy::kParent);
  if (!mode) return NVML_ERROR_INVALID_ARGUMENT;
  *mode = NVML_FEATURE_DISABLED;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetAccountingBufferSize(nvmlDevice_t device, unsigned int* bufferSize) {
  GW_ENTER_DEVICE(device, MigPolicy::kParent);
  if (!bufferSize) return NVML_ERROR_INVALID_ARGUMENT;
  *bufferSize = 4000;
  return NVML_SUCCESS;
}

// GSP firmware runs Hopper by default (the recorded H200 answered Enabled/Enabled); the older
// boards of the simulator run without it, as the proprietary module of their drivers does.
nvmlReturn_t nvmlDeviceGetGspFirmwareMode(nvmlDevice_t device, unsigned int* isEnabled, unsigned int* defaultMode) {
  GW_ENTER_DEVICE(device, MigPolicy::kParent);
  if (!isEnabled || !defaultMode) return NVML_ERROR_INVALID_ARGUMENT;
  const bool gsp = c.dev->profile->architecture >= NVML_DEVICE_ARCH_HOPPER;
  *isEnabled = gsp ? 1 : 0;
  *defaultMode = gsp ? 1 : 0;
  return NVML_SUCCESS;
}

// The GSP firmware ships with the driver: its version is the driver's (recorded: 580.159.04 both).
nvmlReturn_t nvmlDeviceGetGspFirmwareVersion(nvmlDevice_t device, char* version) {
  GW_ENTER_DEVICE(device, MigPolicy::kParent);
  if (!version) return NVML_ERROR_INVALID_ARGUMENT;
  if (c.dev->profile->architecture < NVML_DEVICE_ARCH_HOPPER) return NVML_ERROR_NOT_SUPPORTED;
  return copyString(version, NVML_GSP_FIRMWARE_VERSION_BUF_SIZE, c.world->scenario.driver_version);
}

nvmlReturn_t nvmlDeviceGetVirtualizationMode(nvmlDevice_t device, nvmlGpuVirtualizationMode_t* pVirtualMode) {
  GW_ENTER_DEVICE(device, MigPolicy::kParent);
  if (!pVirtualMode) return NVML_ERROR_INVALID_ARGUMENT;
  *pVirtualMode = c.world->scenario.virtualization;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t device, nvmlEnableState_t* mode) {
  GW_ENTER_DEVICE(device, MigPolicy::kParent);
  if (!mode) return NVML_ERROR_INVALID_ARGUMENT;
  *mode = c.dev->persistence.load() ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetComputeMode(nvmlDevice_t device, nvmlComputeMode_t* mode) {
  GW_ENTER_DEVICE(device, MigPolicy::kParent);
  if (!mode) return NVML_ERROR_INVALID_ARGUMENT;
  *mode = c.gpu->readSettings().compute_mode;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetDisplayActive(nvmlDevice_t device, nvmlEnableState_t* isActive) {
  GW_ENTER_DEVICE(device, MigPolicy::kPhysicalOnly);
  if (!isActive) return NVML_ERROR_INVALID_ARGUMENT;
  *isActive = NVML_FEATURE_DISABLED;  // compute nodes run headless
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetDisplayMode(nvmlDevice_t device, nvmlEnableState_t* display) {
  GW_ENTER_DEVICE(device, MigPolicy::kPhysicalOnly);
  if (!display) return NVML_ERROR_INVALID_ARGUMENT;
  *display = NVML_FEATURE_DISABLED;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceSetPowerManagementLimit(nvmlDevice_t device, unsigned int limit) {
  GW_ENTER_DEVICE(device, MigPolicy::kPhysicalOnly);
  if (!mayChangeSettings(c)) return NVML_ERROR_NO_PERMISSION;
  const GpuProfile& P = *c.dev->profile;
  if (limit < P.power_min_mw || limit > P.power_max_mw) return NVML_ERROR_INVALID_ARGUMENT;
  c.dev->physics->setPowerLimit(c.t, limit);
  return saved(c);
}

nvmlReturn_t nvmlDeviceSetPersistenceMode(nvmlDevice_t device, nvmlEnableState_t mode) {
  GW_ENTER_DEVICE(device, MigPolicy::kPhysicalOnly);
  if (!mayChangeSettings(c)) return NVML_ERROR_NO_PERMISSION;
  if (mode != NVML_FEATURE_ENABLED && mode != NVML_FEATURE_DISABLED) return NVML_ERROR_INVALID_ARGUMENT;
  c.dev->persistence.store(mode == NVML_FEATURE_ENABLED);
  return saved(c);
}

nvmlReturn_t nvmlDeviceSetGpuLockedClocks(nvmlDevice_t device, unsigned int minGpuClockMHz,
                                          unsigned int maxGpuClockMHz) {
  GW_ENTER_DEVICE(device, MigPolicy::kPhysicalOnly);
  const GpuProfile& P = *c.dev->profile;
  return lockClocks(c, minGpuClockMHz, maxGpuClockMHz, P.idle_sm_clock, P.max_graphics_clock,
                    &DeviceSettings::gpu_lock_min, &DeviceSettings::gpu_lock_max);
}

nvmlReturn_t nvmlDeviceResetGpuLockedClocks(nvmlDevice_t device) {
  GW_ENTER_DEVICE(device, MigPolicy::kPhysicalOnly);
  return lockClocks(c, 0, 0, 0, 0, &DeviceSettings::gpu_lock_min, &DeviceSettings::gpu_lock_max);
}

nvmlReturn_t nvmlDeviceSetMemoryLockedClocks(nvmlDevice_t device, unsigned int minMemClockMHz,
                                             unsigned int maxMemClockMHz) {
  GW_ENTER_DEVICE(device, MigPolicy::kPhysicalOnly);
  const GpuProfile& P = *c.dev->profile;
  return lockClocks(c, minMemClockMHz, maxMemClockMHz, P.idle_mem_clock, P.max_mem_clock, &DeviceSettings::mem_lock_min,
                    &DeviceSettings::mem_lock_max);
}

nvmlReturn_t nvmlDeviceResetMemoryLockedClocks(nvmlDevice_t device) {
  GW_ENTER_DEVICE(device, MigPolicy::kPhysicalOnly);
  return lockClocks(c, 0, 0, 0, 0, &DeviceSettings::mem_lock_min, &DeviceSettings::mem_lock_max);
}

// The supported combinations: the board's memory clocks (idle or full) with a graphics clock from
// the lowest to the highest the board runs.
nvmlReturn_t nvmlDeviceSetApplicationsClocks(nvmlDevice_t device, unsigned int memClockMHz,
                                             unsigned int graphicsClockMHz) {
  GW_ENTER_DEVICE(device, MigPolicy::kPhysicalOnly);
  if (!mayChangeSettings(c)) return NVML_ERROR_NO_PERMISSION;
  const GpuProfile& P = *c.dev->profile;
  if ((memClockMHz != P.idle_mem_clock && memClockMHz != P.max_mem_clock && memClockMHz != P.app_mem_clock) ||
      graphicsClockMHz < P.idle_sm_clock || graphicsClockMHz > P.max_graphics_clock)
    return NVML_ERROR_INVALID_ARGUMENT;
  return changeSettings(c, [&](DeviceSettings& s) {
    s.app_mem = memClockMHz;
    s.app_graphics = graphicsClockMHz;
  });
}

nvmlReturn_t nvmlDeviceResetApplicationsClocks(nvmlDevice_t device) {
  GW_ENTER_DEVICE(device, MigPolicy::kPhysicalOnly);
  if (!mayChangeSettings(c)) return NVML_ERROR_NO_PERMISSION;
  return changeSettings(c, [](DeviceSettings& s) { s.app_mem = s.app_graphics = 0; });
}

nvmlReturn_t nvmlDeviceSetComputeMode(nvmlDevice_t device, nvmlComputeMode_t mode) {
  GW_ENTER_DEVICE(device, MigPolicy::kPhysicalOnly);
  if (!mayChangeSettings(c)) return NVML_ERROR_NO_PERMISSION;
  // EXCLUSIVE_THREAD went away with CUDA 8; today's drivers refuse it.
  if (mode == NVML_COMPUTEMODE_EXCLUSIVE_THREAD) return NVML_ERROR_NOT_SUPPORTED;
  if (mode > NVML_COMPUTEMODE_EXCLUSIVE_PROCESS) return NVML_ERROR_INVALID_ARGUMENT;
  return changeSettings(c, [&](DeviceSettings& s) { s.compute_mode = mode; });
}

nvmlReturn_t nvmlDeviceSetEccMode(nvmlDevice_t device, nvmlEnableState_t ecc) {
  GW_ENTER_DEVICE(device, MigPolicy::kPhysicalOnly);
  if (!mayChangeSettings(c)) return NVML_ERROR_NO_PERMISSION;
  if (!c.dev->profile->ecc_supported) return NVML_ERROR_NOT_SUPPORTED;
  if (ecc != NVML_FEATURE_ENABLED && ecc != NVML_FEATURE_DISABLED) return NVML_ERROR_INVALID_ARGUMENT;
  return changeSettings(c, [&](DeviceSettings& s) { s.ecc_pending = ecc == NVML_FEATURE_ENABLED; });
}

}  // extern "C"
