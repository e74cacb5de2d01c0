// The scenario once parsed and validated: plain data, no YAML. Everything the simulator does
// is a function of this, the seed and the simulated time.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "nvml/nvml_abi.h"
#include "sim/profiles.h"

namespace gw::sim {

constexpr double kForever = std::numeric_limits<double>::infinity();

enum class WorkloadPreset { kIdle, kTraining, kInference, kBursty, kCurve, kStarved };

struct Workload {
  WorkloadPreset preset = WorkloadPreset::kIdle;
  std::optional<double> level;                   // mean utilisation override, percent
  std::vector<std::pair<double, double>> curve;  // (t seconds, percent), piecewise linear
  // How hard the work drives the power rail against a compute-bound load (1); unset: the preset's.
  std::optional<double> power;
};

struct ProcessConfig {
  unsigned pid = 0;
  std::string name;
  unsigned long long memory_mib = 0;
  double start = 0;        // seconds
  double stop = kForever;  // job end; a zombie keeps its memory after it
  bool zombie = false;
  double share = 1;                      // weight of this process in the GPU's utilisation
  std::optional<unsigned> gpu_instance;  // MIG placement
  unsigned compute_instance = 0;
};

struct MigInstanceConfig {
  const MigProfile* profile = nullptr;
  unsigned gpu_instance_id = 0;
  unsigned compute_instance_id = 0;
};

struct GpuConfig {
  unsigned index = 0;
  unsigned minor = 0;  // /dev/nvidia<minor>: the driver's probe order, not NVML's PCI-ordered index
  const GpuProfile* profile = nullptr;
  std::string uuid;  // generated from the seed when empty
  std::string serial;
  unsigned pci_domain = 0, pci_bus = 0, pci_device = 0, pci_function = 0;
  int numa_node = 0;
  std::vector<std::pair<unsigned, unsigned>> cpus;  // inclusive ranges
  int pcie_switch = -1;                             // -1: directly below the host bridge
  int host_bridge = 0;
  Workload workload;
  bool ecc = false;
  bool persistence = false;
  unsigned power_limit_mw = 0;  // enforced limit at start, milliwatts (need not be whole watts)
  double ambient = 30;          // inlet air, degrees C
  std::optional<unsigned> fan;  // fans pinned at this percent; unset: the board's own control
  std::vector<ProcessConfig> processes;
  bool mig_enabled = false;
  std::vector<MigInstanceConfig> mig_instances;
};

enum class NvLinkRemote { kNone, kSwitch, kGpu };

struct NvLinkConfig {
  NvLinkRemote remote = NvLinkRemote::kNone;
  unsigned peer = 0;          // GPU index when remote is kGpu
  unsigned switch_index = 0;  // which NVSwitch when remote is kSwitch
};

enum class FaultType {
  kXid,
  kEccSbe,
  kEccDbe,
  kRetiredPages,
  kRowRemap,
  kThermalSlowdown,
  kPowerSlowdown,
  kSwPowerCap,
  kPowerBrake,
  kPcieDowntrain,
  kPcieReplay,
  kNvlinkDown,
  kNvlinkErrors,
  kFanFailure,
  kFallOffBus,
  kHang,
  kDriverUnloaded,
  kClocksLocked,
  kCoolingFailure,
  kPstateStuck,
  kFabric,
  kCallError,
};

// One injected fault. Parameters not used by a type keep their defaults; the parser allows
// per type only the keys listed in faults.cpp.
struct FaultConfig {
  FaultType type = FaultType::kXid;
  std::string type_name;
  std::vector<unsigned> gpus;  // empty for machine-wide faults (driver_unloaded)
  double at = 0;
  double duration = kForever;
  unsigned code = 0;             // xid
  int action = -1;               // xid: the recovery action it sets (NVML_GPU_RECOVERY_ACTION_*), -1 none
  unsigned long long count = 0;  // ecc
  unsigned sbe = 0, dbe = 0;     // retired pages
  bool pending = false;          // retired pages / row remap
  unsigned correctable = 0, uncorrectable = 0;
  bool failure = false;                                         // row remap
  unsigned gen = 0, width = 0;                                  // pcie downtrain
  double rate = 0;                                              // pcie replay per second
  int link = -1;                                                // nvlink; -1 = every link
  double replay = 0, recovery = 0, crc_flit = 0, crc_data = 0;  // nvlink errors per second
  double seconds = 0;                                           // hang: wall seconds each call blocks
  std::string call;                                             // hang: only this function; call_error: the function
  unsigned error = 0;                                           // call_error: the nvmlReturn_t it answers
  unsigned after_calls = 0;  // call_error: calls in the window answered normally first
  double temperature = 0;    // thermal slowdown target, 0 = slowdown threshold + 6
  double clock_factor = 0;   // power slowdown/brake: fraction of the clock left
  double watts = 0;          // clocks locked: power at 0 % utilisation, 0 = profile default
  double factor = 0;         // cooling failure: multiplier of the thermal resistance, 0 = default
  unsigned pstate = 0;       // pstate stuck: the P-state held, 0 = P8
  // fabric: the registration's state (NVML_GPU_FABRIC_STATE_*; COMPLETED with `fabric_failed` is a
  // registration that ended in an error) and the health-mask conditions raised (their TRUE bits).
  unsigned fabric_state = NVML_GPU_FABRIC_STATE_COMPLETED;
  bool fabric_failed = false;
  unsigned fabric_health = 0;

  bool activeAt(double t) const { return t >= at && t < at + duration; }
  // Seconds of the window elapsed at t, for rates.
  double elapsedAt(double t) const {
    if (t <= at) return 0;
    double e = t - at;
    return e < duration ? e : duration;
  }
};

enum class InitError { kNone, kDriverNotLoaded, kLibRmVersionMismatch, kNoPermission };

struct Scenario {
  std::string name;
  std::string description;
  std::uint64_t seed = 1;
  std::string driver_version = "550.54.15";
  std::string nvml_version = "12.550.54.15";
  int cuda_driver_version = 12040;
  bool privileged = true;
  InitError init_error = InitError::kNone;
  std::vector<GpuConfig> gpus;
  // nvlinks[gpu][link]
  std::vector<std::vector<NvLinkConfig>> nvlinks;
  unsigned nvswitch_count = 0;
  // What the GPUs are to a hypervisor: bare metal (NONE), or handed whole to a VM (PASSTHROUGH).
  unsigned virtualization = NVML_GPU_VIRTUALIZATION_MODE_NONE;
  std::vector<FaultConfig> faults;
};

}  // namespace gw::sim
