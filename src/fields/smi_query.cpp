#include "fields/smi_query.h"

#include <array>
#include <cstdio>
#include <unordered_map>

namespace gw::fields::smi {
namespace {

using nvml::Device;
using P = Property;

Result<std::string> notSupported(const char* what) { return nvml::nvmlError(NVML_ERROR_NOT_SUPPORTED, what); }
std::string hex(const char* fmt, unsigned long long v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}
Result<std::string> enabledText(const Result<bool>& r) {
  if (!r) return r.status();
  return std::string(*r ? "Enabled" : "Disabled");
}
Result<std::string> number(const Result<unsigned>& r) {
  if (!r) return r.status();
  return std::to_string(*r);
}
Result<std::string> watts(const Result<unsigned>& mw) {
  if (!mw) return mw.status();
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", *mw / 1000.0);
  return std::string(buf);
}

// A property gpuwarden does not read (no NVML call of ours answers it yet: vGPU, power
// smoothing, encoder sessions…): printed as nvidia-smi prints an unsupported one, never invented.
constexpr TextReader kNotRead = [](const ReadContext&) { return notSupported("not read by gpuwarden"); };

constexpr TextReader kTimestamp = [](const ReadContext& c) -> Result<std::string> {
  if (c.timestamp.empty()) return notSupported("timestamp");
  return std::string(c.timestamp);
};
constexpr TextReader kCount = [](const ReadContext& c) { return number(c.session.deviceCount()); };
constexpr TextReader kPciDomain = [](const ReadContext& c) -> Result<std::string> {
  auto p = c.device.pciInfo();
  if (!p) return p.status();
  return hex("0x%04llX", p->domain);
};
constexpr TextReader kPciBus = [](const ReadContext& c) -> Result<std::string> {
  auto p = c.device.pciInfo();
  if (!p) return p.status();
  return hex("0x%02llX", p->bus);
};
constexpr TextReader kPciDevice = [](const ReadContext& c) -> Result<std::string> {
  auto p = c.device.pciInfo();
  if (!p) return p.status();
  return hex("0x%02llX", p->device);
};
constexpr TextReader kPciSubDevice = [](const ReadContext& c) -> Result<std::string> {
  auto p = c.device.pciInfo();
  if (!p) return p.status();
  return hex("0x%08llX", p->subsystem_id);
};
constexpr TextReader kPcieGen = [](const ReadContext& c) { return number(c.device.pcieGen()); };
// nvidia-smi 580 no longer reads the display mode: it prints NVML's "deprecated" sentence
// (recorded on a real 580.159.04, whose NVML still answered the call).
constexpr TextReader kDisplayMode = [](const ReadContext& c) -> Result<std::string> {
  if (nvml::driverMajor(c.session.driverVersion().value_or("")) >= 580)
    return nvml::nvmlError(NVML_ERROR_DEPRECATED, "display_mode");
  return enabledText(c.device.displayMode());
};
constexpr TextReader kDisplayAttached = [](const ReadContext& c) -> Result<std::string> {
  auto r = c.device.displayMode();
  if (!r) return r.status();
  return std::string(*r ? "Yes" : "No");
};
constexpr TextReader kDisplayActive = [](const ReadContext& c) { return enabledText(c.device.displayActive()); };
// Linux has one driver model: nvidia-smi documents these as always N/A there.
constexpr TextReader kDriverModel = [](const ReadContext&) { return notSupported("driver model (Windows only)"); };
constexpr TextReader kInforomImage = [](const ReadContext& c) { return c.device.inforomImageVersion(); };
constexpr TextReader kInforomOem = [](const ReadContext& c) { return c.device.inforomVersion(NVML_INFOROM_OEM); };
constexpr TextReader kInforomEcc = [](const ReadContext& c) { return c.device.inforomVersion(NVML_INFOROM_ECC); };
constexpr TextReader kInforomPower = [](const ReadContext& c) { return c.device.inforomVersion(NVML_INFOROM_POWER); };
constexpr TextReader kInforomChecksum = [](const ReadContext& c) -> Result<std::string> {
  Status s = c.device.validateInforom();
  if (!s.ok()) return s;
  return std::string("valid");
};
constexpr TextReader kReasonsSupported = [](const ReadContext& c) -> Result<std::string> {
  auto r = c.device.supportedClockEventReasons();
  if (!r) return r.status();
  return hex("0x%016llX", *r);
};
// nvml.h's nvmlClocksEventReason* bits.
template <unsigned long long Bit>
Result<std::string> reasonActive(const ReadContext& c) {
  auto r = c.device.clockEventReasons();
  if (!r) return r.status();
  return std::string((*r & Bit) ? "Active" : "Not Active");
}
constexpr TextReader kComputeMode = [](const ReadContext& c) -> Result<std::string> {
  auto r = c.device.computeMode();
  if (!r) return r.status();
  switch (*r) {
    case NVML_COMPUTEMODE_DEFAULT:
      return std::string("Default");
    case NVML_COMPUTEMODE_EXCLUSIVE_THREAD:
      return std::string("Exclusive_Thread");
    case NVML_COMPUTEMODE_PROHIBITED:
      return std::string("Prohibited");
    case NVML_COMPUTEMODE_EXCLUSIVE_PROCESS:
      return std::string("Exclusive_Process");
    default:
      return std::string("Unknown");
  }
};
constexpr TextReader kEccPending = [](const ReadContext& c) -> Result<std::string> {
  auto r = c.device.eccModes();
  if (!r) return r.status();
  return std::string(r->second ? "Enabled" : "Disabled");
};
template <nvmlMemoryErrorType_t T, nvmlEccCounterType_t C, nvmlMemoryLocation_t L>
Result<std::string> eccAt(const ReadContext& c) {
  auto r = c.device.memoryErrorCounter(T, C, L);
  if (!r) return r.status();
  return std::to_string(*r);
}
// NVML's margin temperature: degrees left before the GPU reaches its slowdown threshold (negative
// past it), which is what nvidia-smi prints, not the threshold itself.
// The margin is to the GPU's maximum operating temperature, not to its slowdown threshold: a
// real H200 at 37 C answered 50 (87 - 37; slowdown is 89) on driver 580.159.04.
constexpr TextReader kTlimitMargin = [](const ReadContext& c) -> Result<std::string> {
  auto max_operating = c.device.temperatureThreshold(NVML_TEMPERATURE_THRESHOLD_GPU_MAX);
  if (!max_operating) return max_operating.status();
  auto temp = c.device.temperature();
  if (!temp) return temp.status();
  return std::to_string(static_cast<long long>(*max_operating) - static_cast<long long>(*temp));
};
constexpr TextReader kPcieGpuMaxGen = [](const ReadContext& c) { return number(c.device.pcieGpuMaxGen()); };
constexpr TextReader kAccountingMode = [](const ReadContext& c) { return enabledText(c.device.accountingMode()); };
constexpr TextReader kAccountingBuffer = [](const ReadContext& c) { return number(c.device.accountingBufferSize()); };
constexpr TextReader kGspCurrent = [](const ReadContext& c) -> Result<std::string> {
  auto m = c.device.gspFirmwareMode();
  if (!m) return m.status();
  return std::string(m->enabled ? "Enabled" : "Disabled");
};
constexpr TextReader kGspDefault = [](const ReadContext& c) -> Result<std::string> {
  auto m = c.device.gspFirmwareMode();
  if (!m) return m.status();
  return std::string(m->by_default ? "Enabled" : "Disabled");
};
constexpr TextReader kJpegUtil = [](const ReadContext& c) { return number(c.device.jpegUtilization()); };
constexpr TextReader kOfaUtil = [](const ReadContext& c) { return number(c.device.ofaUtilization()); };
constexpr TextReader kPowerManagement = [](const ReadContext& c) {
  return enabledText(c.device.powerManagementMode());
};
// NVML's power usage is the one-second average on Ampere and newer (nvidia-smi's power.draw);
// the instantaneous reading needs a field id gpuwarden does not declare.
constexpr TextReader kPowerAverage = [](const ReadContext& c) { return watts(c.device.powerUsageMw()); };
constexpr TextReader kPowerInstant = [](const ReadContext& c) -> Result<std::string> {
  nvmlFieldValue_t v{};
  v.fieldId = NVML_FI_DEV_POWER_INSTANT;
  if (Status s = c.device.fieldValues(&v, 1); !s.ok()) return s;
  if (v.nvmlReturn != NVML_SUCCESS) return nvml::nvmlError(v.nvmlReturn, "nvmlDeviceGetFieldValues(POWER_INSTANT)");
  return watts(Result<unsigned>(v.value.uiVal));
};
// Confidential computing's protected memory, in whole MiB as nvidia-smi prints memory.
template <std::uint64_t nvml::MemoryInfo::*part>
constexpr TextReader kProtectedMemory = [](const ReadContext& c) -> Result<std::string> {
  auto m = c.device.protectedMemory();
  if (!m) return m.status();
  return std::to_string((*m).*part / (1024 * 1024));
};
// The recovery the driver asks for, through the catalog's reader (the agent samples the same field).
constexpr TextReader kRecoveryAction = [](const ReadContext& c) -> Result<std::string> {
  auto v = findByKey("recovery_action")->read_number(c.device);
  if (!v) return v.status();
  return std::string(nvml::recoveryActionName(static_cast<unsigned>(*v)));
};
constexpr TextReader kAddressingMode = [](const ReadContext& c) -> Result<std::string> {
  auto m = c.device.addressingMode();
  if (!m) return m.status();
  return std::string(nvml::addressingModeName(*m));
};
constexpr TextReader kC2cMode = [](const ReadContext& c) { return enabledText(c.device.c2cEnabled()); };
// The fabric registration. A GPU on no NVSwitch fabric answers with the state NOT_SUPPORTED, which
// nvidia-smi prints as a bare N/A (recorded on a PCIe H200), unlike an unsupported call's [N/A].
// The words past N/A are NVIDIA's documented values; no NVSwitch system's output was recorded.
template <class F>
Result<std::string> onFabric(const ReadContext& c, bool completed_only, F text) {
  const auto& f = c.fabricInfo();
  if (!f) return f.status();
  if (f->state == NVML_GPU_FABRIC_STATE_NOT_SUPPORTED ||
      (completed_only && f->state != NVML_GPU_FABRIC_STATE_COMPLETED))
    return std::string("N/A");
  return text(*f);
}
constexpr TextReader kFabricState = [](const ReadContext& c) {
  return onFabric(c, false,
                  [](const nvmlGpuFabricInfo_v3_t& f) { return std::string(nvml::fabricStateName(f.state)); });
};
constexpr TextReader kFabricStatus = [](const ReadContext& c) {
  return onFabric(c, true, [&](const nvmlGpuFabricInfo_v3_t& f) {
    const auto words = c.session.api().nvmlErrorString;
    const char* s = words ? words(f.status) : nullptr;
    return std::string(s && *s ? s : f.status == NVML_SUCCESS ? "Success" : "Unknown Error");
  });
};
constexpr TextReader kFabricClique = [](const ReadContext& c) {
  return onFabric(c, true, [](const nvmlGpuFabricInfo_v3_t& f) { return std::to_string(f.cliqueId); });
};
constexpr TextReader kFabricCluster = [](const ReadContext& c) {
  return onFabric(c, true, [](const nvmlGpuFabricInfo_v3_t& f) {
    std::string out;
    for (std::size_t i = 0; i < NVML_GPU_FABRIC_UUID_LEN; ++i) {
      if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
      char b[3];
      std::snprintf(b, sizeof b, "%02x", f.clusterUuid[i]);
      out += b;
    }
    return out;
  });
};
constexpr TextReader kFabricSummary = [](const ReadContext& c) {
  return onFabric(c, false, [](const nvmlGpuFabricInfo_v3_t& f) {
    return std::string(nvml::fabricHealthSummaryName(f.healthSummary));
  });
};
// One yes/no condition of the health mask: its TRUE and FALSE words, N/A when the driver does not say.
template <unsigned shift, unsigned width>
constexpr TextReader kFabricCondition = [](const ReadContext& c) {
  return onFabric(c, false, [](const nvmlGpuFabricInfo_v3_t& f) {
    const unsigned v = nvml::fabricHealthField(f.healthMask, shift, width);
    // Every condition's TRUE is 1 and FALSE 2 (NVML_GPU_FABRIC_HEALTH_MASK_*_TRUE / _FALSE).
    if (shift == NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_DEGRADED_BW)
      return std::string(v == 1 ? "Degraded" : v == 2 ? "Full" : "N/A");
    return std::string(v == 1 ? "True" : v == 2 ? "False" : "N/A");
  });
};
constexpr TextReader kFabricConfiguration = [](const ReadContext& c) {
  return onFabric(c, false, [](const nvmlGpuFabricInfo_v3_t& f) {
    switch (nvml::fabricHealthField(f.healthMask, NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_INCORRECT_CONFIGURATION,
                                    NVML_GPU_FABRIC_HEALTH_MASK_WIDTH_INCORRECT_CONFIGURATION)) {
      case NVML_GPU_FABRIC_HEALTH_MASK_INCORRECT_CONFIGURATION_NONE:
        return std::string("None");
      case NVML_GPU_FABRIC_HEALTH_MASK_INCORRECT_CONFIGURATION_INCORRECT_SYSGUID:
        return std::string("Incorrect SysGUID");
      case NVML_GPU_FABRIC_HEALTH_MASK_INCORRECT_CONFIGURATION_INCORRECT_CHASSIS_SN:
        return std::string("Incorrect Chassis Serial Number");
      case NVML_GPU_FABRIC_HEALTH_MASK_INCORRECT_CONFIGURATION_NO_PARTITION:
        return std::string("No Partition");
      case NVML_GPU_FABRIC_HEALTH_MASK_INCORRECT_CONFIGURATION_INSUFFICIENT_NVLINKS:
        return std::string("Insufficient NVLinks");
      default:
        return std::string("N/A");
    }
  });
};
// Where the partition bit lives is not in the headers gpuwarden reads: not read, in the fabric's N/A.
constexpr TextReader kFabricPartition = [](const ReadContext& c) {
  return onFabric(c, false, [](const nvmlGpuFabricInfo_v3_t&) { return std::string("N/A"); });
};
// One count of nvmlDeviceGetSramEccErrorStatus.
template <unsigned long long nvmlEccSramErrorStatus_v1_t::*count>
constexpr TextReader kSram = [](const ReadContext& c) -> Result<std::string> {
  auto s = c.device.sramEccStatus();
  if (!s) return s.status();
  return std::to_string((*s).*count);
};
constexpr TextReader kSramThreshold = [](const ReadContext& c) -> Result<std::string> {
  auto s = c.device.sramEccStatus();
  if (!s) return s.status();
  return std::string(s->bThresholdExceeded ? "Yes" : "No");
};
// One level of the row remapper's bank histogram.
template <unsigned nvmlRowRemapperHistogramValues_t::*level>
constexpr TextReader kRemapBanks = [](const ReadContext& c) -> Result<std::string> {
  auto h = c.device.rowRemapperHistogram();
  if (!h) return h.status();
  return std::to_string((*h).*level);
};
constexpr TextReader kMaxGrClock = [](const ReadContext& c) { return number(c.device.maxClock(NVML_CLOCK_GRAPHICS)); };
constexpr TextReader kDefaultAppGr = [](const ReadContext& c) {
  return number(c.device.defaultAppClock(NVML_CLOCK_GRAPHICS));
};
constexpr TextReader kDefaultAppMem = [](const ReadContext& c) {
  return number(c.device.defaultAppClock(NVML_CLOCK_MEM));
};
constexpr TextReader kMigPending = [](const ReadContext& c) -> Result<std::string> {
  auto r = c.device.migModes();
  if (!r) return r.status();
  return std::string(r->second ? "Enabled" : "Disabled");
};

constexpr auto YesNo = Style::YesNo;

// nvidia-smi --help-query-gpu's order (driver 580.173.02), plus reset_status.* that R535-R570
// list and R580 replaced with gpu_recovery_action. Meanings are ours, in nvidia-smi's sense.
const std::array kGpu = {
    P{"timestamp", "", "", "When the query was made, as YYYY/MM/DD HH:MM:SS.msec", kTimestamp, Style::Value, false},
    P{"driver_version", "", "", "Version of the installed NVIDIA display driver", nullptr, Style::Value, false},
    P{"vgpu_driver_capability.heterogenous_multivGPU", "", "", "Whether the driver supports heterogeneous multi-vGPU",
      kNotRead},
    P{"count", "", "", "Number of NVIDIA GPUs in the system", kCount, Style::Value, false},
    P{"name", "gpu_name", "", "Official product name of the GPU"},
    P{"serial", "gpu_serial", "", "Serial number printed on the board"},
    P{"uuid", "gpu_uuid", "", "Globally unique immutable identifier of the GPU"},
    P{"pci.bus_id", "gpu_bus_id", "", "PCI bus id as domain:bus:device.function, in hex"},
    P{"pci.domain", "", "", "PCI domain number, in hex", kPciDomain},
    P{"pci.bus", "", "", "PCI bus number, in hex", kPciBus},
    P{"pci.device", "", "", "PCI device number, in hex", kPciDevice},
    P{"pci.baseClass", "", "", "PCI base class code, in hex", kNotRead},
    P{"pci.subClass", "", "", "PCI sub class code, in hex", kNotRead},
    P{"pci.device_id", "", "", "PCI device id and vendor id, in hex"},
    P{"pci.sub_device_id", "", "", "PCI subsystem id, in hex", kPciSubDevice},
    P{"vgpu_device_capability.fractional_multiVgpu", "", "", "Fractional vGPU profiles usable in multi-vGPU", kNotRead},
    P{"vgpu_device_capability.heterogeneous_timeSlice_profile", "", "",
      "Timesliced vGPU profiles of different types may run together", kNotRead},
    P{"vgpu_device_capability.heterogeneous_timeSlice_sizes", "", "",
      "Timesliced vGPU profiles of different frame buffer sizes may run together", kNotRead},
    P{"vgpu_device_capability.homogeneous_placements", "", "",
      "Placements of timesliced vGPU profiles of one frame buffer size are reported", kNotRead},
    P{"vgpu_device_capability.mig_timeSlicing", "", "", "The GPU supports timesliced vGPU on MIG", kNotRead},
    P{"vgpu_device_capability.mig_timeSlicing_mode", "", "", "MIG timesliced mode is enabled", kNotRead},
    P{"pcie.link.gen.current", "", "", "Current PCIe link generation (deprecated: pcie.link.gen.gpucurrent)"},
    P{"pcie.link.gen.gpucurrent", "", "", "Current PCIe link generation; may drop while the GPU is idle", kPcieGen},
    P{"pcie.link.gen.max", "", "", "Highest PCIe link generation this GPU and system allow"},
    P{"pcie.link.gen.gpumax", "", "", "Highest PCIe link generation the GPU supports", kPcieGpuMaxGen},
    P{"pcie.link.gen.hostmax", "", "", "Highest PCIe link generation the GPU's root port supports", kNotRead},
    P{"pcie.link.width.current", "", "", "Current PCIe link width; may drop while the GPU is idle"},
    P{"pcie.link.width.max", "", "", "Widest PCIe link this GPU and system allow"},
    P{"index", "", "", "Zero-based index of the GPU; can change at each boot"},
    P{"display_mode", "", "", "Deprecated: a display is connected (Enabled/Disabled)", kDisplayMode},
    P{"display_attached", "", "", "A physical display is connected to one of the GPU's connectors (Yes/No)",
      kDisplayAttached},
    P{"display_active", "", "", "A display is initialised on the GPU (Enabled/Disabled)", kDisplayActive},
    P{"persistence_mode", "", "", "Persistence mode keeps the driver loaded without clients (Enabled/Disabled)"},
    P{"addressing_mode", "", "", "System memory addressing from the GPU: HMM, ATS or None", kAddressingMode},
    P{"accounting.mode", "", "", "Per-process accounting is enabled (Enabled/Disabled)", kAccountingMode},
    P{"accounting.buffer_size", "", "", "How many processes the accounting buffer keeps", kAccountingBuffer},
    P{"driver_model.current", "", "", "Windows driver model in use; always N/A on Linux", kDriverModel},
    P{"driver_model.pending", "", "", "Windows driver model after the next reboot; always N/A on Linux", kDriverModel},
    P{"vbios_version", "", "", "BIOS of the GPU board"},
    P{"inforom.img", "inforom.image", "", "Global version of the infoROM image", kInforomImage},
    P{"inforom.oem", "", "", "Version of the infoROM's OEM configuration data", kInforomOem},
    P{"inforom.ecc", "", "", "Version of the infoROM's ECC recording data", kInforomEcc},
    P{"inforom.pwr", "inforom.power", "", "Version of the infoROM's power management data", kInforomPower},
    P{"inforom.checksum_validation", "", "", "Result of validating the infoROM's checksum", kInforomChecksum},
    P{"gpu_recovery_action", "", "", "Recovery the driver recommends after an error (None, GPU reset, node reboot…)",
      kRecoveryAction},
    P{"reset_status.reset_required", "", "", "A GPU reset is required (R535-R570; later gpu_recovery_action)",
      kNotRead},
    P{"reset_status.drain_and_reset_recommended", "", "",
      "A drain and GPU reset is recommended (R535-R570; later gpu_recovery_action)", kNotRead},
    P{"gom.current", "gpu_operation_mode.current", "", "GPU operation mode in use", kNotRead},
    P{"gom.pending", "gpu_operation_mode.pending", "", "GPU operation mode after the next reboot", kNotRead},
    P{"fan.speed", "", "", "Intended fan speed, percent of the maximum"},
    P{"pstate", "", "", "Performance state, P0 (maximum) to P12 (minimum)"},
    P{"clocks_event_reasons.supported", "clocks_throttle_reasons.supported", "",
      "Bit mask of the clock event reasons the GPU reports", kReasonsSupported},
    P{"clocks_event_reasons.active", "clocks_throttle_reasons.active", "",
      "Bit mask of the clock event reasons holding clocks down now"},
    P{"clocks_event_reasons.gpu_idle", "clocks_throttle_reasons.gpu_idle", "",
      "Nothing runs and the clocks drop to idle (Active/Not Active)", reasonActive<0x1>},
    P{"clocks_event_reasons.applications_clocks_setting", "clocks_throttle_reasons.applications_clocks_setting", "",
      "Clocks are limited by the applications clocks setting", reasonActive<0x2>},
    P{"clocks_event_reasons.sw_power_cap", "clocks_throttle_reasons.sw_power_cap", "",
      "The software power cap holds clocks below the requested ones", reasonActive<0x4>},
    P{"clocks_event_reasons.hw_slowdown", "clocks_throttle_reasons.hw_slowdown", "",
      "Hardware slowdown (clocks halved or worse) for temperature or an external power brake", reasonActive<0x8>},
    P{"clocks_event_reasons.hw_thermal_slowdown", "clocks_throttle_reasons.hw_thermal_slowdown", "",
      "Hardware slowdown because the GPU is too hot", reasonActive<0x40>},
    P{"clocks_event_reasons.hw_power_brake_slowdown", "clocks_throttle_reasons.hw_power_brake_slowdown", "",
      "Hardware slowdown because an external power brake is asserted", reasonActive<0x80>},
    P{"clocks_event_reasons.sw_thermal_slowdown", "clocks_throttle_reasons.sw_thermal_slowdown", "",
      "Software thermal capping: the GPU is above its maximum operating temperature", reasonActive<0x20>},
    P{"clocks_event_reasons.sync_boost", "clocks_throttle_reasons.sync_boost", "",
      "A sync boost group holds this GPU at the group's lowest clocks", reasonActive<0x10>},
    P{"clocks_event_reasons_counters.sw_power_cap", "", "us",
      "Time the software power cap has held clocks down, in microseconds", kNotRead},
    P{"clocks_event_reasons_counters.sync_boost", "", "us",
      "Time sync boost has held this GPU at the group's clocks, in microseconds", kNotRead},
    P{"clocks_event_reasons_counters.sw_thermal_slowdown", "", "us",
      "Time software thermal capping has held clocks down, in microseconds", kNotRead},
    P{"clocks_event_reasons_counters.hw_thermal_slowdown", "", "us",
      "Time hardware thermal slowdown was engaged, in microseconds", kNotRead},
    P{"clocks_event_reasons_counters.hw_power_brake_slowdown", "", "us",
      "Time an external power brake was asserted, in microseconds", kNotRead},
    P{"memory.total", "", "", "Total installed GPU memory"},
    P{"memory.reserved", "", "", "Memory reserved by the driver and firmware"},
    P{"memory.used", "", "", "Memory allocated by active contexts"},
    P{"memory.free", "", "", "Free memory"},
    P{"compute_mode", "", "", "Who may run compute: Default, Exclusive_Thread, Prohibited or Exclusive_Process",
      kComputeMode},
    P{"compute_cap", "", "", "CUDA compute capability, major.minor"},
    P{"utilization.gpu", "", "", "Percent of the last sample period during which a kernel ran"},
    P{"utilization.memory", "", "", "Percent of the last sample period during which device memory was read or written"},
    P{"utilization.encoder", "", "", "Percent of the last sample period the encoder was busy"},
    P{"utilization.decoder", "", "", "Percent of the last sample period the decoder was busy"},
    P{"utilization.jpeg", "", "%", "Percent of the last sample period the JPEG engine was busy", kJpegUtil},
    P{"utilization.ofa", "", "%", "Percent of the last sample period the optical flow accelerator was busy", kOfaUtil},
    P{"encoder.stats.sessionCount", "", "", "Encoder sessions running on the GPU", kNotRead},
    P{"encoder.stats.averageFps", "", "", "Average frames per second over the encoder sessions", kNotRead},
    P{"encoder.stats.averageLatency", "", "", "Average encoder latency over the sessions, in microseconds", kNotRead},
    P{"dramEncryption.mode.current", "", "", "DRAM encryption mode in use", kNotRead},
    P{"dramEncryption.mode.pending", "", "", "DRAM encryption mode after the next reboot", kNotRead},
    P{"ecc.mode.current", "", "", "ECC mode in use (Enabled/Disabled)"},
    P{"ecc.mode.pending", "", "", "ECC mode after the next reboot (Enabled/Disabled)", kEccPending},
    P{"ecc.errors.corrected.volatile.device_memory", "", "", "Errors in global device memory since the driver loaded",
      eccAt<NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_VOLATILE_ECC, NVML_MEMORY_LOCATION_DEVICE_MEMORY>},
    P{"ecc.errors.corrected.volatile.dram", "", "", "Errors in global device memory (DRAM) since the driver loaded",
      eccAt<NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_VOLATILE_ECC, NVML_MEMORY_LOCATION_DEVICE_MEMORY>},
    P{"ecc.errors.corrected.volatile.register_file", "", "", "Errors in register file memory since the driver loaded",
      eccAt<NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_VOLATILE_ECC, NVML_MEMORY_LOCATION_REGISTER_FILE>},
    P{"ecc.errors.corrected.volatile.l1_cache", "", "", "Errors in the L1 cache since the driver loaded",
      eccAt<NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_VOLATILE_ECC, NVML_MEMORY_LOCATION_L1_CACHE>},
    P{"ecc.errors.corrected.volatile.l2_cache", "", "", "Errors in the L2 cache since the driver loaded",
      eccAt<NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_VOLATILE_ECC, NVML_MEMORY_LOCATION_L2_CACHE>},
    P{"ecc.errors.corrected.volatile.texture_memory", "", "", "Parity errors in texture memory since the driver loaded",
      kNotRead},
    P{"ecc.errors.corrected.volatile.cbu", "", "", "Parity errors in the CBU since the driver loaded", kNotRead},
    P{"ecc.errors.corrected.volatile.sram", "", "", "Errors in global SRAMs since the driver loaded",
      eccAt<NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_VOLATILE_ECC, NVML_MEMORY_LOCATION_SRAM>},
    P{"ecc.errors.corrected.volatile.total", "", "", "Errors over the whole chip since the driver loaded"},
    P{"ecc.errors.corrected.aggregate.device_memory", "", "", "Errors in global device memory over the GPU's life",
      eccAt<NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_AGGREGATE_ECC, NVML_MEMORY_LOCATION_DEVICE_MEMORY>},
    P{"ecc.errors.corrected.aggregate.dram", "", "", "Errors in global device memory (DRAM) over the GPU's life",
      eccAt<NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_AGGREGATE_ECC, NVML_MEMORY_LOCATION_DEVICE_MEMORY>},
    P{"ecc.errors.corrected.aggregate.register_file", "", "", "Errors in register file memory over the GPU's life",
      eccAt<NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_AGGREGATE_ECC, NVML_MEMORY_LOCATION_REGISTER_FILE>},
    P{"ecc.errors.corrected.aggregate.l1_cache", "", "", "Errors in the L1 cache over the GPU's life",
      eccAt<NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_AGGREGATE_ECC, NVML_MEMORY_LOCATION_L1_CACHE>},
    P{"ecc.errors.corrected.aggregate.l2_cache", "", "", "Errors in the L2 cache over the GPU's life",
      eccAt<NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_AGGREGATE_ECC, NVML_MEMORY_LOCATION_L2_CACHE>},
    P{"ecc.errors.corrected.aggregate.texture_memory", "", "", "Parity errors in texture memory over the GPU's life",
      kNotRead},
    P{"ecc.errors.corrected.aggregate.cbu", "", "", "Parity errors in the CBU over the GPU's life", kNotRead},
    P{"ecc.errors.corrected.aggregate.sram", "", "", "Errors in global SRAMs over the GPU's life",
      eccAt<NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_AGGREGATE_ECC, NVML_MEMORY_LOCATION_SRAM>},
    P{"ecc.errors.corrected.aggregate.total", "", "", "Errors over the whole chip over the GPU's life"},
    P{"ecc.errors.uncorrected.volatile.device_memory", "", "", "Errors in global device memory since the driver loaded",
      eccAt<NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC, NVML_MEMORY_LOCATION_DEVICE_MEMORY>},
    P{"ecc.errors.uncorrected.volatile.dram", "", "", "Errors in global device memory (DRAM) since the driver loaded",
      eccAt<NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC, NVML_MEMORY_LOCATION_DEVICE_MEMORY>},
    P{"ecc.errors.uncorrected.volatile.register_file", "", "", "Errors in register file memory since the driver loaded",
      eccAt<NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC, NVML_MEMORY_LOCATION_REGISTER_FILE>},
    P{"ecc.errors.uncorrected.volatile.l1_cache", "", "", "Errors in the L1 cache since the driver loaded",
      eccAt<NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC, NVML_MEMORY_LOCATION_L1_CACHE>},
    P{"ecc.errors.uncorrected.volatile.l2_cache", "", "", "Errors in the L2 cache since the driver loaded",
      eccAt<NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC, NVML_MEMORY_LOCATION_L2_CACHE>},
    P{"ecc.errors.uncorrected.volatile.texture_memory", "", "",
      "Parity errors in texture memory since the driver loaded", kNotRead},
    P{"ecc.errors.uncorrected.volatile.cbu", "", "", "Parity errors in the CBU since the driver loaded", kNotRead},
    P{"ecc.errors.uncorrected.volatile.sram", "", "", "Errors in global SRAMs since the driver loaded",
      eccAt<NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC, NVML_MEMORY_LOCATION_SRAM>},
    P{"ecc.errors.uncorrected.volatile.total", "", "", "Errors over the whole chip since the driver loaded"},
    P{"ecc.errors.uncorrected.aggregate.device_memory", "", "", "Errors in global device memory over the GPU's life",
      eccAt<NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_AGGREGATE_ECC, NVML_MEMORY_LOCATION_DEVICE_MEMORY>},
    P{"ecc.errors.uncorrected.aggregate.dram", "", "", "Errors in global device memory (DRAM) over the GPU's life",
      eccAt<NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_AGGREGATE_ECC, NVML_MEMORY_LOCATION_DEVICE_MEMORY>},
    P{"ecc.errors.uncorrected.aggregate.register_file", "", "", "Errors in register file memory over the GPU's life",
      eccAt<NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_AGGREGATE_ECC, NVML_MEMORY_LOCATION_REGISTER_FILE>},
    P{"ecc.errors.uncorrected.aggregate.l1_cache", "", "", "Errors in the L1 cache over the GPU's life",
      eccAt<NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_AGGREGATE_ECC, NVML_MEMORY_LOCATION_L1_CACHE>},
    P{"ecc.errors.uncorrected.aggregate.l2_cache", "", "", "Errors in the L2 cache over the GPU's life",
      eccAt<NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_AGGREGATE_ECC, NVML_MEMORY_LOCATION_L2_CACHE>},
    P{"ecc.errors.uncorrected.aggregate.texture_memory", "", "", "Parity errors in texture memory over the GPU's life",
      kNotRead},
    P{"ecc.errors.uncorrected.aggregate.cbu", "", "", "Parity errors in the CBU over the GPU's life", kNotRead},
    P{"ecc.errors.uncorrected.aggregate.sram", "", "", "Errors in global SRAMs over the GPU's life",
      eccAt<NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_AGGREGATE_ECC, NVML_MEMORY_LOCATION_SRAM>},
    P{"ecc.errors.uncorrected.aggregate.total", "", "", "Errors over the whole chip over the GPU's life"},
    P{"ecc.errors.uncorrected.volatile.sram.parity", "", "", "Unique volatile parity errors in SRAM",
      kSram<&nvmlEccSramErrorStatus_v1_t::volatileUncParity>},
    P{"ecc.errors.uncorrected.volatile.sram.secded", "", "", "Unique volatile SEC-DED errors in SRAM",
      kSram<&nvmlEccSramErrorStatus_v1_t::volatileUncSecDed>},
    P{"ecc.errors.uncorrected.aggregate.sram.parity", "", "", "Unique aggregate parity errors in SRAM",
      kSram<&nvmlEccSramErrorStatus_v1_t::aggregateUncParity>},
    P{"ecc.errors.uncorrected.aggregate.sram.secded", "", "", "Unique aggregate SEC-DED errors in SRAM",
      kSram<&nvmlEccSramErrorStatus_v1_t::aggregateUncSecDed>},
    P{"ecc.errors.uncorrected.aggregate.sram.thresholdExceeded", "", "",
      "The aggregate SRAM error threshold was exceeded (Yes/No): the board is due for replacement", kSramThreshold},
    P{"ecc.errors.uncorrected.aggregate.sram.l2", "", "", "Unique aggregate SRAM errors in the L2 cache",
      kSram<&nvmlEccSramErrorStatus_v1_t::aggregateUncBucketL2>},
    P{"ecc.errors.uncorrected.aggregate.sram.sm", "", "", "Unique aggregate SRAM errors in the SMs",
      kSram<&nvmlEccSramErrorStatus_v1_t::aggregateUncBucketSm>},
    P{"ecc.errors.uncorrected.aggregate.sram.mcu", "", "", "Unique aggregate SRAM errors in microcontrollers",
      kSram<&nvmlEccSramErrorStatus_v1_t::aggregateUncBucketMcu>},
    P{"ecc.errors.uncorrected.aggregate.sram.pcie", "", "", "Aggregate SRAM errors in PCIe",
      kSram<&nvmlEccSramErrorStatus_v1_t::aggregateUncBucketPcie>},
    P{"ecc.errors.uncorrected.aggregate.sram.other", "", "", "Unique aggregate SRAM errors elsewhere",
      kSram<&nvmlEccSramErrorStatus_v1_t::aggregateUncBucketOther>},
    P{"retired_pages.single_bit_ecc.count", "retired_pages.sbe", "",
      "Pages retired for multiple single-bit ECC errors"},
    P{"retired_pages.double_bit.count", "retired_pages.dbe", "", "Pages retired for a double-bit ECC error"},
    P{"retired_pages.pending", "", "", "A page retirement waits for the next reboot (Yes/No)", nullptr, YesNo},
    P{"remapped_rows.correctable", "remapped_rows.sbe", "", "Rows remapped for correctable errors"},
    P{"remapped_rows.correctable_inactive", "", "", "Rows remapped for correctable errors but inactive", kNotRead},
    P{"remapped_rows.uncorrectable", "remapped_rows.dbe", "", "Rows remapped for uncorrectable errors"},
    P{"remapped_rows.uncorrectable_inactive", "", "", "Rows remapped for uncorrectable errors but inactive", kNotRead},
    P{"remapped_rows.pending", "", "", "A row remap waits for the next GPU reset (Yes/No)", nullptr, YesNo},
    P{"remapped_rows.failure", "", "", "A row remap has failed in the GPU's life (Yes/No)", nullptr, YesNo},
    P{"remapped_rows.histogram.max", "", "", "Memory banks with full remap availability",
      kRemapBanks<&nvmlRowRemapperHistogramValues_t::max>},
    P{"remapped_rows.histogram.high", "", "", "Memory banks with high remap availability",
      kRemapBanks<&nvmlRowRemapperHistogramValues_t::high>},
    P{"remapped_rows.histogram.partial", "", "", "Memory banks with partial remap availability",
      kRemapBanks<&nvmlRowRemapperHistogramValues_t::partial>},
    P{"remapped_rows.histogram.low", "", "", "Memory banks with low remap availability",
      kRemapBanks<&nvmlRowRemapperHistogramValues_t::low>},
    P{"remapped_rows.histogram.none", "", "", "Memory banks with no remap availability",
      kRemapBanks<&nvmlRowRemapperHistogramValues_t::none>},
    P{"temperature.gpu", "", "", "Core GPU temperature, degrees C"},
    P{"temperature.gpu.tlimit", "", "",
      "Degrees C left before the GPU reaches its maximum operating temperature (NVML's margin temperature)",
      kTlimitMargin},
    P{"temperature.memory", "", "", "HBM memory temperature, degrees C"},
    P{"power.management", "", "", "Power management is enabled (Enabled/Disabled)", kPowerManagement},
    P{"power.draw", "", "", "Last measured board power draw, watts (one-second average on Ampere and newer)"},
    P{"power.draw.average", "gpu.power.draw.average", "W", "Board power draw averaged over one second, watts",
      kPowerAverage},
    P{"power.draw.instant", "gpu.power.draw.instant", "W", "Instantaneous board power draw, watts", kPowerInstant},
    P{"power.limit", "gpu.power.requested_limit", "", "Software power limit, watts"},
    P{"enforced.power.limit", "gpu.power.current_limit", "",
      "Power ceiling the power management algorithm enforces (lowest of the limiters), watts"},
    P{"power.default_limit", "gpu.power.default_limit", "", "Default power limit, restored when the driver unloads"},
    P{"power.min_limit", "gpu.power.min_limit", "", "Lowest power limit that can be set, watts"},
    P{"power.max_limit", "gpu.power.max_limit", "", "Highest power limit that can be set, watts"},
    P{"module.power.draw.average", "", "W", "Module power draw averaged over one second, watts", kNotRead},
    P{"module.power.draw.instant", "", "W", "Instantaneous module power draw, watts", kNotRead},
    P{"module.power.limit", "module.power.requested_limit", "W", "Software power limit of the module, watts", kNotRead},
    P{"module.enforced.power.limit", "module.power.current_limit", "W", "Power ceiling enforced on the module, watts",
      kNotRead},
    P{"module.power.default_limit", "", "W", "Default power limit of the module, watts", kNotRead},
    P{"module.power.min_limit", "", "W", "Lowest module power limit that can be set, watts", kNotRead},
    P{"module.power.max_limit", "", "W", "Highest module power limit that can be set, watts", kNotRead},
    P{"power_smoothing.delayed_power_smoothing_supported", "", "", "Delayed power smoothing is supported (Yes/No)",
      kNotRead},
    P{"power_smoothing.primary_power_floor", "", "W", "Current primary power floor of power smoothing", kNotRead},
    P{"power_smoothing.secondary_power_floor", "", "W", "Current secondary power floor of power smoothing", kNotRead},
    P{"power_smoothing.min_primary_floor_activation_offset", "", "W",
      "Lowest primary floor activation offset of power smoothing", kNotRead},
    P{"power_smoothing.min_primary_floor_activation_point", "", "W",
      "Lowest primary floor activation point of power smoothing", kNotRead},
    P{"power_smoothing.window_multiplier", "", "ms", "Window multiplier of power smoothing", kNotRead},
    P{"power_smoothing.curr_profile.secondary_power_floor", "", "W", "Secondary power floor of the current profile",
      kNotRead},
    P{"power_smoothing.curr_profile.primary_floor_act_window_multiplier", "", "",
      "Primary floor activation window multiplier of the current profile", kNotRead},
    P{"power_smoothing.curr_profile.primary_floor_tar_window_multiplier", "", "",
      "Primary floor target window multiplier of the current profile", kNotRead},
    P{"power_smoothing.curr_profile.primary_floor_act_offset", "", "W",
      "Primary floor activation offset of the current profile", kNotRead},
    P{"power_smoothing.admin_override.secondary_power_floor", "", "W", "Administrator's secondary power floor, if set",
      kNotRead},
    P{"power_smoothing.admin_override.primary_floor_act_window_multiplier", "", "",
      "Administrator's primary floor activation window multiplier, if set", kNotRead},
    P{"power_smoothing.admin_override.primary_floor_tar_window_multiplier", "", "",
      "Administrator's primary floor target window multiplier, if set", kNotRead},
    P{"power_smoothing.admin_override.primary_floor_act_offset", "", "W",
      "Administrator's primary floor activation offset, if set", kNotRead},
    P{"clocks.current.graphics", "clocks.gr", "", "Current graphics (shader) clock"},
    P{"clocks.current.sm", "clocks.sm", "", "Current SM clock"},
    P{"clocks.current.memory", "clocks.mem", "", "Current memory clock"},
    P{"clocks.current.video", "clocks.video", "", "Current video encoder/decoder clock"},
    P{"clocks.applications.graphics", "clocks.applications.gr", "", "Applications graphics clock set by the user"},
    P{"clocks.applications.memory", "clocks.applications.mem", "", "Applications memory clock set by the user"},
    P{"clocks.default_applications.graphics", "clocks.default_applications.gr", "MHz",
      "Default applications graphics clock", kDefaultAppGr},
    P{"clocks.default_applications.memory", "clocks.default_applications.mem", "MHz",
      "Default applications memory clock", kDefaultAppMem},
    P{"clocks.max.graphics", "clocks.max.gr", "MHz", "Maximum graphics clock", kMaxGrClock},
    P{"clocks.max.sm", "", "", "Maximum SM clock"},
    P{"clocks.max.memory", "clocks.max.mem", "", "Maximum memory clock"},
    P{"mig.mode.current", "", "", "MIG mode in use (Enabled/Disabled)"},
    P{"mig.mode.pending", "", "", "MIG mode after the next GPU reset (Enabled/Disabled)", kMigPending},
    P{"gsp.mode.current", "", "", "GSP firmware is in use (Enabled/Disabled)", kGspCurrent},
    P{"gsp.mode.default", "", "", "GSP firmware is in use by default (Enabled/Disabled)", kGspDefault},
    P{"c2c.mode", "", "", "The GPU is in C2C mode (Enabled/Disabled)", kC2cMode},
    P{"protected_memory.total", "", "MiB", "Confidential computing protected memory installed",
      kProtectedMemory<&nvml::MemoryInfo::total>},
    P{"protected_memory.used", "", "MiB", "Confidential computing protected memory allocated",
      kProtectedMemory<&nvml::MemoryInfo::used>},
    P{"protected_memory.free", "", "MiB", "Confidential computing protected memory free",
      kProtectedMemory<&nvml::MemoryInfo::free>},
    P{"fabric.state", "", "", "State of the GPU's fabric registration", kFabricState},
    P{"fabric.status", "", "", "Error status of a completed fabric registration", kFabricStatus},
    P{"fabric.cliqueId", "", "", "Fabric clique the GPU belongs to", kFabricClique},
    P{"fabric.clusterUuid", "", "", "UUID of the cluster the GPU belongs to", kFabricCluster},
    P{"fabric.health.summary", "", "", "Fabric health summary", kFabricSummary},
    P{"fabric.health.bandwidth", "", "", "Fabric bandwidth degradation",
      kFabricCondition<NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_DEGRADED_BW, NVML_GPU_FABRIC_HEALTH_MASK_WIDTH_DEGRADED_BW>},
    P{"fabric.health.route_recovery_in_progress", "", "", "A fabric route recovery is in progress",
      kFabricCondition<NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_ROUTE_RECOVERY,
                       NVML_GPU_FABRIC_HEALTH_MASK_WIDTH_ROUTE_RECOVERY>},
    P{"fabric.health.route_unhealthy", "", "", "A fabric route is unhealthy",
      kFabricCondition<NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_ROUTE_UNHEALTHY,
                       NVML_GPU_FABRIC_HEALTH_MASK_WIDTH_ROUTE_UNHEALTHY>},
    P{"fabric.health.access_timeout_recovery", "", "", "Fabric access timeout recovery",
      kFabricCondition<NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_ACCESS_TIMEOUT_RECOVERY,
                       NVML_GPU_FABRIC_HEALTH_MASK_WIDTH_ACCESS_TIMEOUT_RECOVERY>},
    P{"fabric.health.incorrect_configuration", "", "", "The fabric is incorrectly configured", kFabricConfiguration},
    P{"fabric.health.partition_assigned", "", "", "A fabric partition is assigned", kFabricPartition},
    P{"platform.chassis_serial_number", "", "", "Serial number of the chassis holding the GPU", kNotRead},
    P{"platform.slot_number", "", "", "Slot of the chassis holding the GPU", kNotRead},
    P{"platform.tray_index", "", "", "Tray index among the compute slots of the chassis", kNotRead},
    P{"platform.host_id", "", "", "Index of the node within the slot", kNotRead},
    P{"platform.peer_type", "", "", "NVLink peer type of the platform (switch present or not)", kNotRead},
    P{"platform.module_id", "", "", "Id of this GPU within the node", kNotRead},
    P{"platform.gpu_fabric_guid", "", "", "Fabric id of this GPU", kNotRead},
    P{"hostname", "", "", "Hostname associated with the GPU", kNotRead},
};

using L = ListProperty;
constexpr L kTimestampL{"timestamp", "", "", "When the query was made, as YYYY/MM/DD HH:MM:SS.msec"};
constexpr L kGpuNameL{"gpu_name", "", "", "Official product name of the GPU"};
constexpr L kGpuBusL{"gpu_bus_id", "", "", "PCI bus id as domain:bus:device.function, in hex"};
constexpr L kGpuSerialL{"gpu_serial", "", "", "Serial number printed on the board"};
constexpr L kGpuUuidL{"gpu_uuid", "", "", "Globally unique immutable identifier of the GPU"};

const std::array kApps = {
    kTimestampL,
    kGpuNameL,
    kGpuBusL,
    kGpuSerialL,
    kGpuUuidL,
    L{"pid", "", "", "Process id of the compute application"},
    L{"process_name", "name", "", "Process name"},
    L{"used_gpu_memory", "used_memory", "MiB", "Device memory the process's context uses"},
};
const std::array kRetired = {
    kTimestampL,
    kGpuNameL,
    kGpuBusL,
    kGpuSerialL,
    kGpuUuidL,
    L{"retired_pages.address", "", "", "Address of a retired page"},
    L{"retired_pages.timestamp", "", "", "When the page was retired"},
    L{"retired_pages.cause", "", "", "Why the page was retired: Single Bit ECC or Double Bit ECC"},
};
const std::array kRemapped = {
    kTimestampL,
    kGpuNameL,
    kGpuBusL,
    kGpuSerialL,
    kGpuUuidL,
    L{"remapped_rows.correctable", "", "", "Rows remapped for correctable errors"},
    L{"remapped_rows.uncorrectable", "", "", "Rows remapped for uncorrectable errors"},
    L{"remapped_rows.pending", "", "", "A row remap waits for the next GPU reset"},
    L{"remapped_rows.failure", "", "", "A row remap has failed in the GPU's life"},
};

// Calls f on each of the space-separated aliases in turn until it returns true.
template <typename F>
bool anyAlias(std::string_view aliases, F&& f) {
  while (!aliases.empty()) {
    const auto sp = aliases.find(' ');
    if (f(aliases.substr(0, sp))) return true;
    if (sp == std::string_view::npos) break;
    aliases.remove_prefix(sp + 1);
  }
  return false;
}

bool hasName(std::string_view name, std::string_view primary, std::string_view aliases) {
  return name == primary || anyAlias(aliases, [name](std::string_view a) { return a == name; });
}

struct GpuIndex {
  std::unordered_map<std::string_view, const Property*> by_name;
  GpuIndex() {
    for (const auto& p : kGpu) {
      by_name.emplace(p.name, &p);
      std::string_view a = p.aliases;
      while (!a.empty()) {
        auto sp = a.find(' ');
        by_name.emplace(a.substr(0, sp), &p);
        if (sp == std::string_view::npos) break;
        a.remove_prefix(sp + 1);
      }
    }
  }
};

}  // namespace

std::span<const Property> gpuProperties() { return kGpu; }

const Property* findGpuProperty(std::string_view name) {
  static const GpuIndex idx;
  auto it = idx.by_name.find(name);
  return it == idx.by_name.end() ? nullptr : it->second;
}

const Field* catalogField(const Property& p) {
  if (p.read) return nullptr;
  if (const Field* f = findBySmiName(p.name)) return f;
  std::string_view a = p.aliases;
  while (!a.empty()) {
    auto sp = a.find(' ');
    if (const Field* f = findBySmiName(a.substr(0, sp))) return f;
    if (sp == std::string_view::npos) break;
    a.remove_prefix(sp + 1);
  }
  return nullptr;
}

std::string_view unitOf(const Property& p) {
  if (const Field* f = catalogField(p)) return f->smi_unit;
  return p.unit;
}

std::string describeError(const Status& s) {
  if (nvml::isUnsupported(s.nvmlCode())) return "[N/A]";
  if (s.nvmlCode() == NVML_ERROR_GPU_IS_LOST) return "[GPU is lost]";
  if (s.nvmlCode() == NVML_ERROR_NO_PERMISSION) return "[Insufficient Permissions]";
  if (s.nvmlCode() == NVML_ERROR_DEPRECATED) return "[Requested functionality has been deprecated]";
  return "[Unknown Error]";
}

std::string read(const Property& p, const ReadContext& ctx, bool with_units) {
  std::string value;
  if (p.read) {
    auto r = p.read(ctx);
    if (!r) return describeError(r.status());
    value = *r;
    if (with_units && !p.unit.empty()) value += " " + std::string(p.unit);
    return value;
  }
  const Field* f = catalogField(p);
  if (!f) return "[N/A]";  // a table slip the unit test catches: every such name has a catalog field
  if (p.style == Style::YesNo && f->read_number) {
    auto r = f->read_number(ctx.device);
    if (!r) return describeError(r.status());
    return *r != 0 ? "Yes" : "No";
  }
  return formatForSmi(*f, ctx, with_units);
}

std::span<const ListProperty> computeAppProperties() { return kApps; }
std::span<const ListProperty> retiredPageProperties() { return kRetired; }
std::span<const ListProperty> remappedRowProperties() { return kRemapped; }

const ListProperty* findListProperty(std::span<const ListProperty> table, std::string_view name) {
  for (const auto& p : table)
    if (hasName(name, p.name, p.aliases)) return &p;
  return nullptr;
}

namespace {
template <typename T>
std::string help(std::string_view option, std::span<const T> props) {
  std::string out = "List of valid properties to query for the switch \"" + std::string(option) + "\":\n\n";
  for (const auto& p : props) {
    out += "\"" + std::string(p.name) + "\"";
    anyAlias(p.aliases, [&out](std::string_view a) {
      out += " or \"" + std::string(a) + "\"";
      return false;
    });
    out += "\n" + std::string(p.help) + ".\n\n";
  }
  return out;
}
}  // namespace

std::string helpText(std::string_view option, std::span<const Property> props) { return help(option, props); }
std::string helpText(std::string_view option, std::span<const ListProperty> props) { return help(option, props); }

std::string renderMarkdown() {
  std::string out =
      "## nvidia-smi query properties\n\n"
      "Every name `gpuwarden smi --query-gpu` (and `gpuwarden query`) accepts, rendered from "
      "`src/fields/smi_query.cpp`. A property with a catalog key is that sampled field; the others are "
      "read only when queried. *not read* marks a property gpuwarden does not read yet: it prints `[N/A]`, "
      "as nvidia-smi does for an unsupported one.\n\n"
      "| nvidia-smi name | aliases | unit | source | meaning |\n"
      "| --- | --- | --- | --- | --- |\n";
  for (const auto& p : kGpu) {
    std::string aliases;
    std::string_view a = p.aliases;
    while (!a.empty()) {
      auto sp = a.find(' ');
      aliases += (aliases.empty() ? "`" : ", `") + std::string(a.substr(0, sp)) + "`";
      if (sp == std::string_view::npos) break;
      a.remove_prefix(sp + 1);
    }
    const Field* f = catalogField(p);
    std::string source = f ? "`" + std::string(f->key) + "`" : p.read == kNotRead ? "*not read*" : "query-only";
    out += "| `" + std::string(p.name) + "` | " + aliases + " | " + std::string(unitOf(p)) + " | " + source + " | " +
           std::string(p.help) + " |\n";
  }
  return out;
}

}  // namespace gw::fields::smi
