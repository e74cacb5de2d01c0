#include "fields/catalog.h"

#include <array>
#include <cmath>
#include <cstdio>
#include <unordered_map>

#include "fields/smi_query.h"

namespace gw::fields {
namespace {

using nvml::Device;
constexpr double kMiB = 1024.0 * 1024.0;

template <typename T>
Result<double> num(const Result<T>& r) {
  if (!r) return r.status();
  return static_cast<double>(*r);
}
Result<double> boolean(const Result<bool>& r) {
  if (!r) return r.status();
  return *r ? 1.0 : 0.0;
}
Result<double> mib(const Result<nvml::MemoryInfo>& m, std::uint64_t nvml::MemoryInfo::*member) {
  if (!m) return m.status();
  return std::floor(static_cast<double>((*m).*member) / kMiB);
}
Result<std::string> text(const Result<std::string>& r) { return r; }
Result<std::string> enabled(const Result<bool>& r) {
  if (!r) return r.status();
  return std::string(*r ? "Enabled" : "Disabled");
}

// The readers are plain functions so that the table stays constant data.
constexpr NumericReader kTemp = [](const Device& d) { return num(d.temperature()); };
constexpr NumericReader kMemTemp = [](const Device& d) -> Result<double> {
  nvmlFieldValue_t v{};
  v.fieldId = NVML_FI_DEV_MEMORY_TEMP;
  Status s = d.fieldValues(&v, 1);
  if (!s.ok()) return s;
  if (v.nvmlReturn != NVML_SUCCESS) return nvml::nvmlError(v.nvmlReturn, "nvmlDeviceGetFieldValues(MEMORY_TEMP)");
  return static_cast<double>(v.value.uiVal);
};
// NVML_GPU_RECOVERY_ACTION_*: what the driver asks for after an error (R560 and later).
constexpr NumericReader kRecoveryAction = [](const Device& d) -> Result<double> {
  nvmlFieldValue_t v{};
  v.fieldId = NVML_FI_DEV_GET_GPU_RECOVERY_ACTION;
  Status s = d.fieldValues(&v, 1);
  if (!s.ok()) return s;
  if (v.nvmlReturn != NVML_SUCCESS)
    return nvml::nvmlError(v.nvmlReturn, "nvmlDeviceGetFieldValues(GET_GPU_RECOVERY_ACTION)");
  return static_cast<double>(v.value.uiVal);
};
constexpr NumericReader kPower = [](const Device& d) -> Result<double> {
  auto r = d.powerUsageMw();
  if (!r) return r.status();
  return *r / 1000.0;
};
constexpr NumericReader kEnergy = [](const Device& d) { return num(d.energyMj()); };
constexpr NumericReader kPowerLimit = [](const Device& d) -> Result<double> {
  auto r = d.powerLimitMw();
  if (!r) return r.status();
  return *r / 1000.0;
};
constexpr NumericReader kEnforcedLimit = [](const Device& d) -> Result<double> {
  auto r = d.enforcedPowerLimitMw();
  if (!r) return r.status();
  return *r / 1000.0;
};
constexpr NumericReader kDefaultLimit = [](const Device& d) -> Result<double> {
  auto r = d.defaultPowerLimitMw();
  if (!r) return r.status();
  return *r / 1000.0;
};
constexpr NumericReader kMinLimit = [](const Device& d) -> Result<double> {
  auto r = d.powerLimitConstraintsMw();
  if (!r) return r.status();
  return r->first / 1000.0;
};
constexpr NumericReader kMaxLimit = [](const Device& d) -> Result<double> {
  auto r = d.powerLimitConstraintsMw();
  if (!r) return r.status();
  return r->second / 1000.0;
};
constexpr NumericReader kGpuUtil = [](const Device& d) -> Result<double> {
  auto r = d.utilization();
  if (!r) return r.status();
  return static_cast<double>(r->gpu);
};
constexpr NumericReader kMemUtil = [](const Device& d) -> Result<double> {
  auto r = d.utilization();
  if (!r) return r.status();
  return static_cast<double>(r->memory);
};
constexpr NumericReader kEncUtil = [](const Device& d) { return num(d.encoderUtilization()); };
constexpr NumericReader kDecUtil = [](const Device& d) { return num(d.decoderUtilization()); };
constexpr NumericReader kFbTotal = [](const Device& d) { return mib(d.memory(), &nvml::MemoryInfo::total); };
constexpr NumericReader kFbUsed = [](const Device& d) { return mib(d.memory(), &nvml::MemoryInfo::used); };
constexpr NumericReader kFbFree = [](const Device& d) { return mib(d.memory(), &nvml::MemoryInfo::free); };
constexpr NumericReader kFbReserved = [](const Device& d) { return mib(d.memory(), &nvml::MemoryInfo::reserved); };
constexpr NumericReader kSmClock = [](const Device& d) { return num(d.clock(NVML_CLOCK_SM)); };
constexpr NumericReader kGrClock = [](const Device& d) { return num(d.clock(NVML_CLOCK_GRAPHICS)); };
constexpr NumericReader kMemClock = [](const Device& d) { return num(d.clock(NVML_CLOCK_MEM)); };
constexpr NumericReader kVideoClock = [](const Device& d) { return num(d.clock(NVML_CLOCK_VIDEO)); };
constexpr NumericReader kMaxSmClock = [](const Device& d) { return num(d.maxClock(NVML_CLOCK_SM)); };
constexpr NumericReader kMaxMemClock = [](const Device& d) { return num(d.maxClock(NVML_CLOCK_MEM)); };
constexpr NumericReader kAppSmClock = [](const Device& d) { return num(d.appClock(NVML_CLOCK_SM)); };
constexpr NumericReader kAppMemClock = [](const Device& d) { return num(d.appClock(NVML_CLOCK_MEM)); };
constexpr NumericReader kPstate = [](const Device& d) -> Result<double> {
  auto r = d.pstate();
  if (!r) return r.status();
  if (*r == NVML_PSTATE_UNKNOWN) return nvml::nvmlError(NVML_ERROR_NOT_SUPPORTED, "nvmlDeviceGetPerformanceState");
  return static_cast<double>(*r);
};
constexpr NumericReader kFan = [](const Device& d) { return num(d.fanSpeed()); };
constexpr NumericReader kReasons = [](const Device& d) { return num(d.clockEventReasons()); };
constexpr NumericReader kSlowdownTemp = [](const Device& d) {
  return num(d.temperatureThreshold(NVML_TEMPERATURE_THRESHOLD_SLOWDOWN));
};
constexpr NumericReader kShutdownTemp = [](const Device& d) {
  return num(d.temperatureThreshold(NVML_TEMPERATURE_THRESHOLD_SHUTDOWN));
};
constexpr NumericReader kPcieGen = [](const Device& d) { return num(d.pcieGen()); };
constexpr NumericReader kPcieWidth = [](const Device& d) { return num(d.pcieWidth()); };
constexpr NumericReader kPcieMaxGen = [](const Device& d) { return num(d.pcieMaxGen()); };
constexpr NumericReader kPcieMaxWidth = [](const Device& d) { return num(d.pcieMaxWidth()); };
constexpr NumericReader kPcieTx = [](const Device& d) { return num(d.pcieThroughputKBs(NVML_PCIE_UTIL_TX_BYTES)); };
constexpr NumericReader kPcieRx = [](const Device& d) { return num(d.pcieThroughputKBs(NVML_PCIE_UTIL_RX_BYTES)); };
constexpr NumericReader kPcieReplay = [](const Device& d) { return num(d.pcieReplayCounter()); };
constexpr NumericReader kEccMode = [](const Device& d) { return boolean(d.eccEnabled()); };
constexpr NumericReader kSbeVol = [](const Device& d) {
  return num(d.eccErrors(NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_VOLATILE_ECC));
};
constexpr NumericReader kDbeVol = [](const Device& d) {
  return num(d.eccErrors(NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC));
};
constexpr NumericReader kSbeAgg = [](const Device& d) {
  return num(d.eccErrors(NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_AGGREGATE_ECC));
};
constexpr NumericReader kDbeAgg = [](const Device& d) {
  return num(d.eccErrors(NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_AGGREGATE_ECC));
};
constexpr NumericReader kRetiredSbe = [](const Device& d) {
  return num(d.retiredPages(NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS));
};
constexpr NumericReader kRetiredDbe = [](const Device& d) {
  return num(d.retiredPages(NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR));
};
constexpr NumericReader kRetiredPending = [](const Device& d) { return boolean(d.retiredPagesPending()); };
constexpr NumericReader kRemapCorr = [](const Device& d) -> Result<double> {
  auto r = d.remappedRows();
  if (!r) return r.status();
  return static_cast<double>(r->correctable);
};
constexpr NumericReader kRemapUnc = [](const Device& d) -> Result<double> {
  auto r = d.remappedRows();
  if (!r) return r.status();
  return static_cast<double>(r->uncorrectable);
};
constexpr NumericReader kRemapPending = [](const Device& d) -> Result<double> {
  auto r = d.remappedRows();
  if (!r) return r.status();
  return r->pending ? 1.0 : 0.0;
};
constexpr NumericReader kRemapFailure = [](const Device& d) -> Result<double> {
  auto r = d.remappedRows();
  if (!r) return r.status();
  return r->failure ? 1.0 : 0.0;
};

// NVLink totals over all links, as DCGM's *_TOTAL fields.
Result<double> nvlinkTotal(const Device& d, nvmlNvLinkErrorCounter_t c) {
  double total = 0;
  bool any = false;
  for (unsigned link = 0; link < NVML_NVLINK_MAX_LINKS; ++link) {
    auto r = d.nvlinkErrorCounter(link, c);
    if (!r) {
      if (nvml::isLost(r.status().nvmlCode())) return r.status();
      continue;
    }
    any = true;
    total += static_cast<double>(*r);
  }
  if (!any) return nvml::nvmlError(NVML_ERROR_NOT_SUPPORTED, "nvmlDeviceGetNvLinkErrorCounter");
  return total;
}
constexpr NumericReader kNvlCrcFlit = [](const Device& d) { return nvlinkTotal(d, NVML_NVLINK_ERROR_DL_CRC_FLIT); };
constexpr NumericReader kNvlCrcData = [](const Device& d) { return nvlinkTotal(d, NVML_NVLINK_ERROR_DL_CRC_DATA); };
constexpr NumericReader kNvlReplay = [](const Device& d) { return nvlinkTotal(d, NVML_NVLINK_ERROR_DL_REPLAY); };
constexpr NumericReader kNvlRecovery = [](const Device& d) { return nvlinkTotal(d, NVML_NVLINK_ERROR_DL_RECOVERY); };
// NVLink data counters (KiB) over all links: one field value per link, in one call.
Result<double> nvlinkThroughput(const Device& d, unsigned field) {
  nvmlFieldValue_t v[NVML_NVLINK_MAX_LINKS]{};
  for (unsigned link = 0; link < NVML_NVLINK_MAX_LINKS; ++link) {
    v[link].fieldId = field;
    v[link].scopeId = link;
  }
  Status s = d.fieldValues(v, NVML_NVLINK_MAX_LINKS);
  if (!s.ok()) return s;
  double total = 0;
  bool any = false;
  for (const auto& x : v) {
    if (x.nvmlReturn != NVML_SUCCESS) {
      if (nvml::isLost(x.nvmlReturn))
        return nvml::nvmlError(x.nvmlReturn, "nvmlDeviceGetFieldValues(NVLINK_THROUGHPUT)");
      continue;
    }
    any = true;
    total += static_cast<double>(x.value.ullVal);
  }
  if (!any) return nvml::nvmlError(NVML_ERROR_NOT_SUPPORTED, "nvmlDeviceGetFieldValues(NVLINK_THROUGHPUT)");
  return total;
}
constexpr NumericReader kNvlTx = [](const Device& d) {
  return nvlinkThroughput(d, NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX);
};
constexpr NumericReader kNvlRx = [](const Device& d) {
  return nvlinkThroughput(d, NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX);
};
constexpr NumericReader kNvlTotal = [](const Device& d) -> Result<double> {
  auto tx = nvlinkThroughput(d, NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX);
  if (!tx) return tx;
  auto rx = nvlinkThroughput(d, NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX);
  if (!rx) return rx;
  return *tx + *rx;
};
// The fabric registration as DCGM numbers it (nvml::FabricStatus); no reading where the GPU is on no
// NVSwitch fabric, so that only fabric systems carry the series.
constexpr NumericReader kFabricStatus = [](const Device& d) -> Result<double> {
  auto f = d.fabricInfo();
  if (!f) return f.status();
  const auto status = nvml::fabricStatus(*f);
  if (status == nvml::kFabricNotSupported)
    return nvml::nvmlError(NVML_ERROR_NOT_SUPPORTED, "nvmlDeviceGetGpuFabricInfoV (no NVSwitch fabric)");
  return static_cast<double>(status);
};
constexpr NumericReader kFabricHealth = [](const Device& d) -> Result<double> {
  auto f = d.fabricInfo();
  if (!f) return f.status();
  if (f->state == NVML_GPU_FABRIC_STATE_NOT_SUPPORTED ||
      f->healthSummary == NVML_GPU_FABRIC_HEALTH_SUMMARY_NOT_SUPPORTED)
    return nvml::nvmlError(NVML_ERROR_NOT_SUPPORTED, "nvmlDeviceGetGpuFabricInfoV (no fabric health summary)");
  return static_cast<double>(f->healthSummary);
};
constexpr NumericReader kNvlActive = [](const Device& d) -> Result<double> {
  double active = 0;
  bool any = false;
  for (unsigned link = 0; link < NVML_NVLINK_MAX_LINKS; ++link) {
    auto r = d.nvlinkActive(link);
    if (!r) {
      if (nvml::isLost(r.status().nvmlCode())) return r.status();
      continue;
    }
    any = true;
    active += *r ? 1 : 0;
  }
  if (!any) return nvml::nvmlError(NVML_ERROR_NOT_SUPPORTED, "nvmlDeviceGetNvLinkState");
  return active;
};
constexpr NumericReader kPersistence = [](const Device& d) { return boolean(d.persistenceMode()); };
constexpr NumericReader kMigMode = [](const Device& d) { return boolean(d.migEnabled()); };

// A GPM metric is a rate over the interval between two samples: a one-shot read has only one.
constexpr NumericReader kGpmOnly = [](const Device&) -> Result<double> {
  return nvml::nvmlError(NVML_ERROR_NOT_SUPPORTED, "nvmlGpmMetricsGet (needs two samples; the agent keeps them)");
};

// GPM answers percent where DCGM gives a ratio, and MiB/s where DCGM gives bytes/s.
constexpr GpmSource gpmPercent(unsigned metric) { return {metric, 0.01}; }
constexpr GpmSource gpmMiBs(unsigned metric) { return {metric, kMiB}; }

constexpr TextReader kIndexText = [](const ReadContext& c) -> Result<std::string> { return std::to_string(c.index); };
constexpr TextReader kName = [](const ReadContext& c) { return text(c.device.name()); };
constexpr TextReader kUuid = [](const ReadContext& c) { return text(c.device.uuid()); };
constexpr TextReader kSerial = [](const ReadContext& c) { return text(c.device.serial()); };
constexpr TextReader kVbios = [](const ReadContext& c) { return text(c.device.vbiosVersion()); };
constexpr TextReader kDriver = [](const ReadContext& c) { return text(c.session.driverVersion()); };
constexpr TextReader kBusId = [](const ReadContext& c) -> Result<std::string> {
  auto p = c.device.pciInfo();
  if (!p) return p.status();
  return p->bus_id;
};
constexpr TextReader kDeviceId = [](const ReadContext& c) -> Result<std::string> {
  auto p = c.device.pciInfo();
  if (!p) return p.status();
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%04X%04X", p->device_id, p->vendor_id);
  return std::string(buf);
};
constexpr TextReader kPstateText = [](const ReadContext& c) -> Result<std::string> {
  auto r = c.device.pstate();
  if (!r) return r.status();
  if (*r == NVML_PSTATE_UNKNOWN) return std::string("Unknown");
  return "P" + std::to_string(*r);
};
constexpr TextReader kPersistenceText = [](const ReadContext& c) { return enabled(c.device.persistenceMode()); };
constexpr TextReader kEccModeText = [](const ReadContext& c) { return enabled(c.device.eccEnabled()); };
constexpr TextReader kMigModeText = [](const ReadContext& c) { return enabled(c.device.migEnabled()); };
constexpr TextReader kComputeCap = [](const ReadContext& c) -> Result<std::string> {
  auto r = c.device.computeCapability();
  if (!r) return r.status();
  return std::to_string(r->major) + "." + std::to_string(r->minor);
};
constexpr TextReader kReasonsText = [](const ReadContext& c) -> Result<std::string> {
  auto r = c.device.clockEventReasons();
  if (!r) return r.status();
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%016llX", static_cast<unsigned long long>(*r));
  return std::string(buf);
};

constexpr auto G = Type::Gauge;
constexpr auto C = Type::Counter;
constexpr auto L = Type::Label;
constexpr auto F = Cadence::Fast;
constexpr auto S = Cadence::Slow;
constexpr auto X = Cadence::Static;

// key, dcgm id, dcgm name, smi name, smi unit, decimals, native name, native scale, unit, type,
// cadence, nvml field id, help, numeric reader, text reader
const std::array kFields = {
    // Identity (labels).
    Field{"index", 0, "", "index", "", 0, "", 1, "", L, X, 0, "Index of the GPU as NVML enumerates it", nullptr,
          kIndexText},
    Field{"name", 50, "", "name", "", 0, "", 1, "", L, X, 0, "Product name", nullptr, kName},
    Field{"uuid", 54, "", "uuid", "", 0, "", 1, "", L, X, 0, "Globally unique immutable identifier", nullptr, kUuid},
    Field{"serial", 53, "", "serial", "", 0, "", 1, "", L, X, 0, "Board serial number", nullptr, kSerial},
    Field{"pci_bus_id", 57, "", "pci.bus_id", "", 0, "", 1, "", L, X, 0, "PCI bus id domain:bus:device.function",
          nullptr, kBusId},
    Field{"pci_device_id", 58, "", "pci.device_id", "", 0, "", 1, "", L, X, 0, "PCI device id and vendor id", nullptr,
          kDeviceId},
    Field{"driver_version", 1, "", "driver_version", "", 0, "", 1, "", L, X, 0,
          "Installed NVIDIA display driver version", nullptr, kDriver},
    Field{"vbios_version", 85, "", "vbios_version", "", 0, "", 1, "", L, X, 0, "VBIOS version", nullptr, kVbios},
    Field{"compute_cap", 63, "", "compute_cap", "", 0, "", 1, "", L, X, 0, "CUDA compute capability", nullptr,
          kComputeCap},
    Field{"pstate_name", 0, "", "pstate", "", 0, "", 1, "", L, F, 0, "Performance state, P0 (maximum) to P12 (minimum)",
          nullptr, kPstateText},
    Field{"persistence_mode_name", 0, "", "persistence_mode", "", 0, "", 1, "", L, X, 0, "Persistence mode", nullptr,
          kPersistenceText},
    Field{"ecc_mode_name", 0, "", "ecc.mode.current", "", 0, "", 1, "", L, X, 0, "Current ECC mode", nullptr,
          kEccModeText},
    Field{"mig_mode_name", 0, "", "mig.mode.current", "", 0, "", 1, "", L, X, 0, "Current MIG mode", nullptr,
          kMigModeText},
    Field{"clock_event_reasons_hex", 0, "", "clocks_event_reasons.active", "", 0, "", 1, "", L, F, 0,
          "Active clock event (throttle) reasons as a bit mask", nullptr, kReasonsText},

    // The seven core metrics of R15 and their neighbours.
    Field{"gpu_util", 203, "DCGM_FI_DEV_GPU_UTIL", "utilization.gpu", "%", 0, "gpuwarden_gpu_utilization_ratio", 0.01,
          "%", G, F, 0, "Fraction of time one or more kernels ran on the GPU (a time fraction, not FLOPs)", kGpuUtil,
          nullptr},
    Field{"mem_copy_util", 204, "DCGM_FI_DEV_MEM_COPY_UTIL", "utilization.memory", "%", 0,
          "gpuwarden_gpu_memory_copy_utilization_ratio", 0.01, "%", G, F, 0,
          "Fraction of time device memory was being read or written", kMemUtil, nullptr},
    Field{"enc_util", 206, "DCGM_FI_DEV_ENC_UTIL", "utilization.encoder", "%", 0,
          "gpuwarden_gpu_encoder_utilization_ratio", 0.01, "%", G, F, 0, "Video encoder utilisation", kEncUtil,
          nullptr},
    Field{"dec_util", 207, "DCGM_FI_DEV_DEC_UTIL", "utilization.decoder", "%", 0,
          "gpuwarden_gpu_decoder_utilization_ratio", 0.01, "%", G, F, 0, "Video decoder utilisation", kDecUtil,
          nullptr},
    Field{"fb_total", 250, "DCGM_FI_DEV_FB_TOTAL", "memory.total", "MiB", 0, "gpuwarden_gpu_memory_total_bytes", kMiB,
          "MiB", G, X, 0, "Total frame buffer memory", kFbTotal, nullptr},
    Field{"fb_used", 252, "DCGM_FI_DEV_FB_USED", "memory.used", "MiB", 0, "gpuwarden_gpu_memory_used_bytes", kMiB,
          "MiB", G, F, 0, "Frame buffer memory used", kFbUsed, nullptr},
    Field{"fb_free", 251, "DCGM_FI_DEV_FB_FREE", "memory.free", "MiB", 0, "gpuwarden_gpu_memory_free_bytes", kMiB,
          "MiB", G, F, 0, "Frame buffer memory free", kFbFree, nullptr},
    Field{"fb_reserved", 253, "DCGM_FI_DEV_FB_RESERVED", "memory.reserved", "MiB", 0,
          "gpuwarden_gpu_memory_reserved_bytes", kMiB, "MiB", G, X, 0, "Frame buffer memory reserved by the driver",
          kFbReserved, nullptr},
    Field{"gpu_temp", 150, "DCGM_FI_DEV_GPU_TEMP", "temperature.gpu", "", 0, "gpuwarden_gpu_temperature_celsius", 1,
          "C", G, F, 0, "GPU core temperature", kTemp, nullptr},
    Field{"memory_temp", 140, "DCGM_FI_DEV_MEMORY_TEMP", "temperature.memory", "", 0,
          "gpuwarden_gpu_memory_temperature_celsius", 1, "C", G, F, NVML_FI_DEV_MEMORY_TEMP, "HBM memory temperature",
          kMemTemp, nullptr},
    Field{"power_usage", 155, "DCGM_FI_DEV_POWER_USAGE", "power.draw", "W", 2, "gpuwarden_gpu_power_watts", 1, "W", G,
          F, 0, "Power draw of the board", kPower, nullptr},
    Field{"total_energy", 156, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "", "", 0, "gpuwarden_gpu_energy_joules_total",
          0.001, "mJ", C, F, NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION, "Energy consumed since the driver was loaded",
          kEnergy, nullptr},
    Field{"power_limit", 160, "DCGM_FI_DEV_POWER_MGMT_LIMIT", "power.limit", "W", 2, "gpuwarden_gpu_power_limit_watts",
          1, "W", G, S, 0, "Power management limit", kPowerLimit, nullptr},
    Field{"enforced_power_limit", 164, "DCGM_FI_DEV_ENFORCED_POWER_LIMIT", "enforced.power.limit", "W", 2,
          "gpuwarden_gpu_enforced_power_limit_watts", 1, "W", G, S, 0,
          "Power limit the driver enforces after all limiters", kEnforcedLimit, nullptr},
    Field{"power_default_limit", 163, "", "power.default_limit", "W", 2, "gpuwarden_gpu_power_default_limit_watts", 1,
          "W", G, X, 0, "Default power management limit", kDefaultLimit, nullptr},
    Field{"power_min_limit", 161, "", "power.min_limit", "W", 2, "gpuwarden_gpu_power_min_limit_watts", 1, "W", G, X, 0,
          "Minimum settable power limit", kMinLimit, nullptr},
    Field{"power_max_limit", 162, "", "power.max_limit", "W", 2, "gpuwarden_gpu_power_max_limit_watts", 1, "W", G, X, 0,
          "Maximum settable power limit", kMaxLimit, nullptr},
    Field{"sm_clock", 100, "DCGM_FI_DEV_SM_CLOCK", "clocks.sm", "MHz", 0, "gpuwarden_gpu_sm_clock_hertz", 1e6, "MHz", G,
          F, 0, "Current SM clock", kSmClock, nullptr},
    Field{"graphics_clock", 0, "", "clocks.gr", "MHz", 0, "gpuwarden_gpu_graphics_clock_hertz", 1e6, "MHz", G, F, 0,
          "Current graphics clock", kGrClock, nullptr},
    Field{"mem_clock", 101, "DCGM_FI_DEV_MEM_CLOCK", "clocks.mem", "MHz", 0, "gpuwarden_gpu_memory_clock_hertz", 1e6,
          "MHz", G, F, 0, "Current memory clock", kMemClock, nullptr},
    Field{"video_clock", 102, "DCGM_FI_DEV_VIDEO_CLOCK", "clocks.video", "MHz", 0, "gpuwarden_gpu_video_clock_hertz",
          1e6, "MHz", G, F, 0, "Current video clock", kVideoClock, nullptr},
    Field{"max_sm_clock", 113, "DCGM_FI_DEV_MAX_SM_CLOCK", "clocks.max.sm", "MHz", 0,
          "gpuwarden_gpu_sm_clock_max_hertz", 1e6, "MHz", G, X, 0, "Maximum SM clock", kMaxSmClock, nullptr},
    Field{"max_mem_clock", 114, "DCGM_FI_DEV_MAX_MEM_CLOCK", "clocks.max.mem", "MHz", 0,
          "gpuwarden_gpu_memory_clock_max_hertz", 1e6, "MHz", G, X, 0, "Maximum memory clock", kMaxMemClock, nullptr},
    Field{"app_sm_clock", 110, "DCGM_FI_DEV_APP_SM_CLOCK", "clocks.applications.graphics", "MHz", 0,
          "gpuwarden_gpu_sm_clock_application_hertz", 1e6, "MHz", G, S, 0, "Application SM clock", kAppSmClock,
          nullptr},
    Field{"app_mem_clock", 111, "DCGM_FI_DEV_APP_MEM_CLOCK", "clocks.applications.memory", "MHz", 0,
          "gpuwarden_gpu_memory_clock_application_hertz", 1e6, "MHz", G, S, 0, "Application memory clock", kAppMemClock,
          nullptr},
    Field{"pstate", 190, "DCGM_FI_DEV_PSTATE", "", "", 0, "gpuwarden_gpu_pstate", 1, "", G, F, 0,
          "Performance state number, 0 is maximum performance", kPstate, nullptr},
    Field{"fan_speed", 191, "DCGM_FI_DEV_FAN_SPEED", "fan.speed", "%", 0, "gpuwarden_gpu_fan_speed_ratio", 0.01, "%", G,
          F, 0, "Fan speed as a fraction of its maximum", kFan, nullptr},
    Field{"clock_event_reasons", 112, "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", "", "", 0,
          "gpuwarden_gpu_clock_event_reasons", 1, "bitmask", G, F, 0,
          "Active clock event (throttle) reasons: 1 idle, 4 SW power cap, 8 HW slowdown, 32 SW thermal, 64 HW thermal, "
          "128 power brake",
          kReasons, nullptr},
    Field{"slowdown_temp", 158, "DCGM_FI_DEV_SLOWDOWN_TEMP", "", "", 0, "gpuwarden_gpu_slowdown_temperature_celsius", 1,
          "C", G, X, 0, "Temperature at which the GPU slows down", kSlowdownTemp, nullptr},
    Field{"shutdown_temp", 159, "DCGM_FI_DEV_SHUTDOWN_TEMP", "", "", 0, "gpuwarden_gpu_shutdown_temperature_celsius", 1,
          "C", G, X, 0, "Temperature at which the GPU shuts down", kShutdownTemp, nullptr},

    // PCIe.
    Field{"pcie_link_gen", 237, "DCGM_FI_DEV_PCIE_LINK_GEN", "pcie.link.gen.current", "", 0,
          "gpuwarden_gpu_pcie_link_generation", 1, "", G, F, 0, "Current PCIe link generation", kPcieGen, nullptr},
    Field{"pcie_link_width", 238, "DCGM_FI_DEV_PCIE_LINK_WIDTH", "pcie.link.width.current", "", 0,
          "gpuwarden_gpu_pcie_link_width_lanes", 1, "lanes", G, F, 0, "Current PCIe link width", kPcieWidth, nullptr},
    Field{"pcie_max_link_gen", 235, "DCGM_FI_DEV_PCIE_MAX_LINK_GEN", "pcie.link.gen.max", "", 0,
          "gpuwarden_gpu_pcie_link_generation_max", 1, "", G, X, 0,
          "Maximum PCIe link generation of the GPU and system", kPcieMaxGen, nullptr},
    Field{"pcie_max_link_width", 236, "DCGM_FI_DEV_PCIE_MAX_LINK_WIDTH", "pcie.link.width.max", "", 0,
          "gpuwarden_gpu_pcie_link_width_max_lanes", 1, "lanes", G, X, 0, "Maximum PCIe link width", kPcieMaxWidth,
          nullptr},
    Field{"pcie_tx_throughput", 200, "DCGM_FI_DEV_PCIE_TX_THROUGHPUT", "", "", 0,
          "gpuwarden_gpu_pcie_tx_bytes_per_second", 1024, "KB/s", G, F, 0, "PCIe transmit throughput", kPcieTx,
          nullptr},
    Field{"pcie_rx_throughput", 201, "DCGM_FI_DEV_PCIE_RX_THROUGHPUT", "", "", 0,
          "gpuwarden_gpu_pcie_rx_bytes_per_second", 1024, "KB/s", G, F, 0, "PCIe receive throughput", kPcieRx, nullptr},
    Field{"pcie_replay_counter", 202, "DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "", "", 0, "gpuwarden_gpu_pcie_replays_total",
          1, "", C, F, NVML_FI_DEV_PCIE_REPLAY_COUNTER, "PCIe replays (link-level retransmissions)", kPcieReplay,
          nullptr},

    // ECC, retired pages, remapped rows.
    Field{"ecc_mode", 300, "DCGM_FI_DEV_ECC_CURRENT", "", "", 0, "gpuwarden_gpu_ecc_enabled", 1, "bool", G, X,
          NVML_FI_DEV_ECC_CURRENT, "ECC mode, 1 enabled", kEccMode, nullptr},
    Field{"ecc_sbe_volatile", 310, "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "ecc.errors.corrected.volatile.total", "", 0,
          "gpuwarden_gpu_ecc_corrected_volatile_total", 1, "", C, S, NVML_FI_DEV_ECC_SBE_VOL_TOTAL,
          "Single-bit (corrected) ECC errors since the driver loaded", kSbeVol, nullptr},
    Field{"ecc_dbe_volatile", 311, "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "ecc.errors.uncorrected.volatile.total", "", 0,
          "gpuwarden_gpu_ecc_uncorrected_volatile_total", 1, "", C, S, NVML_FI_DEV_ECC_DBE_VOL_TOTAL,
          "Double-bit (uncorrected) ECC errors since the driver loaded", kDbeVol, nullptr},
    Field{"ecc_sbe_aggregate", 312, "DCGM_FI_DEV_ECC_SBE_AGG_TOTAL", "ecc.errors.corrected.aggregate.total", "", 0,
          "gpuwarden_gpu_ecc_corrected_aggregate_total", 1, "", C, S, NVML_FI_DEV_ECC_SBE_AGG_TOTAL,
          "Single-bit ECC errors over the GPU's life", kSbeAgg, nullptr},
    Field{"ecc_dbe_aggregate", 313, "DCGM_FI_DEV_ECC_DBE_AGG_TOTAL", "ecc.errors.uncorrected.aggregate.total", "", 0,
          "gpuwarden_gpu_ecc_uncorrected_aggregate_total", 1, "", C, S, NVML_FI_DEV_ECC_DBE_AGG_TOTAL,
          "Double-bit ECC errors over the GPU's life", kDbeAgg, nullptr},
    Field{"retired_pages_sbe", 390, "DCGM_FI_DEV_RETIRED_SBE", "retired_pages.single_bit_ecc.count", "", 0,
          "gpuwarden_gpu_retired_pages_sbe", 1, "pages", G, S, NVML_FI_DEV_RETIRED_SBE,
          "Pages retired for multiple single-bit errors", kRetiredSbe, nullptr},
    Field{"retired_pages_dbe", 391, "DCGM_FI_DEV_RETIRED_DBE", "retired_pages.double_bit.count", "", 0,
          "gpuwarden_gpu_retired_pages_dbe", 1, "pages", G, S, NVML_FI_DEV_RETIRED_DBE,
          "Pages retired for double-bit errors", kRetiredDbe, nullptr},
    Field{"retired_pages_pending", 392, "DCGM_FI_DEV_RETIRED_PENDING", "retired_pages.pending", "", 0,
          "gpuwarden_gpu_retired_pages_pending", 1, "bool", G, S, NVML_FI_DEV_RETIRED_PENDING,
          "1 when a page retirement waits for the next reset", kRetiredPending, nullptr},
    Field{"remapped_rows_correctable", 394, "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", "remapped_rows.correctable", "", 0,
          "gpuwarden_gpu_remapped_rows_correctable", 1, "rows", G, S, NVML_FI_DEV_REMAPPED_COR,
          "Rows remapped for correctable errors", kRemapCorr, nullptr},
    Field{"remapped_rows_uncorrectable", 393, "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "remapped_rows.uncorrectable",
          "", 0, "gpuwarden_gpu_remapped_rows_uncorrectable", 1, "rows", G, S, NVML_FI_DEV_REMAPPED_UNC,
          "Rows remapped for uncorrectable errors", kRemapUnc, nullptr},
    Field{"row_remap_pending", 396, "DCGM_FI_DEV_ROW_REMAP_PENDING", "remapped_rows.pending", "", 0,
          "gpuwarden_gpu_row_remap_pending", 1, "bool", G, S, NVML_FI_DEV_REMAPPED_PENDING,
          "1 when a row remap waits for the next GPU reset", kRemapPending, nullptr},
    Field{"row_remap_failure", 395, "DCGM_FI_DEV_ROW_REMAP_FAILURE", "remapped_rows.failure", "", 0,
          "gpuwarden_gpu_row_remap_failure", 1, "bool", G, S, NVML_FI_DEV_REMAPPED_FAILURE,
          "1 when a row remap failed: the GPU must be replaced", kRemapFailure, nullptr},
    Field{"recovery_action", 1523, "DCGM_FI_DEV_GET_GPU_RECOVERY_ACTION", "", "", 0, "gpuwarden_gpu_recovery_action", 1,
          "code", G, S, NVML_FI_DEV_GET_GPU_RECOVERY_ACTION,
          "Recovery the driver asks for after an error: 0 none, 1 GPU reset, 2 node reboot, 3 drain peer-to-peer "
          "traffic, 4 drain and reset",
          kRecoveryAction, nullptr},

    // NVLink.
    Field{"nvlink_active_links", 0, "", "", "", 0, "gpuwarden_gpu_nvlink_active_links", 1, "links", G, S, 0,
          "NVLink links that are up", kNvlActive, nullptr},
    Field{"nvlink_crc_flit_errors", 409, "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", "", "", 0,
          "gpuwarden_gpu_nvlink_crc_flit_errors_total", 1, "", C, S, NVML_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL,
          "NVLink flow-control CRC errors over all links", kNvlCrcFlit, nullptr},
    Field{"nvlink_crc_data_errors", 419, "DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL", "", "", 0,
          "gpuwarden_gpu_nvlink_crc_data_errors_total", 1, "", C, S, NVML_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL,
          "NVLink data CRC errors over all links", kNvlCrcData, nullptr},
    Field{"nvlink_replay_errors", 429, "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL", "", "", 0,
          "gpuwarden_gpu_nvlink_replay_errors_total", 1, "", C, S, NVML_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL,
          "NVLink replays over all links", kNvlReplay, nullptr},
    Field{"nvlink_recovery_errors", 439, "DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL", "", "", 0,
          "gpuwarden_gpu_nvlink_recovery_errors_total", 1, "", C, S, NVML_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL,
          "NVLink link recoveries over all links", kNvlRecovery, nullptr},
    Field{"fabric_status", 170, "DCGM_FI_DEV_FABRIC_MANAGER_STATUS", "", "", 0, "gpuwarden_gpu_fabric_status", 1,
          "code", G, S, 0,
          "Registration with the NVSwitch fabric: 1 not started (nvidia-fabricmanager not running), 2 in progress, "
          "3 success, 4 failure; no reading without a fabric",
          kFabricStatus, nullptr},
    Field{"fabric_health", 175, "DCGM_FI_DEV_FABRIC_HEALTH_SUMMARY", "", "", 0, "gpuwarden_gpu_fabric_health", 1,
          "code", G, S, 0, "The fabric's health summary: 1 healthy, 2 unhealthy, 3 limited capacity", kFabricHealth,
          nullptr},
    Field{"nvlink_tx_kib", 0, "", "", "", 0, "gpuwarden_gpu_nvlink_transmit_bytes_total", 1024, "KiB", C, F, 0,
          "NVLink data transmitted over all links (NVML's throughput counter)", kNvlTx, nullptr},
    Field{"nvlink_rx_kib", 0, "", "", "", 0, "gpuwarden_gpu_nvlink_receive_bytes_total", 1024, "KiB", C, F, 0,
          "NVLink data received over all links (NVML's throughput counter)", kNvlRx, nullptr},
    // DCGM fills field 449 with a rate although dcgm-exporter declares it a counter; here it is the
    // counter its type promises (transmitted + received), so rate() over it gives the bandwidth.
    Field{"nvlink_total_kib", 449, "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", "", "", 0, "gpuwarden_gpu_nvlink_bytes_total",
          1024, "KiB", C, F, 0, "NVLink data transmitted and received over all links (NVML's throughput counters)",
          kNvlTotal, nullptr},

    // Profiling (GPM, Hopper and newer): DCGM's DCGM_FI_PROF_* from NVML's GPM metrics, per GPU and
    // per MIG instance. Ratios 0..1 as DCGM gives them (GPM answers percent), rates in bytes/s
    // (GPM answers MiB/s).
    Field{"prof_gr_engine_active", 1001, "DCGM_FI_PROF_GR_ENGINE_ACTIVE", "", "", 3,
          "gpuwarden_gpu_prof_graphics_engine_active_ratio", 1, "ratio", G, F, 0,
          "Fraction of time the graphics or compute engine was active", kGpmOnly, nullptr,
          gpmPercent(NVML_GPM_METRIC_GRAPHICS_UTIL)},
    Field{"prof_sm_active", 1002, "DCGM_FI_PROF_SM_ACTIVE", "", "", 3, "gpuwarden_gpu_prof_sm_active_ratio", 1, "ratio",
          G, F, 0, "Fraction of cycles an SM had at least one warp assigned, averaged over the SMs", kGpmOnly, nullptr,
          gpmPercent(NVML_GPM_METRIC_SM_UTIL)},
    Field{"prof_sm_occupancy", 1003, "DCGM_FI_PROF_SM_OCCUPANCY", "", "", 3, "gpuwarden_gpu_prof_sm_occupancy_ratio", 1,
          "ratio", G, F, 0, "Warps resident on the SMs as a fraction of the most they can hold", kGpmOnly, nullptr,
          gpmPercent(NVML_GPM_METRIC_SM_OCCUPANCY)},
    Field{"prof_pipe_tensor_active", 1004, "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "", "", 3,
          "gpuwarden_gpu_prof_tensor_pipe_active_ratio", 1, "ratio", G, F, 0,
          "Fraction of cycles any tensor pipe was active", kGpmOnly, nullptr,
          gpmPercent(NVML_GPM_METRIC_ANY_TENSOR_UTIL)},
    Field{"prof_dram_active", 1005, "DCGM_FI_PROF_DRAM_ACTIVE", "", "", 3, "gpuwarden_gpu_prof_dram_active_ratio", 1,
          "ratio", G, F, 0, "Fraction of cycles the device memory interface was sending or receiving data", kGpmOnly,
          nullptr, gpmPercent(NVML_GPM_METRIC_DRAM_BW_UTIL)},
    Field{"prof_pipe_fp64_active", 1006, "DCGM_FI_PROF_PIPE_FP64_ACTIVE", "", "", 3,
          "gpuwarden_gpu_prof_fp64_pipe_active_ratio", 1, "ratio", G, F, 0,
          "Fraction of cycles the FP64 pipe was active", kGpmOnly, nullptr, gpmPercent(NVML_GPM_METRIC_FP64_UTIL)},
    Field{"prof_pipe_fp32_active", 1007, "DCGM_FI_PROF_PIPE_FP32_ACTIVE", "", "", 3,
          "gpuwarden_gpu_prof_fp32_pipe_active_ratio", 1, "ratio", G, F, 0,
          "Fraction of cycles the FP32 pipe was active", kGpmOnly, nullptr, gpmPercent(NVML_GPM_METRIC_FP32_UTIL)},
    Field{"prof_pipe_fp16_active", 1008, "DCGM_FI_PROF_PIPE_FP16_ACTIVE", "", "", 3,
          "gpuwarden_gpu_prof_fp16_pipe_active_ratio", 1, "ratio", G, F, 0,
          "Fraction of cycles the FP16 pipe (not the tensor pipe) was active", kGpmOnly, nullptr,
          gpmPercent(NVML_GPM_METRIC_FP16_UTIL)},
    Field{"prof_pcie_tx_bytes", 1009, "DCGM_FI_PROF_PCIE_TX_BYTES", "", "", 0,
          "gpuwarden_gpu_prof_pcie_transmit_bytes_per_second", 1, "B/s", G, F, 0,
          "PCIe data sent by the GPU, headers and payload", kGpmOnly, nullptr,
          gpmMiBs(NVML_GPM_METRIC_PCIE_TX_PER_SEC)},
    Field{"prof_pcie_rx_bytes", 1010, "DCGM_FI_PROF_PCIE_RX_BYTES", "", "", 0,
          "gpuwarden_gpu_prof_pcie_receive_bytes_per_second", 1, "B/s", G, F, 0,
          "PCIe data received by the GPU, headers and payload", kGpmOnly, nullptr,
          gpmMiBs(NVML_GPM_METRIC_PCIE_RX_PER_SEC)},
    Field{"prof_nvlink_tx_bytes", 1011, "DCGM_FI_PROF_NVLINK_TX_BYTES", "", "", 0,
          "gpuwarden_gpu_prof_nvlink_transmit_bytes_per_second", 1, "B/s", G, F, 0, "NVLink data sent over all links",
          kGpmOnly, nullptr, gpmMiBs(NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC)},
    Field{"prof_nvlink_rx_bytes", 1012, "DCGM_FI_PROF_NVLINK_RX_BYTES", "", "", 0,
          "gpuwarden_gpu_prof_nvlink_receive_bytes_per_second", 1, "B/s", G, F, 0,
          "NVLink data received over all links", kGpmOnly, nullptr, gpmMiBs(NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC)},

    // Modes.
    Field{"persistence_mode", 66, "DCGM_FI_DEV_PERSISTENCE_MODE", "", "", 0, "gpuwarden_gpu_persistence_mode", 1,
          "bool", G, S, 0, "Persistence mode, 1 enabled", kPersistence, nullptr},
    Field{"mig_mode", 67, "DCGM_FI_DEV_MIG_MODE", "", "", 0, "gpuwarden_gpu_mig_mode", 1, "bool", G, S, 0,
          "MIG mode, 1 enabled", kMigMode, nullptr},
};

struct Indexes {
  std::unordered_map<std::string_view, const Field*> key, smi, dcgm;
  Indexes() {
    for (const auto& f : kFields) {
      key.emplace(f.key, &f);
      if (!f.smi_name.empty()) smi.emplace(f.smi_name, &f);
      if (!f.dcgm_name.empty()) dcgm.emplace(f.dcgm_name, &f);
    }
  }
};
const Indexes& indexes() {
  static const Indexes idx;
  return idx;
}

const Field* lookup(const std::unordered_map<std::string_view, const Field*>& m, std::string_view k) {
  auto it = m.find(k);
  return it == m.end() ? nullptr : it->second;
}

}  // namespace

std::span<const Field> all() { return kFields; }
const Field* findByKey(std::string_view k) { return lookup(indexes().key, k); }
const Field* findBySmiName(std::string_view k) { return lookup(indexes().smi, k); }
namespace {
// DCGM names renamed by DCGM after dcgm-exporter's lists were written: {current, old}. The
// catalog holds the old name (the one dashboards use); both are exported and both are accepted.
constexpr std::pair<std::string_view, std::string_view> kDcgmRenames[] = {
    {"DCGM_FI_DEV_CLOCKS_EVENT_REASONS", "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS"},
};
}  // namespace

const Field* findByDcgmName(std::string_view k) {
  for (const auto& [current, old] : kDcgmRenames)
    if (k == current) k = old;
  return lookup(indexes().dcgm, k);
}

std::string_view currentDcgmName(const Field& f) {
  for (const auto& [current, old] : kDcgmRenames)
    if (f.dcgm_name == old) return current;
  return {};
}

const Field* findAny(std::string_view name) {
  if (const smi::Property* p = smi::findGpuProperty(name))
    if (const Field* f = smi::catalogField(*p)) return f;
  if (const Field* f = findBySmiName(name)) return f;
  if (const Field* f = findByKey(name)) return f;
  return findByDcgmName(name);
}

std::size_t indexOf(const Field& f) { return static_cast<std::size_t>(&f - kFields.data()); }

std::string formatForSmi(const Field& f, const ReadContext& ctx, bool with_units) {
  const auto describe = smi::describeError;
  if (f.read_text) {
    auto r = f.read_text(ctx);
    return r ? *r : describe(r.status());
  }
  auto r = f.read_number(ctx.device);
  if (!r) return describe(r.status());
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", f.decimals, *r);
  std::string s = buf;
  if (with_units && !f.smi_unit.empty()) {
    s += ' ';
    s += f.smi_unit;
  }
  return s;
}

std::string renderMarkdown() {
  std::string out =
      "# Field catalog\n\n"
      "Rendered from `src/fields/catalog.cpp` (the one table); a test keeps this file in sync.\n"
      "Values are kept in the unit column; the native Prometheus name carries base units "
      "(value × scale).\n\n"
      "| key | DCGM id | dcgm-exporter name | nvidia-smi name | unit | type | cadence | native name | scale | NVML "
      "field id | meaning |\n"
      "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n";
  auto type = [](Type t) { return t == Type::Gauge ? "gauge" : t == Type::Counter ? "counter" : "label"; };
  auto cadence = [](Cadence c) { return c == Cadence::Fast ? "fast" : c == Cadence::Slow ? "slow" : "static"; };
  for (const auto& f : kFields) {
    char scale[32];
    std::snprintf(scale, sizeof scale, "%g", f.native_scale);
    out += "| `" + std::string(f.key) + "` | " + (f.dcgm_id ? std::to_string(f.dcgm_id) : "") + " | " +
           (f.dcgm_name.empty() ? "" : "`" + std::string(f.dcgm_name) + "`") + " | " +
           (f.smi_name.empty() ? "" : "`" + std::string(f.smi_name) + "`") + " | " + std::string(f.unit) + " | " +
           type(f.type) + " | " + cadence(f.cadence) + " | " +
           (f.native_name.empty() ? "" : "`" + std::string(f.native_name) + "`") + " | " +
           (f.native_name.empty() ? "" : scale) + " | " + (f.nvml_fi ? std::to_string(f.nvml_fi) : "") + " | " +
           std::string(f.help) + " |\n";
  }
  return out + "\n" + smi::renderMarkdown();
}

}  // namespace gw::fields
