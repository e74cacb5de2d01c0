// What the sampler publishes: one view per GPU (and per MIG device) with its identity, its state,
// and the latest value of every catalog field. The exporter, the JSON API and the health rules
// read these copies; they never call NVML themselves, so a hung GPU cannot slow them down.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <string>
#include <vector>

#include "fields/catalog.h"

namespace gw::collect {

enum class GpuState {
  Up,       // answering within its deadline
  Stalled,  // an NVML call on it exceeded its deadline; values are stale
  Lost,     // NVML says GPU_IS_LOST / RESET_REQUIRED
  Down,     // the driver is gone (re-initialising), or the GPU vanished after re-enumeration
};
const char* stateName(GpuState s);

struct GpuIdentity {
  unsigned index = 0;      // NVML index; for MIG devices the parent's index
  std::string uuid;        // "GPU-..." or "MIG-..."
  std::string name;        // "NVIDIA H100 80GB HBM3"
  std::string pci_bus_id;  // "00000000:18:00.0"
  std::string device;      // "nvidia<minor>" (dcgm-exporter's device label); "" until the minor is known
  bool is_mig = false;
  std::string parent_uuid;       // MIG only
  std::string mig_profile;       // "1g.10gb", MIG only
  unsigned gpu_instance_id = 0;  // MIG only
  unsigned compute_instance_id = 0;

  // What tells this GPU apart everywhere (rules, incidents): its UUID, or "index:N" for a GPU that
  // never answered with one (lost, or stalled, before it could be identified).
  std::string key() const { return uuid.empty() ? "index:" + std::to_string(index) : uuid; }
  // Whether `gpu_uuid`/`gpu_index`, as a finding or an incident records them, name this GPU.
  bool names(const std::string& gpu_uuid, int gpu_index) const {
    return uuid.empty() ? gpu_uuid.empty() && gpu_index >= 0 && static_cast<unsigned>(gpu_index) == index
                        : gpu_uuid == uuid;
  }
};

struct FieldValue {
  double value = 0;
  std::int64_t timestamp_ms = 0;  // when it was read (wall clock, ms since epoch)
  bool valid = false;             // false: never read, unsupported, or failed
};

struct GpuView {
  GpuIdentity id;
  GpuState state = GpuState::Up;
  std::string state_reason;         // e.g. "nvmlDeviceGetPowerUsage exceeded 2 s deadline"
  std::int64_t last_sample_ms = 0;  // end of the last complete sampling pass
  std::uint64_t nvml_errors = 0;    // NVML calls on this GPU that failed (not counting unsupported)
  std::uint64_t samples = 0;        // completed sampling passes
  std::vector<FieldValue> values;   // indexed by fields::indexOf(field); numeric fields only
  // Changes whenever the sampler publishes new values or a new state for this GPU; unique across
  // the process, so (version, state) of every view tells a cache whether anything moved.
  std::uint64_t version = 0;
  // Labels of what runs on the GPU (hpc_job; pod, namespace, container), added by the node
  // to a copy about to be exported; the sampler leaves it empty.
  std::vector<std::pair<std::string, std::string>> workload_labels;
};

struct AgentStats {
  std::string hostname;
  std::string driver_version;
  std::string nvml_version;
  int cuda_driver_version = 0;
  std::int64_t started_ms = 0;
  std::uint64_t nvml_reinits = 0;
  bool driver_up = true;
};

}  // namespace gw::collect
