#include "nvml/nvml.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstddef>
#include <cstring>

namespace gw::nvml {
namespace {

Status missing(const char* fn) {
  return Status::Nvml(NVML_ERROR_FUNCTION_NOT_FOUND,
                      std::string(fn) + ": the installed driver does not provide this function");
}

// A Device without a handle has no api_: every call says so instead of dereferencing null.
Status noHandle(const char* fn) { return nvmlError(NVML_ERROR_INVALID_ARGUMENT, fn); }

// A mode NVML answers as an nvmlEnableState_t (persistence, accounting, display, power
// management, a pending page retirement). `api` is null for a device without a handle.
Result<bool> enableState(const void* api, nvmlDevice_t h, nvmlReturn_t (*fn)(nvmlDevice_t, nvmlEnableState_t*),
                         const char* name) {
  if (!api) return noHandle(name);
  if (!fn) return missing(name);
  nvmlEnableState_t s = 0;
  nvmlReturn_t r = fn(h, &s);
  if (r != NVML_SUCCESS) return nvmlError(r, name);
  return s == NVML_FEATURE_ENABLED;
}

// The video, JPEG and optical-flow engines answer through one signature; the sampling period
// NVML returns beside the percentage is not kept. `api` is null for a device without a handle.
Result<unsigned> engineUtilization(const void* api, nvmlDevice_t h,
                                   nvmlReturn_t (*fn)(nvmlDevice_t, unsigned int*, unsigned int*), const char* name) {
  if (!api) return noHandle(name);
  if (!fn) return missing(name);
  unsigned u = 0, period = 0;
  nvmlReturn_t r = fn(h, &u, &period);
  if (r != NVML_SUCCESS) return nvmlError(r, name);
  return u;
}

// A setter that failed: the simulator says why it failed for a reason of its own (it could not
// save its state file), which NVML's codes cannot carry.
Status setterError(const NvmlApi& api, nvmlReturn_t r, const char* fn) {
  Status st = nvmlError(r, fn);
  if (r != NVML_ERROR_UNKNOWN || !api.gwSimLastError) return st;
  const char* detail = api.gwSimLastError();
  if (!detail || !*detail) return st;
  return Status::Nvml(static_cast<int>(r), st.message() + " (simulator: " + detail + ")");
}

// Calls an NVML getter that fills one out-parameter of type T.
#define GW_CALL_OUT(T, fnptr, fname, ...)              \
  do {                                                 \
    if (!api_) return noHandle(fname);                 \
    if (!(fnptr)) return missing(fname);               \
    T out{};                                           \
    nvmlReturn_t r = (fnptr)(__VA_ARGS__, &out);       \
    if (r != NVML_SUCCESS) return nvmlError(r, fname); \
    return out;                                        \
  } while (0)

#define GW_CALL_STRING(fnptr, fname, size)                                \
  do {                                                                    \
    if (!api_) return noHandle(fname);                                    \
    if (!(fnptr)) return missing(fname);                                  \
    char buf[size] = {};                                                  \
    nvmlReturn_t r = (fnptr)(h_, buf, static_cast<unsigned>(sizeof buf)); \
    if (r != NVML_SUCCESS) return nvmlError(r, fname);                    \
    return std::string(buf);                                              \
  } while (0)

PciInfo toPci(const nvmlPciInfo_t& p) {
  PciInfo out;
  out.bus_id = normalizeBusId(p.busId[0] ? p.busId : p.busIdLegacy);
  out.domain = p.domain;
  out.bus = p.bus;
  out.device = p.device;
  out.device_id = p.pciDeviceId >> 16;
  out.vendor_id = p.pciDeviceId & 0xffff;
  out.subsystem_id = p.pciSubSystemId;
  return out;
}

std::vector<unsigned> bitsToIds(const unsigned long* words, unsigned nwords) {
  std::vector<unsigned> ids;
  for (unsigned w = 0; w < nwords; ++w)
    for (unsigned b = 0; b < 8 * sizeof(unsigned long); ++b)
      if (words[w] & (1UL << b)) ids.push_back(w * 8 * sizeof(unsigned long) + b);
  return ids;
}

}  // namespace

Result<std::string> Device::name() const {
  GW_CALL_STRING(api_->nvmlDeviceGetName, "nvmlDeviceGetName", NVML_DEVICE_NAME_V2_BUFFER_SIZE);
}
Result<std::string> Device::uuid() const {
  GW_CALL_STRING(api_->nvmlDeviceGetUUID, "nvmlDeviceGetUUID", NVML_DEVICE_UUID_V2_BUFFER_SIZE);
}
Result<std::string> Device::serial() const {
  GW_CALL_STRING(api_->nvmlDeviceGetSerial, "nvmlDeviceGetSerial", NVML_DEVICE_SERIAL_BUFFER_SIZE);
}
Result<std::string> Device::vbiosVersion() const {
  GW_CALL_STRING(api_->nvmlDeviceGetVbiosVersion, "nvmlDeviceGetVbiosVersion", NVML_DEVICE_VBIOS_VERSION_BUFFER_SIZE);
}
Result<std::string> Device::inforomImageVersion() const {
  GW_CALL_STRING(api_->nvmlDeviceGetInforomImageVersion, "nvmlDeviceGetInforomImageVersion",
                 NVML_DEVICE_INFOROM_VERSION_BUFFER_SIZE);
}
Result<std::string> Device::boardPartNumber() const {
  GW_CALL_STRING(api_->nvmlDeviceGetBoardPartNumber, "nvmlDeviceGetBoardPartNumber",
                 NVML_DEVICE_PART_NUMBER_BUFFER_SIZE);
}

Status Device::validateInforom() const {
  if (!api_) return noHandle("nvmlDeviceValidateInforom");
  if (!api_->nvmlDeviceValidateInforom) return missing("nvmlDeviceValidateInforom");
  nvmlReturn_t r = api_->nvmlDeviceValidateInforom(h_);
  return r == NVML_SUCCESS ? Status::Ok() : nvmlError(r, "nvmlDeviceValidateInforom");
}

Result<unsigned> Device::boardId() const {
  GW_CALL_OUT(unsigned, api_->nvmlDeviceGetBoardId, "nvmlDeviceGetBoardId", h_);
}

Result<bool> Device::multiGpuBoard() const {
  auto multi = [&]() -> Result<unsigned> {
    GW_CALL_OUT(unsigned, api_->nvmlDeviceGetMultiGpuBoard, "nvmlDeviceGetMultiGpuBoard", h_);
  }();
  if (!multi) return multi.status();
  return *multi != 0;
}

Result<unsigned> Device::index() const { GW_CALL_OUT(unsigned, api_->nvmlDeviceGetIndex, "nvmlDeviceGetIndex", h_); }
Result<unsigned> Device::minorNumber() const {
  GW_CALL_OUT(unsigned, api_->nvmlDeviceGetMinorNumber, "nvmlDeviceGetMinorNumber", h_);
}

Result<PciInfo> Device::pciInfo() const {
  if (!api_) return noHandle("nvmlDeviceGetPciInfo");
  auto fn = newest(api_->nvmlDeviceGetPciInfo_v3, api_->nvmlDeviceGetPciInfo_v2, api_->nvmlDeviceGetPciInfo);
  if (!fn) return missing("nvmlDeviceGetPciInfo");
  nvmlPciInfo_t p{};
  nvmlReturn_t r = fn(h_, &p);
  if (r != NVML_SUCCESS) return nvmlError(r, "nvmlDeviceGetPciInfo");
  return toPci(p);
}

Result<unsigned> Device::architecture() const {
  GW_CALL_OUT(nvmlDeviceArchitecture_t, api_->nvmlDeviceGetArchitecture, "nvmlDeviceGetArchitecture", h_);
}

Result<Version> Device::computeCapability() const {
  if (!api_) return noHandle("nvmlDeviceGetCudaComputeCapability");
  if (!api_->nvmlDeviceGetCudaComputeCapability) return missing("nvmlDeviceGetCudaComputeCapability");
  Version v;
  nvmlReturn_t r = api_->nvmlDeviceGetCudaComputeCapability(h_, &v.major, &v.minor);
  if (r != NVML_SUCCESS) return nvmlError(r, "nvmlDeviceGetCudaComputeCapability");
  return v;
}

Result<unsigned> Device::cudaCores() const {
  GW_CALL_OUT(unsigned, api_->nvmlDeviceGetNumGpuCores, "nvmlDeviceGetNumGpuCores", h_);
}
Result<nvmlDeviceAttributes_t> Device::attributes() const {
  GW_CALL_OUT(nvmlDeviceAttributes_t, api_->nvmlDeviceGetAttributes_v2, "nvmlDeviceGetAttributes_v2", h_);
}

Result<MemoryInfo> Device::memory() const {
  if (!api_) return noHandle("nvmlDeviceGetMemoryInfo");
  if (api_->nvmlDeviceGetMemoryInfo_v2) {
    nvmlMemory_v2_t m{};
    m.version = nvmlMemory_v2;
    nvmlReturn_t r = api_->nvmlDeviceGetMemoryInfo_v2(h_, &m);
    if (r == NVML_SUCCESS) return MemoryInfo{m.total, m.used, m.free, m.reserved};
    // Older drivers export the symbol but reject the version; fall back to v1.
    if (r != NVML_ERROR_ARGUMENT_VERSION_MISMATCH && r != NVML_ERROR_FUNCTION_NOT_FOUND)
      return nvmlError(r, "nvmlDeviceGetMemoryInfo_v2");
  }
  if (!api_) return noHandle("nvmlDeviceGetMemoryInfo");
  if (!api_->nvmlDeviceGetMemoryInfo) return missing("nvmlDeviceGetMemoryInfo");
  nvmlMemory_t m{};
  nvmlReturn_t r = api_->nvmlDeviceGetMemoryInfo(h_, &m);
  if (r != NVML_SUCCESS) return nvmlError(r, "nvmlDeviceGetMemoryInfo");
  return MemoryInfo{m.total, m.used, m.free, 0};
}

Result<MemoryInfo> Device::bar1Memory() const {
  if (!api_) return noHandle("nvmlDeviceGetBAR1MemoryInfo");
  if (!api_->nvmlDeviceGetBAR1MemoryInfo) return missing("nvmlDeviceGetBAR1MemoryInfo");
  nvmlBAR1Memory_t m{};
  nvmlReturn_t r = api_->nvmlDeviceGetBAR1MemoryInfo(h_, &m);
  if (r != NVML_SUCCESS) return nvmlError(r, "nvmlDeviceGetBAR1MemoryInfo");
  return MemoryInfo{m.bar1Total, m.bar1Used, m.bar1Free, 0};
}

Result<MemoryInfo> Device::protectedMemory() const {
  if (!api_) return noHandle("nvmlDeviceGetConfComputeProtectedMemoryUsage");
  if (!api_->nvmlDeviceGetConfComputeProtectedMemoryUsage)
    return missing("nvmlDeviceGetConfComputeProtectedMemoryUsage");
  nvmlMemory_t m{};
  nvmlReturn_t r = api_->nvmlDeviceGetConfComputeProtectedMemoryUsage(h_, &m);
  if (r != NVML_SUCCESS) return nvmlError(r, "nvmlDeviceGetConfComputeProtectedMemoryUsage");
  return MemoryInfo{m.total, m.used, m.free, 0};
}

Result<unsigned> Device::memoryBusWidth() const {
  GW_CALL_OUT(unsigned, api_->nvmlDeviceGetMemoryBusWidth, "nvmlDeviceGetMemoryBusWidth", h_);
}
Result<unsigned> Device::clock(nvmlClockType_t t) const {
  GW_CALL_OUT(unsigned, api_->nvmlDeviceGetClockInfo, "nvmlDeviceGetClockInfo", h_, t);
}
Result<unsigned> Device::maxClock(nvmlClockType_t t) const {
  GW_CALL_OUT(unsigned, api_->nvmlDeviceGetMaxClockInfo, "nvmlDeviceGetMaxClockInfo", h_, t);
}
Result<unsigned> Device::appClock(nvmlClockType_t t) const {
  GW_CALL_OUT(unsigned, api_->nvmlDeviceGetApplicationsClock, "nvmlDeviceGetApplicationsClock", h_, t);
}
// --- For `gpuwarden smi -q` (nvidia-smi's log). ---
Result<unsigned> Device::brand() const {
  GW_CALL_OUT(nvmlBrandType_t, api_->nvmlDeviceGetBrand, "nvmlDeviceGetBrand", h_);
}
// --- end smi -q ---

Result<unsigned> Device::pcieGen() const {
  GW_CALL_OUT(unsigned, api_->nvmlDeviceGetCurrPcieLinkGeneration, "nvmlDeviceGetCurrPcieLinkGeneration", h_);
}
Result<unsigned> Device::pcieWidth() const {
  GW_CALL_OUT(unsigned, api_->nvmlDeviceGetCurrPcieLinkWidth, "nvmlDeviceGetCurrPcieLinkWidth", h_);
}
Result<unsigned> Device::pcieMaxGen() const {
  GW_CALL_OUT(unsigned, api_->nvmlDeviceGetMaxPcieLinkGeneration, "nvmlDeviceGetMaxPcieLinkGeneration", h_);
}
Result<unsigned> Device::pcieMaxWidth() const {
  GW_CALL_OUT(unsigned, api_->nvmlDeviceGetMaxPcieLinkWidth, "nvmlDeviceGetMaxPcieLinkWidth", h_);
}
Result<unsigned> Device::pcieGpuMaxGen() const {
  GW_CALL_OUT(unsigned, api_->nvmlDeviceGetGpuMaxPcieLinkGeneration, "nvmlDeviceGetGpuMaxPcieLinkGeneration", h_);
}
Result<bool> Device::accountingMode() const {
  return enableState(api_, h_, api_ ? api_->nvmlDeviceGetAccountingMode : nullptr, "nvmlDeviceGetAccountingMode");
}
Result<unsigned> Device::accountingBufferSize() const {
  GW_CALL_OUT(unsigned, api_->nvmlDeviceGetAccountingBufferSize, "nvmlDeviceGetAccountingBufferSize", h_);
}
Result<std::string> Device::gspFirmwareVersion() const {
  constexpr const char* kName = "nvmlDeviceGetGspFirmwareVersion";
  if (!api_) return noHandle(kName);
  if (!api_->nvmlDeviceGetGspFirmwareVersion) return missing(kName);
  // No length goes with the buffer: NVML's documented size, and a terminator of ours at its end.
  char buf[NVML_GSP_FIRMWARE_VERSION_BUF_SIZE + 1] = {};
  nvmlReturn_t r = api_->nvmlDeviceGetGspFirmwareVersion(h_, buf);
  if (r != NVML_SUCCESS) return nvmlError(r, kName);
  buf[NVML_GSP_FIRMWARE_VERSION_BUF_SIZE] = '\0';
  return std::string(buf);
}

Result<unsigned> Device::virtualizationMode() const {
  GW_CALL_OUT(nvmlGpuVirtualizationMode_t, api_->nvmlDeviceGetVirtualizationMode, "nvmlDeviceGetVirtualizationMode",
              h_);
}

Result<Device::GspMode> Device::gspFirmwareMode() const {
  if (!api_) return noHandle("nvmlDeviceGetGspFirmwareMode");
  if (!api_->nvmlDeviceGetGspFirmwareMode) return missing("nvmlDeviceGetGspFirmwareMode");
  unsigned enabled = 0, by_default = 0;
  nvmlReturn_t r = api_->nvmlDeviceGetGspFirmwareMode(h_, &enabled, &by_default);
  if (r != NVML_SUCCESS) return nvmlError(r, "nvmlDeviceGetGspFirmwareMode");
  return GspMode{enabled != 0, by_default != 0};
}
Result<unsigned> Device::pcieThroughputKBs(nvmlPcieUtilCounter_t c) const {
  GW_CALL_OUT(unsigned, api_->nvmlDeviceGetPcieThroughput, "nvmlDeviceGetPcieThroughput", h_, c);
}
Result<unsigned> Device::pcieReplayCounter() const {
  GW_CALL_OUT(unsigned, api_->nvmlDeviceGetPcieReplayCounter, "nvmlDeviceGetPcieReplayCounter", h_);
}
Result<unsigned> Device::powerUsageMw() const {
  GW_CALL_OUT(unsigned, api_->nvmlDeviceGetPowerUsage, "nvmlDeviceGetPowerUsage", h_);
}
Result<unsigned> Device::powerLimitMw() const {
  GW_CALL_OUT(unsigned, api_->nvmlDeviceGetPowerManagementLimit, "nvmlDeviceGetPowerManagementLimit", h_);
}
Result<unsigned> Device::enforcedPowerLimitMw() const {
  GW_CALL_OUT(unsigned, api_->nvmlDeviceGetEnforcedPowerLimit, "nvmlDeviceGetEnforcedPowerLimit", h_);
}
Result<unsigned> Device::defaultPowerLimitMw() const {
  GW_CALL_OUT(unsigned, api_->nvmlDeviceGetPowerManagementDefaultLimit, "nvmlDeviceGetPowerManagementDefaultLimit", h_);
}

Result<std::pair<unsigned, unsigned>> Device::powerLimitConstraintsMw() const {
  if (!api_) return noHandle("nvmlDeviceGetPowerManagementLimitConstraints");
  if (!api_->nvmlDeviceGetPowerManagementLimitConstraints)
    return missing("nvmlDeviceGetPowerManagementLimitConstraints");
  unsigned lo = 0, hi = 0;
  nvmlReturn_t r = api_->nvmlDeviceGetPowerManagementLimitConstraints(h_, &lo, &hi);
  if (r != NVML_SUCCESS) return nvmlError(r, "nvmlDeviceGetPowerManagementLimitConstraints");
  return std::make_pair(lo, hi);
}

Result<std::uint64_t> Device::energyMj() const {
  GW_CALL_OUT(unsigned long long, api_->nvmlDeviceGetTotalEnergyConsumption, "nvmlDeviceGetTotalEnergyConsumption", h_);
}
Result<unsigned> Device::temperature() const {
  GW_CALL_OUT(unsigned, api_->nvmlDeviceGetTemperature, "nvmlDeviceGetTemperature", h_, NVML_TEMPERATURE_GPU);
}
Result<unsigned> Device::temperatureThreshold(nvmlTemperatureThresholds_t t) const {
  GW_CALL_OUT(unsigned, api_->nvmlDeviceGetTemperatureThreshold, "nvmlDeviceGetTemperatureThreshold", h_, t);
}
Result<unsigned> Device::fanSpeed() const {
  GW_CALL_OUT(unsigned, api_->nvmlDeviceGetFanSpeed, "nvmlDeviceGetFanSpeed", h_);
}
Result<unsigned> Device::pstate() const {
  GW_CALL_OUT(nvmlPstates_t, api_->nvmlDeviceGetPerformanceState, "nvmlDeviceGetPerformanceState", h_);
}
Result<std::uint64_t> Device::clockEventReasons() const {
  GW_CALL_OUT(unsigned long long, api_->nvmlDeviceGetCurrentClocksThrottleReasons,
              "nvmlDeviceGetCurrentClocksThrottleReasons", h_);
}
Result<nvmlUtilization_t> Device::utilization() const {
  GW_CALL_OUT(nvmlUtilization_t, api_->nvmlDeviceGetUtilizationRates, "nvmlDeviceGetUtilizationRates", h_);
}

Result<unsigned> Device::encoderUtilization() const {
  return engineUtilization(api_, h_, api_ ? api_->nvmlDeviceGetEncoderUtilization : nullptr,
                           "nvmlDeviceGetEncoderUtilization");
}
Result<unsigned> Device::decoderUtilization() const {
  return engineUtilization(api_, h_, api_ ? api_->nvmlDeviceGetDecoderUtilization : nullptr,
                           "nvmlDeviceGetDecoderUtilization");
}
Result<unsigned> Device::jpegUtilization() const {
  return engineUtilization(api_, h_, api_ ? api_->nvmlDeviceGetJpgUtilization : nullptr, "nvmlDeviceGetJpgUtilization");
}
Result<unsigned> Device::ofaUtilization() const {
  return engineUtilization(api_, h_, api_ ? api_->nvmlDeviceGetOfaUtilization : nullptr, "nvmlDeviceGetOfaUtilization");
}

Result<bool> Device::eccEnabled() const {
  if (!api_) return noHandle("nvmlDeviceGetEccMode");
  if (!api_->nvmlDeviceGetEccMode) return missing("nvmlDeviceGetEccMode");
  nvmlEnableState_t cur = 0, pending = 0;
  nvmlReturn_t r = api_->nvmlDeviceGetEccMode(h_, &cur, &pending);
  if (r != NVML_SUCCESS) return nvmlError(r, "nvmlDeviceGetEccMode");
  return cur == NVML_FEATURE_ENABLED;
}

Result<std::uint64_t> Device::eccErrors(nvmlMemoryErrorType_t t, nvmlEccCounterType_t c) const {
  GW_CALL_OUT(unsigned long long, api_->nvmlDeviceGetTotalEccErrors, "nvmlDeviceGetTotalEccErrors", h_, t, c);
}

Result<unsigned> Device::retiredPages(nvmlPageRetirementCause_t cause) const {
  if (!api_) return noHandle("nvmlDeviceGetRetiredPages");
  if (!api_->nvmlDeviceGetRetiredPages) return missing("nvmlDeviceGetRetiredPages");
  unsigned count = 0;  // count-only query: NVML returns the number with a null address list
  nvmlReturn_t r = api_->nvmlDeviceGetRetiredPages(h_, cause, &count, nullptr);
  if (r != NVML_SUCCESS && r != NVML_ERROR_INSUFFICIENT_SIZE) return nvmlError(r, "nvmlDeviceGetRetiredPages");
  return count;
}

// --- nvidia-smi's query properties (gpuwarden smi --query-*) ---
namespace {
bool enabled(nvmlEnableState_t s) { return s == NVML_FEATURE_ENABLED; }
}  // namespace

Result<std::pair<bool, bool>> Device::eccModes() const {
  if (!api_) return noHandle("nvmlDeviceGetEccMode");
  if (!api_->nvmlDeviceGetEccMode) return missing("nvmlDeviceGetEccMode");
  nvmlEnableState_t cur = 0, pending = 0;
  nvmlReturn_t r = api_->nvmlDeviceGetEccMode(h_, &cur, &pending);
  if (r != NVML_SUCCESS) return nvmlError(r, "nvmlDeviceGetEccMode");
  return std::pair{enabled(cur), enabled(pending)};
}

Result<std::pair<bool, bool>> Device::migModes() const {
  if (!api_) return noHandle("nvmlDeviceGetMigMode");
  if (!api_->nvmlDeviceGetMigMode) return missing("nvmlDeviceGetMigMode");
  unsigned cur = 0, pending = 0;
  nvmlReturn_t r = api_->nvmlDeviceGetMigMode(h_, &cur, &pending);
  if (r != NVML_SUCCESS) return nvmlError(r, "nvmlDeviceGetMigMode");
  return std::pair{cur == NVML_DEVICE_MIG_ENABLE, pending == NVML_DEVICE_MIG_ENABLE};
}

Result<bool> Device::displayMode() const {
  return enableState(api_, h_, api_ ? api_->nvmlDeviceGetDisplayMode : nullptr, "nvmlDeviceGetDisplayMode");
}

Result<bool> Device::powerManagementMode() const {
  return enableState(api_, h_, api_ ? api_->nvmlDeviceGetPowerManagementMode : nullptr,
                     "nvmlDeviceGetPowerManagementMode");
}

Result<std::string> Device::inforomVersion(nvmlInforomObject_t object) const {
  if (!api_) return noHandle("nvmlDeviceGetInforomVersion");
  if (!api_->nvmlDeviceGetInforomVersion) return missing("nvmlDeviceGetInforomVersion");
  char buf[NVML_DEVICE_INFOROM_VERSION_BUFFER_SIZE] = {};
  nvmlReturn_t r = api_->nvmlDeviceGetInforomVersion(h_, object, buf, static_cast<unsigned>(sizeof buf));
  if (r != NVML_SUCCESS) return nvmlError(r, "nvmlDeviceGetInforomVersion");
  return std::string(buf);
}

Result<std::uint64_t> Device::supportedClockEventReasons() const {
  GW_CALL_OUT(unsigned long long, api_->nvmlDeviceGetSupportedClocksThrottleReasons,
              "nvmlDeviceGetSupportedClocksThrottleReasons", h_);
}

Result<unsigned> Device::defaultAppClock(nvmlClockType_t t) const {
  GW_CALL_OUT(unsigned, api_->nvmlDeviceGetDefaultApplicationsClock, "nvmlDeviceGetDefaultApplicationsClock", h_, t);
}

Result<std::uint64_t> Device::memoryErrorCounter(nvmlMemoryErrorType_t t, nvmlEccCounterType_t c,
                                                 nvmlMemoryLocation_t l) const {
  GW_CALL_OUT(unsigned long long, api_->nvmlDeviceGetMemoryErrorCounter, "nvmlDeviceGetMemoryErrorCounter", h_, t, c,
              l);
}

Result<std::vector<std::uint64_t>> Device::retiredPageAddresses(nvmlPageRetirementCause_t cause) const {
  if (!api_) return noHandle("nvmlDeviceGetRetiredPages");
  if (!api_->nvmlDeviceGetRetiredPages) return missing("nvmlDeviceGetRetiredPages");
  // Pages can be retired between the two calls: ask again, a bounded number of times.
  for (int attempt = 0; attempt < 4; ++attempt) {
    unsigned count = 0;
    nvmlReturn_t r = api_->nvmlDeviceGetRetiredPages(h_, cause, &count, nullptr);
    if (r != NVML_SUCCESS && r != NVML_ERROR_INSUFFICIENT_SIZE) return nvmlError(r, "nvmlDeviceGetRetiredPages");
    std::vector<unsigned long long> pages(count);
    if (count == 0) return std::vector<std::uint64_t>{};
    r = api_->nvmlDeviceGetRetiredPages(h_, cause, &count, pages.data());
    if (r == NVML_ERROR_INSUFFICIENT_SIZE) continue;
    if (r != NVML_SUCCESS) return nvmlError(r, "nvmlDeviceGetRetiredPages");
    return std::vector<std::uint64_t>(pages.begin(), pages.begin() + std::min<std::size_t>(count, pages.size()));
  }
  return nvmlError(NVML_ERROR_INSUFFICIENT_SIZE, "nvmlDeviceGetRetiredPages");
}
// --- end of nvidia-smi's query properties ---

Result<bool> Device::retiredPagesPending() const {
  return enableState(api_, h_, api_ ? api_->nvmlDeviceGetRetiredPagesPendingStatus : nullptr,
                     "nvmlDeviceGetRetiredPagesPendingStatus");
}

Result<RemappedRows> Device::remappedRows() const {
  if (!api_) return noHandle("nvmlDeviceGetRemappedRows");
  if (!api_->nvmlDeviceGetRemappedRows) return missing("nvmlDeviceGetRemappedRows");
  unsigned corr = 0, unc = 0, pending = 0, failure = 0;
  nvmlReturn_t r = api_->nvmlDeviceGetRemappedRows(h_, &corr, &unc, &pending, &failure);
  if (r != NVML_SUCCESS) return nvmlError(r, "nvmlDeviceGetRemappedRows");
  return RemappedRows{corr, unc, pending != 0, failure != 0};
}

Result<nvmlRowRemapperHistogramValues_t> Device::rowRemapperHistogram() const {
  GW_CALL_OUT(nvmlRowRemapperHistogramValues_t, api_->nvmlDeviceGetRowRemapperHistogram,
              "nvmlDeviceGetRowRemapperHistogram", h_);
}

Result<nvmlEccSramErrorStatus_v1_t> Device::sramEccStatus() const {
  constexpr const char* kName = "nvmlDeviceGetSramEccErrorStatus";
  if (!api_) return noHandle(kName);
  if (!api_->nvmlDeviceGetSramEccErrorStatus) return missing(kName);
  nvmlEccSramErrorStatus_v1_t s{};
  s.version = nvmlEccSramErrorStatus_v1;
  nvmlReturn_t r = api_->nvmlDeviceGetSramEccErrorStatus(h_, &s);
  if (r != NVML_SUCCESS) return nvmlError(r, kName);
  return s;
}

Result<unsigned> Device::addressingMode() const {
  constexpr const char* kName = "nvmlDeviceGetAddressingMode";
  if (!api_) return noHandle(kName);
  if (!api_->nvmlDeviceGetAddressingMode) return missing(kName);
  nvmlDeviceAddressingMode_v1_t m{};
  m.version = nvmlDeviceAddressingMode_v1;
  nvmlReturn_t r = api_->nvmlDeviceGetAddressingMode(h_, &m);
  if (r != NVML_SUCCESS) return nvmlError(r, kName);
  return m.value;
}

Result<bool> Device::c2cEnabled() const {
  auto info = [&]() -> Result<nvmlC2cModeInfo_v1_t> {
    GW_CALL_OUT(nvmlC2cModeInfo_v1_t, api_->nvmlDeviceGetC2cModeInfoV, "nvmlDeviceGetC2cModeInfoV", h_);
  }();
  if (!info) return info.status();
  return info->isC2cEnabled != 0;
}

// A v2 answer is written into the v3 struct: the same layout up to where v2 ends.
static_assert(offsetof(nvmlGpuFabricInfo_v3_t, healthSummary) == sizeof(nvmlGpuFabricInfo_v2_t));

Result<nvmlGpuFabricInfo_v3_t> Device::fabricInfo() const {
  constexpr const char* kName = "nvmlDeviceGetGpuFabricInfoV";
  if (!api_) return noHandle(kName);
  if (!api_->nvmlDeviceGetGpuFabricInfoV) return missing(kName);
  nvmlGpuFabricInfo_v3_t info{};
  info.version = nvmlGpuFabricInfo_v3;
  nvmlReturn_t r = api_->nvmlDeviceGetGpuFabricInfoV(h_, &info);
  if (r == NVML_ERROR_ARGUMENT_VERSION_MISMATCH) {
    // A driver older than v3 writes v2's 36 bytes only; the summary stays NOT_SUPPORTED (zero).
    info = nvmlGpuFabricInfo_v3_t{};
    info.version = nvmlGpuFabricInfo_v2;
    r = api_->nvmlDeviceGetGpuFabricInfoV(h_, &info);
    info.healthSummary = NVML_GPU_FABRIC_HEALTH_SUMMARY_NOT_SUPPORTED;
  }
  if (r != NVML_SUCCESS) return nvmlError(r, kName);
  return info;
}

// Calls an NVML setter: OK or NVML's code, named after the function.
#define GW_CALL_SET(fnptr, fname, ...)                          \
  do {                                                          \
    if (!api_) return noHandle(fname);                          \
    if (!(fnptr)) return missing(fname);                        \
    nvmlReturn_t r = (fnptr)(__VA_ARGS__);                      \
    if (r != NVML_SUCCESS) return setterError(*api_, r, fname); \
    return Status::Ok();                                        \
  } while (0)

Status Device::setPersistenceMode(bool enabled) const {
  GW_CALL_SET(api_->nvmlDeviceSetPersistenceMode, "nvmlDeviceSetPersistenceMode", h_,
              enabled ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED);
}
Status Device::setPowerLimitMw(unsigned milliwatts) const {
  GW_CALL_SET(api_->nvmlDeviceSetPowerManagementLimit, "nvmlDeviceSetPowerManagementLimit", h_, milliwatts);
}
Status Device::setGpuLockedClocks(unsigned min_mhz, unsigned max_mhz) const {
  GW_CALL_SET(api_->nvmlDeviceSetGpuLockedClocks, "nvmlDeviceSetGpuLockedClocks", h_, min_mhz, max_mhz);
}
Status Device::resetGpuLockedClocks() const {
  GW_CALL_SET(api_->nvmlDeviceResetGpuLockedClocks, "nvmlDeviceResetGpuLockedClocks", h_);
}
Status Device::setMemoryLockedClocks(unsigned min_mhz, unsigned max_mhz) const {
  GW_CALL_SET(api_->nvmlDeviceSetMemoryLockedClocks, "nvmlDeviceSetMemoryLockedClocks", h_, min_mhz, max_mhz);
}
Status Device::resetMemoryLockedClocks() const {
  GW_CALL_SET(api_->nvmlDeviceResetMemoryLockedClocks, "nvmlDeviceResetMemoryLockedClocks", h_);
}
Status Device::setApplicationsClocks(unsigned mem_mhz, unsigned graphics_mhz) const {
  GW_CALL_SET(api_->nvmlDeviceSetApplicationsClocks, "nvmlDeviceSetApplicationsClocks", h_, mem_mhz, graphics_mhz);
}
Status Device::resetApplicationsClocks() const {
  GW_CALL_SET(api_->nvmlDeviceResetApplicationsClocks, "nvmlDeviceResetApplicationsClocks", h_);
}
Status Device::setComputeMode(unsigned mode) const {
  GW_CALL_SET(api_->nvmlDeviceSetComputeMode, "nvmlDeviceSetComputeMode", h_, static_cast<nvmlComputeMode_t>(mode));
}
Status Device::setEccMode(bool enabled) const {
  GW_CALL_SET(api_->nvmlDeviceSetEccMode, "nvmlDeviceSetEccMode", h_,
              enabled ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED);
}
Status Device::setMigMode(bool enabled, nvmlReturn_t* activation) const {
  GW_CALL_SET(api_->nvmlDeviceSetMigMode, "nvmlDeviceSetMigMode", h_,
              enabled ? NVML_DEVICE_MIG_ENABLE : NVML_DEVICE_MIG_DISABLE, activation);
}
Status GpuInstance::destroy() const { GW_CALL_SET(api_->nvmlGpuInstanceDestroy, "nvmlGpuInstanceDestroy", h_); }
Status ComputeInstance::destroy() const {
  GW_CALL_SET(api_->nvmlComputeInstanceDestroy, "nvmlComputeInstanceDestroy", h_);
}
#undef GW_CALL_SET

// --- MIG partitions ---

Result<MigGpuProfile> Device::gpuInstanceProfile(unsigned index) const {
  if (!api_) return noHandle("nvmlDeviceGetGpuInstanceProfileInfo");
  MigGpuProfile p;
  p.index = index;
  if (api_->nvmlDeviceGetGpuInstanceProfileInfoV) {
    nvmlGpuInstanceProfileInfo_v2_t v{};
    v.version = nvmlGpuInstanceProfileInfo_v2;
    nvmlReturn_t r = api_->nvmlDeviceGetGpuInstanceProfileInfoV(h_, index, &v);
    if (r != NVML_SUCCESS) return nvmlError(r, "nvmlDeviceGetGpuInstanceProfileInfoV");
    v.name[sizeof v.name - 1] = '\0';
    p.name = v.name;
    p.id = v.id, p.slices = v.sliceCount, p.instances = v.instanceCount, p.sms = v.multiprocessorCount;
    p.copy_engines = v.copyEngineCount, p.decoders = v.decoderCount, p.encoders = v.encoderCount;
    p.jpegs = v.jpegCount, p.ofas = v.ofaCount, p.p2p = v.isP2pSupported != 0, p.memory_mib = v.memorySizeMB;
  } else {
    if (!api_->nvmlDeviceGetGpuInstanceProfileInfo) return missing("nvmlDeviceGetGpuInstanceProfileInfo");
    nvmlGpuInstanceProfileInfo_t v{};
    nvmlReturn_t r = api_->nvmlDeviceGetGpuInstanceProfileInfo(h_, index, &v);
    if (r != NVML_SUCCESS) return nvmlError(r, "nvmlDeviceGetGpuInstanceProfileInfo");
    p.id = v.id, p.slices = v.sliceCount, p.instances = v.instanceCount, p.sms = v.multiprocessorCount;
    p.copy_engines = v.copyEngineCount, p.decoders = v.decoderCount, p.encoders = v.encoderCount;
    p.jpegs = v.jpegCount, p.ofas = v.ofaCount, p.p2p = v.isP2pSupported != 0, p.memory_mib = v.memorySizeMB;
  }
  if (p.instances > kMaxMigInstances)
    return Status::Nvml(NVML_ERROR_UNKNOWN, "nvmlDeviceGetGpuInstanceProfileInfo: profile " + std::to_string(p.id) +
                                                " allows " + std::to_string(p.instances) + " instances (at most " +
                                                std::to_string(kMaxMigInstances) + " make sense)");
  return p;
}

Result<std::vector<MigPlacement>> Device::gpuInstancePlacements(unsigned profile_id) const {
  const char* fn = "nvmlDeviceGetGpuInstancePossiblePlacements_v2";
  if (!api_) return noHandle(fn);
  if (!api_->nvmlDeviceGetGpuInstancePossiblePlacements_v2) return missing(fn);
  nvmlGpuInstancePlacement_t buf[kMaxMigInstances] = {};
  unsigned count = kMaxMigInstances;
  nvmlReturn_t r = api_->nvmlDeviceGetGpuInstancePossiblePlacements_v2(h_, profile_id, buf, &count);
  if (r != NVML_SUCCESS) return nvmlError(r, fn);
  if (count > kMaxMigInstances) return nvmlError(NVML_ERROR_INSUFFICIENT_SIZE, fn);
  std::vector<MigPlacement> out;
  for (unsigned i = 0; i < count; ++i) out.push_back({buf[i].start, buf[i].size});
  return out;
}

Result<unsigned> Device::gpuInstanceCapacity(unsigned profile_id) const {
  GW_CALL_OUT(unsigned, api_->nvmlDeviceGetGpuInstanceRemainingCapacity, "nvmlDeviceGetGpuInstanceRemainingCapacity",
              h_, profile_id);
}

Result<GpuInstance> Device::createGpuInstance(unsigned profile_id) const {
  if (!api_) return noHandle("nvmlDeviceCreateGpuInstance");
  if (!api_->nvmlDeviceCreateGpuInstance) return missing("nvmlDeviceCreateGpuInstance");
  nvmlGpuInstance_t gi = nullptr;
  nvmlReturn_t r = api_->nvmlDeviceCreateGpuInstance(h_, profile_id, &gi);
  if (r != NVML_SUCCESS) return setterError(*api_, r, "nvmlDeviceCreateGpuInstance");
  return GpuInstance(api_, gi);
}

Result<std::vector<GpuInstance>> Device::gpuInstances(unsigned profile_id, unsigned room) const {
  if (!api_) return noHandle("nvmlDeviceGetGpuInstances");
  if (!api_->nvmlDeviceGetGpuInstances) return missing("nvmlDeviceGetGpuInstances");
  nvmlGpuInstance_t buf[kMaxMigInstances] = {};
  unsigned count = std::min(room, kMaxMigInstances);
  nvmlReturn_t r = api_->nvmlDeviceGetGpuInstances(h_, profile_id, buf, &count);
  if (r != NVML_SUCCESS) return nvmlError(r, "nvmlDeviceGetGpuInstances");
  if (count > kMaxMigInstances) return nvmlError(NVML_ERROR_INSUFFICIENT_SIZE, "nvmlDeviceGetGpuInstances");
  std::vector<GpuInstance> out;
  for (unsigned i = 0; i < count; ++i) out.emplace_back(api_, buf[i]);
  return out;
}

Result<GpuInstance> Device::gpuInstanceById(unsigned id) const {
  if (!api_) return noHandle("nvmlDeviceGetGpuInstanceById");
  if (!api_->nvmlDeviceGetGpuInstanceById) return missing("nvmlDeviceGetGpuInstanceById");
  nvmlGpuInstance_t gi = nullptr;
  nvmlReturn_t r = api_->nvmlDeviceGetGpuInstanceById(h_, id, &gi);
  if (r != NVML_SUCCESS) return nvmlError(r, "nvmlDeviceGetGpuInstanceById");
  return GpuInstance(api_, gi);
}

Result<GpuInstanceInfo> GpuInstance::info() const {
  if (!api_) return noHandle("nvmlGpuInstanceGetInfo");
  if (!api_->nvmlGpuInstanceGetInfo) return missing("nvmlGpuInstanceGetInfo");
  nvmlGpuInstanceInfo_t v{};
  nvmlReturn_t r = api_->nvmlGpuInstanceGetInfo(h_, &v);
  if (r != NVML_SUCCESS) return nvmlError(r, "nvmlGpuInstanceGetInfo");
  return GpuInstanceInfo{v.id, v.profileId, {v.placement.start, v.placement.size}};
}

Result<MigComputeProfile> GpuInstance::computeProfile(unsigned index) const {
  const char* fn = "nvmlGpuInstanceGetComputeInstanceProfileInfo";
  if (!api_) return noHandle(fn);
  if (!api_->nvmlGpuInstanceGetComputeInstanceProfileInfo) return missing(fn);
  nvmlComputeInstanceProfileInfo_t v{};
  nvmlReturn_t r =
      api_->nvmlGpuInstanceGetComputeInstanceProfileInfo(h_, index, NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED, &v);
  if (r != NVML_SUCCESS) return nvmlError(r, fn);
  if (v.instanceCount > kMaxMigInstances) return nvmlError(NVML_ERROR_UNKNOWN, fn);
  MigComputeProfile p;
  p.id = v.id, p.slices = v.sliceCount, p.instances = v.instanceCount, p.sms = v.multiprocessorCount;
  p.copy_engines = v.sharedCopyEngineCount, p.decoders = v.sharedDecoderCount, p.encoders = v.sharedEncoderCount;
  p.jpegs = v.sharedJpegCount, p.ofas = v.sharedOfaCount;
  return p;
}

Result<unsigned> GpuInstance::computeCapacity(unsigned profile_id) const {
  GW_CALL_OUT(unsigned, api_->nvmlGpuInstanceGetComputeInstanceRemainingCapacity,
              "nvmlGpuInstanceGetComputeInstanceRemainingCapacity", h_, profile_id);
}

Result<ComputeInstance> GpuInstance::createComputeInstance(unsigned profile_id) const {
  const char* fn = "nvmlGpuInstanceCreateComputeInstance";
  if (!api_) return noHandle(fn);
  if (!api_->nvmlGpuInstanceCreateComputeInstance) return missing(fn);
  nvmlComputeInstance_t ci = nullptr;
  nvmlReturn_t r = api_->nvmlGpuInstanceCreateComputeInstance(h_, profile_id, &ci);
  if (r != NVML_SUCCESS) return setterError(*api_, r, fn);
  return ComputeInstance(api_, ci);
}

Result<std::vector<ComputeInstance>> GpuInstance::computeInstances(unsigned profile_id) const {
  const char* fn = "nvmlGpuInstanceGetComputeInstances";
  if (!api_) return noHandle(fn);
  if (!api_->nvmlGpuInstanceGetComputeInstances) return missing(fn);
  nvmlComputeInstance_t buf[kMaxMigInstances] = {};
  unsigned count = kMaxMigInstances;
  nvmlReturn_t r = api_->nvmlGpuInstanceGetComputeInstances(h_, profile_id, buf, &count);
  if (r != NVML_SUCCESS) return nvmlError(r, fn);
  if (count > kMaxMigInstances) return nvmlError(NVML_ERROR_INSUFFICIENT_SIZE, fn);
  std::vector<ComputeInstance> out;
  for (unsigned i = 0; i < count; ++i) out.emplace_back(api_, buf[i]);
  return out;
}

Result<ComputeInstance> GpuInstance::computeInstanceById(unsigned id) const {
  const char* fn = "nvmlGpuInstanceGetComputeInstanceById";
  if (!api_) return noHandle(fn);
  if (!api_->nvmlGpuInstanceGetComputeInstanceById) return missing(fn);
  nvmlComputeInstance_t ci = nullptr;
  nvmlReturn_t r = api_->nvmlGpuInstanceGetComputeInstanceById(h_, id, &ci);
  if (r != NVML_SUCCESS) return nvmlError(r, fn);
  return ComputeInstance(api_, ci);
}

Result<ComputeInstanceInfo> ComputeInstance::info() const {
  const char* fn = "nvmlComputeInstanceGetInfo";
  if (!api_) return noHandle(fn);
  auto get = newest<decltype(api_->nvmlComputeInstanceGetInfo)>(nullptr, api_->nvmlComputeInstanceGetInfo_v2,
                                                                api_->nvmlComputeInstanceGetInfo);
  if (!get) return missing(fn);
  nvmlComputeInstanceInfo_t v{};
  nvmlReturn_t r = get(h_, &v);
  if (r != NVML_SUCCESS) return nvmlError(r, fn);
  return ComputeInstanceInfo{v.id, v.profileId, {v.placement.start, v.placement.size}};
}

Result<bool> Device::persistenceMode() const {
  return enableState(api_, h_, api_ ? api_->nvmlDeviceGetPersistenceMode : nullptr, "nvmlDeviceGetPersistenceMode");
}

Result<unsigned> Device::computeMode() const {
  GW_CALL_OUT(nvmlComputeMode_t, api_->nvmlDeviceGetComputeMode, "nvmlDeviceGetComputeMode", h_);
}

Result<bool> Device::displayActive() const {
  return enableState(api_, h_, api_ ? api_->nvmlDeviceGetDisplayActive : nullptr, "nvmlDeviceGetDisplayActive");
}

Result<bool> Device::migEnabled() const {
  if (!api_) return noHandle("nvmlDeviceGetMigMode");
  if (!api_->nvmlDeviceGetMigMode) return missing("nvmlDeviceGetMigMode");
  unsigned cur = 0, pending = 0;
  nvmlReturn_t r = api_->nvmlDeviceGetMigMode(h_, &cur, &pending);
  if (r != NVML_SUCCESS) return nvmlError(r, "nvmlDeviceGetMigMode");
  return cur == NVML_DEVICE_MIG_ENABLE;
}

Result<unsigned> Device::maxMigDevices() const {
  GW_CALL_OUT(unsigned, api_->nvmlDeviceGetMaxMigDeviceCount, "nvmlDeviceGetMaxMigDeviceCount", h_);
}

Result<Device> Device::migDevice(unsigned index) const {
  if (!api_) return noHandle("nvmlDeviceGetMigDeviceHandleByIndex");
  if (!api_->nvmlDeviceGetMigDeviceHandleByIndex) return missing("nvmlDeviceGetMigDeviceHandleByIndex");
  nvmlDevice_t d = nullptr;
  nvmlReturn_t r = api_->nvmlDeviceGetMigDeviceHandleByIndex(h_, index, &d);
  if (r != NVML_SUCCESS) return nvmlError(r, "nvmlDeviceGetMigDeviceHandleByIndex");
  return Device(api_, d);
}

Result<bool> Device::isMigDevice() const {
  if (!api_) return noHandle("nvmlDeviceIsMigDeviceHandle");
  if (!api_->nvmlDeviceIsMigDeviceHandle) return missing("nvmlDeviceIsMigDeviceHandle");
  unsigned is = 0;
  nvmlReturn_t r = api_->nvmlDeviceIsMigDeviceHandle(h_, &is);
  if (r != NVML_SUCCESS) return nvmlError(r, "nvmlDeviceIsMigDeviceHandle");
  return is != 0;
}

Result<Device> Device::parentOfMig() const {
  if (!api_) return noHandle("nvmlDeviceGetDeviceHandleFromMigDeviceHandle");
  if (!api_->nvmlDeviceGetDeviceHandleFromMigDeviceHandle)
    return missing("nvmlDeviceGetDeviceHandleFromMigDeviceHandle");
  nvmlDevice_t d = nullptr;
  nvmlReturn_t r = api_->nvmlDeviceGetDeviceHandleFromMigDeviceHandle(h_, &d);
  if (r != NVML_SUCCESS) return nvmlError(r, "nvmlDeviceGetDeviceHandleFromMigDeviceHandle");
  return Device(api_, d);
}

Result<unsigned> Device::gpuInstanceId() const {
  GW_CALL_OUT(unsigned, api_->nvmlDeviceGetGpuInstanceId, "nvmlDeviceGetGpuInstanceId", h_);
}
Result<unsigned> Device::computeInstanceId() const {
  GW_CALL_OUT(unsigned, api_->nvmlDeviceGetComputeInstanceId, "nvmlDeviceGetComputeInstanceId", h_);
}

Result<bool> Device::nvlinkActive(unsigned link) const {
  if (!api_) return noHandle("nvmlDeviceGetNvLinkState");
  if (!api_->nvmlDeviceGetNvLinkState) return missing("nvmlDeviceGetNvLinkState");
  nvmlEnableState_t s = 0;
  nvmlReturn_t r = api_->nvmlDeviceGetNvLinkState(h_, link, &s);
  if (r != NVML_SUCCESS) return nvmlError(r, "nvmlDeviceGetNvLinkState");
  return s == NVML_FEATURE_ENABLED;
}

Result<unsigned> Device::nvlinkVersion(unsigned link) const {
  GW_CALL_OUT(unsigned, api_->nvmlDeviceGetNvLinkVersion, "nvmlDeviceGetNvLinkVersion", h_, link);
}

Result<PciInfo> Device::nvlinkRemotePci(unsigned link) const {
  if (!api_) return noHandle("nvmlDeviceGetNvLinkRemotePciInfo_v2");
  if (!api_->nvmlDeviceGetNvLinkRemotePciInfo_v2) return missing("nvmlDeviceGetNvLinkRemotePciInfo_v2");
  nvmlPciInfo_t p{};
  nvmlReturn_t r = api_->nvmlDeviceGetNvLinkRemotePciInfo_v2(h_, link, &p);
  if (r != NVML_SUCCESS) return nvmlError(r, "nvmlDeviceGetNvLinkRemotePciInfo_v2");
  return toPci(p);
}

Result<unsigned> Device::nvlinkRemoteType(unsigned link) const {
  GW_CALL_OUT(nvmlIntNvLinkDeviceType_t, api_->nvmlDeviceGetNvLinkRemoteDeviceType,
              "nvmlDeviceGetNvLinkRemoteDeviceType", h_, link);
}
Result<std::uint64_t> Device::nvlinkErrorCounter(unsigned link, nvmlNvLinkErrorCounter_t c) const {
  GW_CALL_OUT(unsigned long long, api_->nvmlDeviceGetNvLinkErrorCounter, "nvmlDeviceGetNvLinkErrorCounter", h_, link,
              c);
}
Result<unsigned> Device::topologyCommonAncestor(const Device& other) const {
  GW_CALL_OUT(nvmlGpuTopologyLevel_t, api_->nvmlDeviceGetTopologyCommonAncestor, "nvmlDeviceGetTopologyCommonAncestor",
              h_, other.h_);
}

Result<std::vector<unsigned>> Device::cpuAffinity() const {
  if (!api_) return noHandle("nvmlDeviceGetCpuAffinity");
  if (!api_->nvmlDeviceGetCpuAffinity) return missing("nvmlDeviceGetCpuAffinity");
  unsigned long set[16] = {};  // 1024 CPUs
  nvmlReturn_t r = api_->nvmlDeviceGetCpuAffinity(h_, 16, set);
  if (r != NVML_SUCCESS) return nvmlError(r, "nvmlDeviceGetCpuAffinity");
  return bitsToIds(set, 16);
}

Result<std::vector<unsigned>> Device::numaNodes() const {
  if (!api_) return noHandle("nvmlDeviceGetMemoryAffinity");
  if (!api_->nvmlDeviceGetMemoryAffinity) return missing("nvmlDeviceGetMemoryAffinity");
  unsigned long set[2] = {};
  nvmlReturn_t r = api_->nvmlDeviceGetMemoryAffinity(h_, 2, set, NVML_AFFINITY_SCOPE_NODE);
  if (r != NVML_SUCCESS) return nvmlError(r, "nvmlDeviceGetMemoryAffinity");
  return bitsToIds(set, 2);
}

namespace {

// The process list grows between the size query and the fetch, so retry a few times.
template <typename Info, typename Fn>
Result<std::vector<ProcessInfo>> fetchProcesses(Fn fn, nvmlDevice_t h, const char* name, bool graphics) {
  std::vector<Info> buf(16);
  for (int attempt = 0; attempt < 4; ++attempt) {
    unsigned count = static_cast<unsigned>(buf.size());
    nvmlReturn_t r = fn(h, &count, buf.data());
    if (r == NVML_ERROR_INSUFFICIENT_SIZE) {
      buf.resize(count + 8);
      continue;
    }
    if (r != NVML_SUCCESS) return nvmlError(r, name);
    std::vector<ProcessInfo> out;
    out.reserve(count);
    for (unsigned i = 0; i < count; ++i) {
      ProcessInfo p;
      p.pid = buf[i].pid;
      // NVML reports NVML_VALUE_NOT_AVAILABLE (all ones) when memory is unknown (e.g. Windows WDDM).
      p.used_bytes = buf[i].usedGpuMemory == ~0ULL ? 0 : buf[i].usedGpuMemory;
      if constexpr (requires { buf[i].gpuInstanceId; }) {
        p.gpu_instance_id = buf[i].gpuInstanceId;
        p.compute_instance_id = buf[i].computeInstanceId;
      }
      p.graphics = graphics;
      out.push_back(p);
    }
    return out;
  }
  return nvmlError(NVML_ERROR_INSUFFICIENT_SIZE, name);
}

}  // namespace

Result<std::vector<ProcessInfo>> Device::computeProcesses() const {
  if (!api_) return noHandle("nvmlDeviceGetComputeRunningProcesses");
  if (api_->nvmlDeviceGetComputeRunningProcesses_v3)
    return fetchProcesses<nvmlProcessInfo_t>(api_->nvmlDeviceGetComputeRunningProcesses_v3, h_,
                                             "nvmlDeviceGetComputeRunningProcesses_v3", false);
  if (api_->nvmlDeviceGetComputeRunningProcesses_v2)
    return fetchProcesses<nvmlProcessInfo_v2_t>(api_->nvmlDeviceGetComputeRunningProcesses_v2, h_,
                                                "nvmlDeviceGetComputeRunningProcesses_v2", false);
  if (api_->nvmlDeviceGetComputeRunningProcesses)
    return fetchProcesses<nvmlProcessInfo_v1_t>(api_->nvmlDeviceGetComputeRunningProcesses, h_,
                                                "nvmlDeviceGetComputeRunningProcesses", false);
  return missing("nvmlDeviceGetComputeRunningProcesses");
}

Result<std::vector<ProcessInfo>> Device::graphicsProcesses() const {
  if (!api_) return noHandle("nvmlDeviceGetGraphicsRunningProcesses_v3");
  if (!api_->nvmlDeviceGetGraphicsRunningProcesses_v3) return missing("nvmlDeviceGetGraphicsRunningProcesses_v3");
  return fetchProcesses<nvmlProcessInfo_t>(api_->nvmlDeviceGetGraphicsRunningProcesses_v3, h_,
                                           "nvmlDeviceGetGraphicsRunningProcesses_v3", true);
}

Result<std::vector<ProcessUtil>> Device::processUtilization(std::uint64_t since_us) const {
  if (!api_) return noHandle("nvmlDeviceGetProcessUtilization");
  if (!api_->nvmlDeviceGetProcessUtilization) return missing("nvmlDeviceGetProcessUtilization");
  unsigned count = 0;
  nvmlReturn_t r = api_->nvmlDeviceGetProcessUtilization(h_, nullptr, &count, since_us);
  if (r == NVML_ERROR_NOT_FOUND) return std::vector<ProcessUtil>{};  // no samples since then
  if (r != NVML_SUCCESS && r != NVML_ERROR_INSUFFICIENT_SIZE) return nvmlError(r, "nvmlDeviceGetProcessUtilization");
  std::vector<nvmlProcessUtilizationSample_t> buf(count + 4);
  count = static_cast<unsigned>(buf.size());
  r = api_->nvmlDeviceGetProcessUtilization(h_, buf.data(), &count, since_us);
  if (r == NVML_ERROR_NOT_FOUND) return std::vector<ProcessUtil>{};
  if (r != NVML_SUCCESS) return nvmlError(r, "nvmlDeviceGetProcessUtilization");
  std::vector<ProcessUtil> out;
  for (unsigned i = 0; i < count; ++i)
    out.push_back({buf[i].pid, buf[i].timeStamp, buf[i].smUtil, buf[i].memUtil, buf[i].encUtil, buf[i].decUtil});
  return out;
}

Status Device::fieldValues(nvmlFieldValue_t* values, int count) const {
  if (!api_) return noHandle("nvmlDeviceGetFieldValues");
  if (!api_->nvmlDeviceGetFieldValues) return missing("nvmlDeviceGetFieldValues");
  nvmlReturn_t r = api_->nvmlDeviceGetFieldValues(h_, count, values);
  return r == NVML_SUCCESS ? Status::Ok() : nvmlError(r, "nvmlDeviceGetFieldValues");
}

GpmSample& GpmSample::operator=(GpmSample&& o) noexcept {
  if (this != &o) {
    reset();
    api_ = o.api_;
    h_ = o.h_;
    o.h_ = nullptr;
  }
  return *this;
}

void GpmSample::reset() {
  if (h_ && api_ && api_->nvmlGpmSampleFree) api_->nvmlGpmSampleFree(h_);
  h_ = nullptr;
}

Result<bool> Device::gpmSupported() const {
  if (!api_) return noHandle("nvmlGpmQueryDeviceSupport");
  if (!api_->nvmlGpmQueryDeviceSupport) return missing("nvmlGpmQueryDeviceSupport");
  nvmlGpmSupport_t s{};
  s.version = NVML_GPM_SUPPORT_VERSION;
  nvmlReturn_t r = api_->nvmlGpmQueryDeviceSupport(h_, &s);
  if (r != NVML_SUCCESS) return nvmlError(r, "nvmlGpmQueryDeviceSupport");
  return s.isSupportedDevice != 0;
}

Result<GpmSample> Device::gpmAllocSample() const {
  if (!api_) return noHandle("nvmlGpmSampleAlloc");
  if (!api_->nvmlGpmSampleAlloc || !api_->nvmlGpmSampleFree) return missing("nvmlGpmSampleAlloc");
  nvmlGpmSample_t h = nullptr;
  nvmlReturn_t r = api_->nvmlGpmSampleAlloc(&h);
  if (r != NVML_SUCCESS) return nvmlError(r, "nvmlGpmSampleAlloc");
  if (!h) return nvmlError(NVML_ERROR_UNKNOWN, "nvmlGpmSampleAlloc");
  return GpmSample(api_, h);
}

Status Device::gpmSampleGet(const GpmSample& sample) const {
  if (!api_) return noHandle("nvmlGpmSampleGet");
  if (!api_->nvmlGpmSampleGet) return missing("nvmlGpmSampleGet");
  nvmlReturn_t r = api_->nvmlGpmSampleGet(h_, sample.handle());
  return r == NVML_SUCCESS ? Status::Ok() : nvmlError(r, "nvmlGpmSampleGet");
}

Status Device::gpmMigSampleGet(unsigned gpu_instance_id, const GpmSample& sample) const {
  if (!api_) return noHandle("nvmlGpmMigSampleGet");
  if (!api_->nvmlGpmMigSampleGet) return missing("nvmlGpmMigSampleGet");
  nvmlReturn_t r = api_->nvmlGpmMigSampleGet(h_, gpu_instance_id, sample.handle());
  return r == NVML_SUCCESS ? Status::Ok() : nvmlError(r, "nvmlGpmMigSampleGet");
}

Status Device::gpmMetrics(const GpmSample& earlier, const GpmSample& later, nvmlGpmMetric_t* metrics,
                          unsigned count) const {
  if (!api_) return noHandle("nvmlGpmMetricsGet");
  if (!api_->nvmlGpmMetricsGet) return missing("nvmlGpmMetricsGet");
  if (count > NVML_GPM_METRIC_MAX) return nvmlError(NVML_ERROR_INVALID_ARGUMENT, "nvmlGpmMetricsGet");
  // About 3 KiB: each worker keeps its own so that a tick allocates nothing.
  thread_local nvmlGpmMetricsGet_t get;
  get = nvmlGpmMetricsGet_t{};
  get.version = NVML_GPM_METRICS_GET_VERSION;
  get.numMetrics = count;
  get.sample1 = earlier.handle();
  get.sample2 = later.handle();
  for (unsigned i = 0; i < count; ++i) get.metrics[i].metricId = metrics[i].metricId;
  nvmlReturn_t r = api_->nvmlGpmMetricsGet(&get);
  if (r != NVML_SUCCESS) return nvmlError(r, "nvmlGpmMetricsGet");
  for (unsigned i = 0; i < count; ++i) {
    metrics[i].nvmlReturn = get.metrics[i].nvmlReturn;
    metrics[i].value = get.metrics[i].value;
  }
  return Status::Ok();
}

// ---- Session ----

Result<std::unique_ptr<Session>> Session::open(const OpenOptions& options) {
  auto lib = platform::DynamicLibrary::open(options.library);
  if (!lib) {
    return Status::Nvml(NVML_ERROR_LIBRARY_NOT_FOUND,
                        "cannot load the NVML library " + options.library +
                            ": no NVIDIA driver is installed on this host, or its library is not on the "
                            "loader path (" +
                            lib.error() + ")");
  }
  std::unique_ptr<Session> s(new Session());
  s->lib_ = std::move(lib).value();
  auto api = loadNvmlApi(s->lib_);
  if (!api) return Status::Nvml(NVML_ERROR_LIBRARY_NOT_FOUND, api.error());
  s->api_ = std::move(api).value();
  Status st = s->initialise();
  if (!st.ok()) return st;
  return s;
}

Status Session::initialise() {
  auto init = newest(api_.nvmlInit_v2, api_.nvmlInit);
  nvmlReturn_t r = init();
  if (r != NVML_SUCCESS) {
    std::string msg = "NVML initialisation failed: " + errorMeaning(r);
    if (api_.gwSimLastError) {
      // The simulator says exactly what is wrong (scenario file, line and field).
      const char* detail = api_.gwSimLastError();
      if (detail && *detail) {
        msg = r == NVML_ERROR_UNKNOWN ? "NVML simulator: " + std::string(detail)
                                      : msg + " (simulator: " + std::string(detail) + ")";
      }
    }
    return Status::Nvml(static_cast<int>(r), msg);
  }
  initialised_ = true;
  return Status::Ok();
}

Status Session::reinit() {
  if (initialised_) {
    api_.nvmlShutdown();
    initialised_ = false;
  }
  return initialise();
}

Session::~Session() {
  if (initialised_) api_.nvmlShutdown();
}

Result<std::string> Session::driverVersion() const {
  if (!api_.nvmlSystemGetDriverVersion) return missing("nvmlSystemGetDriverVersion");
  char buf[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE] = {};
  nvmlReturn_t r = api_.nvmlSystemGetDriverVersion(buf, sizeof buf);
  if (r != NVML_SUCCESS) return nvmlError(r, "nvmlSystemGetDriverVersion");
  return std::string(buf);
}

Result<std::string> Session::nvmlVersion() const {
  if (!api_.nvmlSystemGetNVMLVersion) return missing("nvmlSystemGetNVMLVersion");
  char buf[NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE] = {};
  nvmlReturn_t r = api_.nvmlSystemGetNVMLVersion(buf, sizeof buf);
  if (r != NVML_SUCCESS) return nvmlError(r, "nvmlSystemGetNVMLVersion");
  return std::string(buf);
}

Result<int> Session::cudaDriverVersion() const {
  auto fn = newest(api_.nvmlSystemGetCudaDriverVersion_v2, api_.nvmlSystemGetCudaDriverVersion);
  if (!fn) return missing("nvmlSystemGetCudaDriverVersion");
  int v = 0;
  nvmlReturn_t r = fn(&v);
  if (r != NVML_SUCCESS) return nvmlError(r, "nvmlSystemGetCudaDriverVersion");
  return v;
}

Result<unsigned> Session::deviceCount() const {
  auto fn = newest(api_.nvmlDeviceGetCount_v2, api_.nvmlDeviceGetCount);
  if (!fn) return missing("nvmlDeviceGetCount");
  unsigned n = 0;
  nvmlReturn_t r = fn(&n);
  if (r != NVML_SUCCESS) return nvmlError(r, "nvmlDeviceGetCount");
  return n;
}

Result<Device> Session::deviceByIndex(unsigned index) const {
  auto fn = newest(api_.nvmlDeviceGetHandleByIndex_v2, api_.nvmlDeviceGetHandleByIndex);
  if (!fn) return missing("nvmlDeviceGetHandleByIndex");
  nvmlDevice_t d = nullptr;
  nvmlReturn_t r = fn(index, &d);
  if (r != NVML_SUCCESS) return nvmlError(r, "nvmlDeviceGetHandleByIndex");
  return Device(&api_, d);
}

Result<Device> Session::deviceByUuid(const std::string& uuid) const {
  if (!api_.nvmlDeviceGetHandleByUUID) return missing("nvmlDeviceGetHandleByUUID");
  nvmlDevice_t d = nullptr;
  nvmlReturn_t r = api_.nvmlDeviceGetHandleByUUID(uuid.c_str(), &d);
  if (r != NVML_SUCCESS) return nvmlError(r, "nvmlDeviceGetHandleByUUID");
  return Device(&api_, d);
}

Result<std::string> Session::processName(unsigned pid) const {
  if (!api_.nvmlSystemGetProcessName) return missing("nvmlSystemGetProcessName");
  char buf[256] = {};
  nvmlReturn_t r = api_.nvmlSystemGetProcessName(pid, buf, sizeof buf);
  if (r != NVML_SUCCESS) return nvmlError(r, "nvmlSystemGetProcessName");
  return std::string(buf);
}

std::string cudaVersionString(int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); }

int driverMajor(std::string_view driver_version) {
  int major = 0;
  for (char ch : driver_version) {
    if (ch < '0' || ch > '9' || major > 100000) break;
    major = major * 10 + (ch - '0');
  }
  return major;
}

const char* architectureName(unsigned arch) {
  switch (arch) {
    case NVML_DEVICE_ARCH_KEPLER:
      return "Kepler";
    case NVML_DEVICE_ARCH_MAXWELL:
      return "Maxwell";
    case NVML_DEVICE_ARCH_PASCAL:
      return "Pascal";
    case NVML_DEVICE_ARCH_VOLTA:
      return "Volta";
    case NVML_DEVICE_ARCH_TURING:
      return "Turing";
    case NVML_DEVICE_ARCH_AMPERE:
      return "Ampere";
    case NVML_DEVICE_ARCH_ADA:
      return "Ada Lovelace";
    case NVML_DEVICE_ARCH_HOPPER:
      return "Hopper";
    case 10:
      return "Blackwell";
    default:
      return "Unknown";
  }
}

const char* recoveryActionName(unsigned action) {
  switch (action) {
    case NVML_GPU_RECOVERY_ACTION_NONE:
      return "None";
    case NVML_GPU_RECOVERY_ACTION_GPU_RESET:
      return "Reset";
    case NVML_GPU_RECOVERY_ACTION_NODE_REBOOT:
      return "Reboot";
    case NVML_GPU_RECOVERY_ACTION_DRAIN_P2P:
      return "Drain P2P";
    case NVML_GPU_RECOVERY_ACTION_DRAIN_AND_RESET:
      return "Drain and Reset";
    default:
      return "Unknown";
  }
}

FabricStatus fabricStatus(const nvmlGpuFabricInfo_v3_t& info) {
  switch (info.state) {
    case NVML_GPU_FABRIC_STATE_NOT_STARTED:
      return kFabricNotStarted;
    case NVML_GPU_FABRIC_STATE_IN_PROGRESS:
      return kFabricInProgress;
    case NVML_GPU_FABRIC_STATE_COMPLETED:
      return info.status == NVML_SUCCESS ? kFabricSuccess : kFabricFailure;
    default:
      return kFabricNotSupported;
  }
}

const char* fabricStatusName(unsigned status) {
  switch (status) {
    case kFabricNotSupported:
      return "not supported";
    case kFabricNotStarted:
      return "not started";
    case kFabricInProgress:
      return "in progress";
    case kFabricSuccess:
      return "success";
    case kFabricFailure:
      return "failure";
    default:
      return "unknown";
  }
}

const char* fabricStateName(unsigned state) {
  switch (state) {
    case NVML_GPU_FABRIC_STATE_NOT_STARTED:
      return "Not Started";
    case NVML_GPU_FABRIC_STATE_IN_PROGRESS:
      return "In Progress";
    case NVML_GPU_FABRIC_STATE_COMPLETED:
      return "Completed";
    default:
      return "N/A";
  }
}

const char* fabricHealthSummaryName(unsigned summary) {
  switch (summary) {
    case NVML_GPU_FABRIC_HEALTH_SUMMARY_HEALTHY:
      return "Healthy";
    case NVML_GPU_FABRIC_HEALTH_SUMMARY_UNHEALTHY:
      return "Unhealthy";
    case NVML_GPU_FABRIC_HEALTH_SUMMARY_LIMITED_CAPACITY:
      return "Limited Capacity";
    default:
      return "N/A";
  }
}

const char* virtualizationModeName(unsigned mode) {
  switch (mode) {
    case NVML_GPU_VIRTUALIZATION_MODE_NONE:
      return "None";
    case NVML_GPU_VIRTUALIZATION_MODE_PASSTHROUGH:
      return "Pass-Through";
    case NVML_GPU_VIRTUALIZATION_MODE_VGPU:
      return "VGPU";
    case NVML_GPU_VIRTUALIZATION_MODE_HOST_VGPU:
      return "Host VGPU";
    case NVML_GPU_VIRTUALIZATION_MODE_HOST_VSGA:
      return "Host VSGA";
    default:
      return "Unknown";
  }
}

const char* addressingModeName(unsigned mode) {
  switch (mode) {
    case NVML_DEVICE_ADDRESSING_MODE_NONE:
      return "None";
    case NVML_DEVICE_ADDRESSING_MODE_HMM:
      return "HMM";
    case NVML_DEVICE_ADDRESSING_MODE_ATS:
      return "ATS";
    default:
      return "Unknown";
  }
}

const char* brandName(unsigned brand) {
  switch (brand) {
    case NVML_BRAND_QUADRO:
      return "Quadro";
    case NVML_BRAND_TESLA:
      return "Tesla";
    case NVML_BRAND_NVS:
      return "NVS";
    case NVML_BRAND_GRID:
      return "Grid";
    case NVML_BRAND_GEFORCE:
      return "GeForce";
    case NVML_BRAND_TITAN:
      return "Titan";
    case NVML_BRAND_NVIDIA_RTX:
      return "NVIDIA RTX";
    case NVML_BRAND_NVIDIA:
      return "NVIDIA";
    case NVML_BRAND_GEFORCE_RTX:
      return "GeForce RTX";
    default:
      return "Unknown";
  }
}

double peakMemoryBandwidthGBs(unsigned mem_clock_mhz, unsigned bus_width_bits) {
  return 2.0 * mem_clock_mhz * 1e6 * (bus_width_bits / 8.0) / 1e9;
}

std::string normalizeBusId(const std::string& in) {
  unsigned domain = 0, bus = 0, dev = 0, fn = 0;
  std::string s;
  for (char c : in) s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (std::sscanf(s.c_str(), "%x:%x:%x.%x", &domain, &bus, &dev, &fn) == 4) {
  } else if (std::sscanf(s.c_str(), "%x:%x.%x", &bus, &dev, &fn) == 3) {
    domain = 0;
  } else if (std::sscanf(s.c_str(), "%x:%x:%x", &domain, &bus, &dev) == 3) {
    fn = 0;
  } else {
    return in;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%08X:%02X:%02X.%X", domain, bus, dev, fn);
  return buf;
}

}  // namespace gw::nvml
