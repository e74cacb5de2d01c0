// A loaded scenario brought to life: devices (the objects NVML handles point to), the event
// timeline and the clock. A world is never freed while the library is loaded, so a stale
// handle from an earlier nvmlInit is still safe to look at (it is then rejected).
#pragma once

#include <atomic>
#include <cmath>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "nvml/nvml_abi.h"
#include "sim/physics.h"
#include "sim/scenario.h"
#include "sim/sim_clock.h"

namespace gw::sim {

struct World;
struct Device;
struct GpuInstance;
struct ComputeInstance;

constexpr std::uint32_t kDeviceMagic = 0x56444757;           // "GWDV"
constexpr std::uint32_t kGpuInstanceMagic = 0x49474757;      // "GWGI"
constexpr std::uint32_t kComputeInstanceMagic = 0x49434757;  // "GWCI"
constexpr unsigned kNoInstance = 0xFFFFFFFFu;                // gpuInstanceId outside MIG

// What NVML's setters changed on a physical GPU (sim_state.h keeps it across processes).
// 0 in a clock pair: not set, the board's own behaviour.
struct DeviceSettings {
  unsigned gpu_lock_min = 0, gpu_lock_max = 0;  // nvmlDeviceSetGpuLockedClocks, MHz
  unsigned mem_lock_min = 0, mem_lock_max = 0;  // nvmlDeviceSetMemoryLockedClocks, MHz
  unsigned app_mem = 0, app_graphics = 0;       // nvmlDeviceSetApplicationsClocks, MHz
  unsigned compute_mode = NVML_COMPUTEMODE_DEFAULT;
  // ECC: a change is pending until the next boot (GPUWARDEN_SIM_BOOT), as on a real board.
  bool ecc_current = false, ecc_pending = false;
};

struct Device {
  std::uint32_t magic = kDeviceMagic;
  World* world = nullptr;
  bool is_mig = false;
  unsigned index = 0;              // GPU index, or MIG device index on its parent
  unsigned minor = 0;              // the physical GPU's /dev/nvidia<minor>
  Device* parent = nullptr;        // MIG devices only
  const GpuConfig* cfg = nullptr;  // of the physical GPU
  const GpuProfile* profile = nullptr;
  const MigInstanceConfig* mig = nullptr;
  std::string uuid, name, serial;
  nvmlPciInfo_t pci{};
  std::vector<const FaultConfig*> gates;  // fall_off_bus and hang faults of the GPU
  std::unique_ptr<GpuPhysics> physics;    // physical GPUs only
  // MIG layout (sim/mig.h changes it): guarded by World::mig_mu, as instances come and go while
  // other threads read them. A destroyed MIG device is marked gone, never freed, so that a handle
  // to it is still safe to look at (and rejected).
  std::vector<Device*> mig_children;
  std::vector<GpuInstance*> gpu_instances;
  std::atomic<bool> mig_current{false};  // MIG mode (physical GPUs)
  std::atomic<bool> gone{false};         // MIG devices: its compute instance was destroyed
  std::atomic<bool> persistence{false};
  mutable std::mutex settings_mu;  // guards settings
  DeviceSettings settings;
  DeviceSettings readSettings() const {
    std::lock_guard lock(settings_mu);
    return settings;
  }
};

// nvmlGpuInstance_t and nvmlComputeInstance_t point to these. Like devices they are never freed
// while the library is loaded; destroyed ones are marked dead and rejected.
struct GpuInstance {
  std::uint32_t magic = kGpuInstanceMagic;
  Device* gpu = nullptr;
  const MigProfile* profile = nullptr;
  unsigned id = 0, start = 0;  // start: first memory slice
  bool alive = true;
  std::vector<ComputeInstance*> cis;  // the live ones
};

struct ComputeInstance {
  std::uint32_t magic = kComputeInstanceMagic;
  GpuInstance* gi = nullptr;
  unsigned id = 0;
  unsigned profile = 0;          // NVML_COMPUTE_INSTANCE_PROFILE_*, also its profile id
  unsigned start = 0, size = 0;  // compute slices within the GPU instance
  bool alive = true;
  MigInstanceConfig config;  // what the MIG device's `mig` points to
  Device* device = nullptr;  // the MIG device of this instance
};

struct TimedEvent {
  double t;
  unsigned gpu;
  unsigned long long type;
  unsigned long long data;
};

struct World {
  World(Scenario s, std::string key, ClockSettings clock);

  Scenario scenario;
  std::string key;  // scenario sources + clock settings: same key, same machine
  SimClock clock;
  std::vector<std::unique_ptr<Device>> gpus;
  std::vector<std::unique_ptr<Device>> migs;  // appended under mig_mu, never shrunk
  mutable std::mutex mig_mu;                  // guards the MIG layout of every GPU
  std::vector<std::unique_ptr<GpuInstance>> gpu_instances;
  std::vector<std::unique_ptr<ComputeInstance>> compute_instances;
  std::vector<TimedEvent> events;  // sorted by time
  std::vector<const FaultConfig*> driver_faults;
  // call_error faults, and beside each the calls of its function made in its window so far (in
  // this process: every process that loads the simulator counts its own; 64 bits never wrap back
  // under after_calls).
  std::vector<const FaultConfig*> call_faults;
  std::unique_ptr<std::atomic<std::uint64_t>[]> call_counts;
  std::atomic<double> session_start{0};  // simulated time of the last 0 → 1 nvmlInit
  long long epoch_us_at_zero = 0;        // wall clock (µs since 1970) at simulated t = 0

  // Rounded, not truncated: t = 0.29 is 289999.99999999994 µs in binary.
  long long epochUs(double t) const { return epoch_us_at_zero + std::llround(t * 1e6); }
  bool driverUnloadedAt(double t) const;
  // True when the driver went away after this session's nvmlInit: the session is dead until
  // the caller shuts down and initialises again.
  bool sessionStale(double t) const;
  // The process with this pid on any GPU that exists (running or zombie) at t.
  const ProcessConfig* findProcess(unsigned pid, double t) const;
};

// Is the process present at t (listed by nvmlDeviceGetComputeRunningProcesses)?
inline bool processPresent(const ProcessConfig& p, double t) { return t >= p.start && (t < p.stop || p.zombie); }
inline bool processRunning(const ProcessConfig& p, double t) { return t >= p.start && t < p.stop; }

// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" from two 64-bit hashes.
std::string formatUuid(const char* prefix, std::uint64_t a, std::uint64_t b);
// PCI info of a GPU or an NVSwitch.
nvmlPciInfo_t makePciInfo(unsigned domain, unsigned bus, unsigned device, unsigned function, unsigned device_id,
                          unsigned subsystem_id);

}  // namespace gw::sim
