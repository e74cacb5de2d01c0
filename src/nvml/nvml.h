// Typed NVML: a session (library loaded + initialised) and Device handles whose calls return a
// value or a typed error carrying NVML's code. Nothing here invents data.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"
#include "nvml/errors.h"
#include "nvml/nvml_api.h"

namespace gw::nvml {

struct PciInfo {
  std::string bus_id;  // "00000000:3B:00.0", NVML's format
  unsigned domain = 0, bus = 0, device = 0;
  unsigned device_id = 0;  // PCI device id (upper 16 bits of pciDeviceId)
  unsigned vendor_id = 0;
  unsigned subsystem_id = 0;
};

struct MemoryInfo {
  std::uint64_t total = 0, used = 0, free = 0, reserved = 0;  // bytes
};

struct ProcessInfo {
  unsigned pid = 0;
  std::uint64_t used_bytes = 0;  // 0 when unknown
  unsigned gpu_instance_id = 0xffffffffU;
  unsigned compute_instance_id = 0xffffffffU;
  bool graphics = false;
};

struct ProcessUtil {
  unsigned pid = 0;
  std::uint64_t timestamp_us = 0;
  unsigned sm = 0, mem = 0, enc = 0, dec = 0;
};

struct RemappedRows {
  unsigned correctable = 0, uncorrectable = 0;
  bool pending = false, failure = false;
};

struct Version {
  int major = 0, minor = 0;
};

// MIG (nvidia-smi mig ...): a GPU instance profile, as nvmlDeviceGetGpuInstanceProfileInfo(V)
// answers for one NVML_GPU_INSTANCE_PROFILE_* index.
struct MigGpuProfile {
  unsigned index = 0;  // NVML_GPU_INSTANCE_PROFILE_*
  unsigned id = 0;     // the profile id: what -cgi takes and nvidia-smi prints
  unsigned slices = 0, instances = 0, sms = 0;
  unsigned copy_engines = 0, decoders = 0, encoders = 0, jpegs = 0, ofas = 0;
  bool p2p = false;
  std::uint64_t memory_mib = 0;
  std::string name;  // "MIG 1g.10gb"; empty from a driver without the V call
};
struct MigComputeProfile {
  unsigned id = 0;  // NVML_COMPUTE_INSTANCE_PROFILE_*, which is also its id
  unsigned slices = 0, instances = 0, sms = 0;
  unsigned copy_engines = 0, decoders = 0, encoders = 0, jpegs = 0, ofas = 0;
};
struct MigPlacement {
  unsigned start = 0, size = 0;
};
struct GpuInstanceInfo {
  unsigned id = 0, profile_id = 0;
  MigPlacement placement;  // memory slices
};
struct ComputeInstanceInfo {
  unsigned id = 0, profile_id = 0;
  MigPlacement placement;  // compute slices within the GPU instance
};

// NVML's profile indexes run below this (NVML_GPU_INSTANCE_PROFILE_COUNT of nvml.h R525 and
// later; older drivers answer INVALID_ARGUMENT for the newest indexes).
inline constexpr unsigned kGpuInstanceProfileSlots = 10;
inline constexpr unsigned kComputeInstanceProfileSlots = 7;
// No GPU holds more instances of one profile; a count NVML answers above it is refused.
inline constexpr unsigned kMaxMigInstances = 8;

class ComputeInstance {
 public:
  ComputeInstance() = default;
  ComputeInstance(const NvmlApi* api, nvmlComputeInstance_t h) : api_(h ? api : nullptr), h_(h) {}
  Result<ComputeInstanceInfo> info() const;
  Status destroy() const;

 private:
  const NvmlApi* api_ = nullptr;
  nvmlComputeInstance_t h_ = nullptr;
};

class GpuInstance {
 public:
  GpuInstance() = default;
  GpuInstance(const NvmlApi* api, nvmlGpuInstance_t h) : api_(h ? api : nullptr), h_(h) {}
  Result<GpuInstanceInfo> info() const;
  Status destroy() const;
  Result<MigComputeProfile> computeProfile(unsigned index) const;
  Result<unsigned> computeCapacity(unsigned profile_id) const;
  Result<ComputeInstance> createComputeInstance(unsigned profile_id) const;
  // The live compute instances of one profile.
  Result<std::vector<ComputeInstance>> computeInstances(unsigned profile_id) const;
  Result<ComputeInstance> computeInstanceById(unsigned id) const;

 private:
  const NvmlApi* api_ = nullptr;
  nvmlGpuInstance_t h_ = nullptr;
};

// One GPM sample buffer (nvmlGpmSampleAlloc), freed when destroyed. It must not outlive the
// Session whose library allocated it.
class GpmSample {
 public:
  GpmSample() = default;
  GpmSample(const NvmlApi* api, nvmlGpmSample_t h) : api_(api), h_(h) {}
  ~GpmSample() { reset(); }
  GpmSample(GpmSample&& o) noexcept : api_(o.api_), h_(o.h_) { o.h_ = nullptr; }
  GpmSample& operator=(GpmSample&& o) noexcept;
  GpmSample(const GpmSample&) = delete;
  GpmSample& operator=(const GpmSample&) = delete;
  nvmlGpmSample_t handle() const { return h_; }
  void reset();

 private:
  const NvmlApi* api_ = nullptr;
  nvmlGpmSample_t h_ = nullptr;
};

class Device {
 public:
  // A default Device (no handle: a GPU that was lost before it could be opened) answers every
  // call with NVML_ERROR_INVALID_ARGUMENT, as NVML does for a null handle, instead of crashing.
  Device() = default;
  Device(const NvmlApi* api, nvmlDevice_t h) : api_(h ? api : nullptr), h_(h) {}
  nvmlDevice_t handle() const { return h_; }
  bool valid() const { return h_ != nullptr; }

  Result<std::string> name() const;
  Result<std::string> uuid() const;
  Result<std::string> serial() const;
  Result<std::string> vbiosVersion() const;
  Result<std::string> inforomImageVersion() const;
  Status validateInforom() const;
  Result<std::string> boardPartNumber() const;
  // The board's id (GPUs on one board share it) and whether the board carries several GPUs.
  Result<unsigned> boardId() const;
  Result<bool> multiGpuBoard() const;
  Result<unsigned> index() const;
  Result<unsigned> minorNumber() const;
  Result<PciInfo> pciInfo() const;
  Result<unsigned> architecture() const;  // NVML_DEVICE_ARCH_*
  Result<Version> computeCapability() const;
  Result<unsigned> cudaCores() const;
  Result<nvmlDeviceAttributes_t> attributes() const;
  Result<MemoryInfo> memory() const;
  Result<MemoryInfo> bar1Memory() const;
  // Confidential computing's protected memory (all zero while CC is off, NOT_SUPPORTED before Hopper).
  Result<MemoryInfo> protectedMemory() const;
  Result<unsigned> memoryBusWidth() const;                // bits
  Result<unsigned> clock(nvmlClockType_t type) const;     // MHz, current
  Result<unsigned> maxClock(nvmlClockType_t type) const;  // MHz
  Result<unsigned> appClock(nvmlClockType_t type) const;  // MHz
  Result<unsigned> pcieGen() const;
  Result<unsigned> pcieWidth() const;
  Result<unsigned> pcieMaxGen() const;
  Result<unsigned> pcieMaxWidth() const;
  // The GPU's own highest generation (pcieMaxGen is the link's: the lower of GPU and slot).
  Result<unsigned> pcieGpuMaxGen() const;
  // Per-process accounting: on or off, and how many processes its buffer keeps.
  Result<bool> accountingMode() const;
  Result<unsigned> accountingBufferSize() const;
  // GSP firmware: in use now, and by default.
  struct GspMode {
    bool enabled = false, by_default = false;
  };
  Result<GspMode> gspFirmwareMode() const;
  Result<std::string> gspFirmwareVersion() const;
  Result<unsigned> virtualizationMode() const;  // NVML_GPU_VIRTUALIZATION_MODE_*
  Result<unsigned> pcieThroughputKBs(nvmlPcieUtilCounter_t counter) const;
  Result<unsigned> pcieReplayCounter() const;
  Result<unsigned> powerUsageMw() const;
  Result<unsigned> powerLimitMw() const;  // management limit
  Result<unsigned> enforcedPowerLimitMw() const;
  Result<unsigned> defaultPowerLimitMw() const;
  Result<std::pair<unsigned, unsigned>> powerLimitConstraintsMw() const;
  Result<std::uint64_t> energyMj() const;  // total since driver load, mJ
  Result<unsigned> temperature() const;    // °C
  Result<unsigned> temperatureThreshold(nvmlTemperatureThresholds_t t) const;
  Result<unsigned> fanSpeed() const;  // %
  Result<unsigned> pstate() const;    // 0..15, 32 unknown
  Result<std::uint64_t> clockEventReasons() const;
  Result<nvmlUtilization_t> utilization() const;
  Result<unsigned> encoderUtilization() const;
  Result<unsigned> decoderUtilization() const;
  // The JPEG decoder and optical flow accelerator (NVML 12, R525+; nvidia-smi dmon's jpg, ofa).
  Result<unsigned> jpegUtilization() const;
  Result<unsigned> ofaUtilization() const;
  Result<bool> eccEnabled() const;
  Result<std::uint64_t> eccErrors(nvmlMemoryErrorType_t type, nvmlEccCounterType_t counter) const;
  Result<unsigned> retiredPages(nvmlPageRetirementCause_t cause) const;
  Result<bool> retiredPagesPending() const;
  Result<RemappedRows> remappedRows() const;
  Result<nvmlRowRemapperHistogramValues_t> rowRemapperHistogram() const;
  // SRAM's unique uncorrectable errors by kind and unit, and the RMA threshold flag (R550+).
  Result<nvmlEccSramErrorStatus_v1_t> sramEccStatus() const;
  // NVML_DEVICE_ADDRESSING_MODE_* (R570+); whether the chip-to-chip link is in use (R550+).
  Result<unsigned> addressingMode() const;
  Result<bool> c2cEnabled() const;
  // Registration with the NVSwitch fabric: v3 where the driver has it (R550+), else v2 with the
  // health summary NOT_SUPPORTED.
  Result<nvmlGpuFabricInfo_v3_t> fabricInfo() const;
  Result<bool> persistenceMode() const;
  Result<unsigned> computeMode() const;
  Result<bool> displayActive() const;
  Result<bool> migEnabled() const;
  Result<unsigned> maxMigDevices() const;
  Result<Device> migDevice(unsigned index) const;
  Result<bool> isMigDevice() const;
  Result<Device> parentOfMig() const;
  Result<unsigned> gpuInstanceId() const;
  Result<unsigned> computeInstanceId() const;
  Result<bool> nvlinkActive(unsigned link) const;
  Result<unsigned> nvlinkVersion(unsigned link) const;
  Result<PciInfo> nvlinkRemotePci(unsigned link) const;
  Result<unsigned> nvlinkRemoteType(unsigned link) const;  // NVML_NVLINK_DEVICE_TYPE_*
  Result<std::uint64_t> nvlinkErrorCounter(unsigned link, nvmlNvLinkErrorCounter_t c) const;
  Result<unsigned> topologyCommonAncestor(const Device& other) const;  // NVML_TOPOLOGY_*
  Result<std::vector<unsigned>> cpuAffinity() const;                   // CPU ids
  Result<std::vector<unsigned>> numaNodes() const;                     // memory affinity, NUMA node ids
  Result<std::vector<ProcessInfo>> computeProcesses() const;
  Result<std::vector<ProcessInfo>> graphicsProcesses() const;
  Result<std::vector<ProcessUtil>> processUtilization(std::uint64_t since_us) const;
  // Fills values[i].nvmlReturn per entry; the Status is the call's own result.
  Status fieldValues(nvmlFieldValue_t* values, int count) const;

  // --- nvidia-smi's query properties (gpuwarden smi --query-*; src/fields/smi_query.cpp) ---
  // {current, pending}: nvidia-smi shows both halves of NVML's mode pairs.
  Result<std::pair<bool, bool>> eccModes() const;
  Result<std::pair<bool, bool>> migModes() const;
  Result<bool> displayMode() const;  // a display is attached to a connector
  Result<bool> powerManagementMode() const;
  Result<std::string> inforomVersion(nvmlInforomObject_t object) const;
  Result<std::uint64_t> supportedClockEventReasons() const;
  Result<unsigned> defaultAppClock(nvmlClockType_t type) const;  // MHz
  Result<std::uint64_t> memoryErrorCounter(nvmlMemoryErrorType_t type, nvmlEccCounterType_t counter,
                                           nvmlMemoryLocation_t location) const;
  // The addresses of the pages retired for `cause` (the count alone is retiredPages()).
  Result<std::vector<std::uint64_t>> retiredPageAddresses(nvmlPageRetirementCause_t cause) const;
  // --- end of nvidia-smi's query properties ---
  // GPM (Hopper and newer). A driver without the functions answers FUNCTION_NOT_FOUND, an older
  // GPU false.
  Result<bool> gpmSupported() const;
  Result<GpmSample> gpmAllocSample() const;
  Status gpmSampleGet(const GpmSample& sample) const;
  // This (physical) GPU's instance gpu_instance_id, in MIG mode.
  Status gpmMigSampleGet(unsigned gpu_instance_id, const GpmSample& sample) const;
  // The metrics over the interval between two samples of this GPU: metrics[i].metricId in,
  // metrics[i].value and .nvmlReturn out; the Status is the call's own result.
  Status gpmMetrics(const GpmSample& earlier, const GpmSample& later, nvmlGpmMetric_t* metrics, unsigned count) const;

  // --- Setters (`gpuwarden smi -pm/-pl/-lgc/...`; they need root, as in NVML). Each answers NVML's
  // own code: NO_PERMISSION without the privilege, INVALID_ARGUMENT outside the board's range. ---
  Status setPersistenceMode(bool enabled) const;
  Status setPowerLimitMw(unsigned milliwatts) const;
  Status setGpuLockedClocks(unsigned min_mhz, unsigned max_mhz) const;
  Status resetGpuLockedClocks() const;
  Status setMemoryLockedClocks(unsigned min_mhz, unsigned max_mhz) const;
  Status resetMemoryLockedClocks() const;
  Status setApplicationsClocks(unsigned mem_mhz, unsigned graphics_mhz) const;
  Status resetApplicationsClocks() const;
  Status setComputeMode(unsigned mode) const;  // NVML_COMPUTEMODE_*
  Status setEccMode(bool enabled) const;       // pending until the next reboot
  // MIG mode; *activation is NVML's activationStatus (RESET_REQUIRED: pending until a reset).
  Status setMigMode(bool enabled, nvmlReturn_t* activation) const;
  // MIG partitions: NOT_SUPPORTED while MIG is off, as NVML answers.
  Result<MigGpuProfile> gpuInstanceProfile(unsigned index) const;  // index: NVML_GPU_INSTANCE_PROFILE_*
  Result<std::vector<MigPlacement>> gpuInstancePlacements(unsigned profile_id) const;
  Result<unsigned> gpuInstanceCapacity(unsigned profile_id) const;
  Result<GpuInstance> createGpuInstance(unsigned profile_id) const;
  // The live GPU instances of one profile; `room` is the profile's instance count.
  Result<std::vector<GpuInstance>> gpuInstances(unsigned profile_id, unsigned room) const;
  Result<GpuInstance> gpuInstanceById(unsigned id) const;

  // --- For `gpuwarden smi -q` (nvidia-smi's log): facts only that view shows. ---
  Result<unsigned> brand() const;  // NVML_BRAND_*

 private:
  const NvmlApi* api_ = nullptr;
  nvmlDevice_t h_ = nullptr;
};

struct OpenOptions {
  std::string library = "libnvidia-ml.so.1";  // path or soname
};

// One loaded and initialised NVML. Shuts NVML down when destroyed.
class Session {
 public:
  // Loads the library and calls nvmlInit. The error explains in one sentence what is wrong
  // (library missing, driver not loaded, driver/library mismatch, bad simulator scenario).
  static Result<std::unique_ptr<Session>> open(const OpenOptions& options);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  const NvmlApi& api() const { return api_; }
  const std::string& libraryPath() const { return lib_.path(); }
  bool isSimulator() const { return api_.gwSimGetTime != nullptr; }

  // Re-initialise after the driver went away (nvmlShutdown + nvmlInit).
  Status reinit();

  Result<std::string> driverVersion() const;
  Result<std::string> nvmlVersion() const;
  Result<int> cudaDriverVersion() const;  // 12040 = CUDA 12.4
  Result<unsigned> deviceCount() const;
  Result<Device> deviceByIndex(unsigned index) const;
  Result<Device> deviceByUuid(const std::string& uuid) const;
  Result<std::string> processName(unsigned pid) const;

 private:
  Session() = default;
  Status initialise();
  platform::DynamicLibrary lib_;
  NvmlApi api_;
  bool initialised_ = false;
};

// "12.4" from 12040.
std::string cudaVersionString(int v);
// 580 from "580.159.04"; 0 when the version does not start with a number.
int driverMajor(std::string_view driver_version);
// Architecture name ("Hopper") from NVML_DEVICE_ARCH_*.
const char* architectureName(unsigned arch);
// nvidia-smi's brand name ("NVIDIA", "Tesla", "GeForce RTX") from NVML_BRAND_*.
const char* brandName(unsigned brand);
// NVML_GPU_RECOVERY_ACTION_* as nvidia-smi names it ("None", "Reset", "Reboot", "Drain P2P",
// "Drain and Reset"; NVIDIA's memory error management guide); "Unknown" for a code NVML added later.
const char* recoveryActionName(unsigned action);
// NVML_GPU_VIRTUALIZATION_MODE_* as nvidia-smi names it ("None", "Pass-Through", "VGPU", "Host VGPU",
// "Host VSGA").
const char* virtualizationModeName(unsigned mode);
// NVML_DEVICE_ADDRESSING_MODE_* as nvidia-smi names it ("None", "HMM", "ATS").
const char* addressingModeName(unsigned mode);
// The fabric registration in one number, as DCGM numbers it (dcgmFabricManagerStatus_t, field 170):
// 0 not supported (no NVSwitch fabric), 1 not started (nvidia-fabricmanager not running), 2 in
// progress, 3 success, 4 failure (completed with an error status).
enum FabricStatus : unsigned {
  kFabricNotSupported = 0,
  kFabricNotStarted = 1,
  kFabricInProgress = 2,
  kFabricSuccess = 3,
  kFabricFailure = 4,
};
FabricStatus fabricStatus(const nvmlGpuFabricInfo_v3_t& info);
const char* fabricStatusName(unsigned status);  // "not started", … for messages
// nvidia-smi's words: state "Not Started" / "In Progress" / "Completed" ("N/A" not supported),
// health summary "Healthy" / "Unhealthy" / "Limited Capacity".
const char* fabricStateName(unsigned state);
const char* fabricHealthSummaryName(unsigned summary);
// One field of the health mask (NVML_GPU_FABRIC_HEALTH_GET): shift and width of the field.
inline unsigned fabricHealthField(unsigned mask, unsigned shift, unsigned width) { return (mask >> shift) & width; }
// Peak memory bandwidth in GB/s from the max memory clock (MHz) and bus width (bits): NVML
// reports the data clock such that two transfers per clock give the datasheet figure for HBM
// and GDDR alike.
double peakMemoryBandwidthGBs(unsigned mem_clock_mhz, unsigned bus_width_bits);
// Normalises "0000:3b:00.0" / "00000000:3B:00.0" / "3b:00.0" to NVML's "00000000:3B:00.0".
std::string normalizeBusId(const std::string& bus_id);

}  // namespace gw::nvml
