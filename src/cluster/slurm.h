// Slurm (docs/slurm.md): what gpuwarden writes for it and how it asks it to drain or resume.
//  - gres.conf for this node, from the inventory (renderGresConf);
//  - the health check's decision (decideHealthAction): drain on a critical finding with a reason
//    that starts with kDrainReasonPrefix, resume only a node drained with that prefix (never one an
//    admin drained), change nothing when the verdict is unknown;
//  - `scontrol` runs through platform::ProcessRunner, with a deadline; a failure changes nothing;
//  - a prolog / epilog's environment (jobFromEnv).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "platform/fs_root.h"
#include "platform/process_runner.h"

namespace gw::cluster::slurm {

// This node's name in Slurm: `given` when not empty, else the name slurmd gives the programs it
// runs ($SLURMD_NODENAME), else the short host name (Slurm's default NodeName).
std::string nodeName(const std::string& given = "");

// ---- gres.conf

struct MigSlice {
  std::string profile;  // "1g.10gb"
  unsigned gpu_instance = 0;
  unsigned compute_instance = 0;
};

struct GresGpu {
  unsigned index = 0;
  std::string model;           // "NVIDIA H100 80GB HBM3"
  long minor = -1;             // /dev/nvidia<minor>; -1 unknown
  std::vector<unsigned> cpus;  // NUMA-local CPU ids (NVML's CPU affinity)
  bool mig = false;
  std::vector<MigSlice> slices;
};

struct GresInput {
  std::string node;  // the node's name in slurm.conf
  std::vector<GresGpu> gpus;
  // CPU id → Slurm's logical core index; empty when the CPU topology could not be read.
  std::map<unsigned, unsigned> cores;
  // "gpu<minor>/gi<G>/access" and "gpu<minor>/gi<G>/ci<C>/access" → nvidia-cap minor
  // (/proc/driver/nvidia-caps/mig-minors); empty when unreadable.
  std::map<std::string, unsigned> mig_minors;
};

// Slurm's GRES type for a model: "NVIDIA H100 80GB HBM3" → "h100", "NVIDIA A100-SXM4-80GB" →
// "a100", "NVIDIA GeForce RTX 4090" → "rtx4090", "NVIDIA L40S" → "l40s".
std::string gresType(const std::string& model);
// Slurm's logical core numbering (Cores= in gres.conf counts cores, not CPUs: socket by socket,
// then core by core, as `lstopo -l` shows Core L#), read from /sys/devices/system/cpu under root.
std::map<unsigned, unsigned> logicalCores(const platform::FsRoot& root);
std::map<std::string, unsigned> migMinors(const platform::FsRoot& root);
// The gres.conf text, with the slurm.conf NodeName line as a comment. GPUs are listed in
// device-minor order: Slurm numbers a node's GPUs (SLURM_JOB_GPUS) in that order.
std::string renderGresConf(const GresInput& in);

// ---- the health check

inline constexpr const char* kDrainReasonPrefix = "gpuwarden: ";

struct NodeState {
  std::string name;
  std::string state;      // "IDLE+DRAIN"
  std::string reason;     // without the "[user@time]" Slurm appends
  bool draining() const;  // DRAIN, DRAINING or DRAINED
  bool drainedByUs() const;
};
// `scontrol show node NAME -o` (one line per node) → the node's state and reason.
Result<NodeState> parseShowNode(const std::string& text, const std::string& name);

enum class HealthAction { None, Drain, Resume };
struct HealthDecision {
  HealthAction action = HealthAction::None;
  std::string reason;  // for Drain: the full reason given to scontrol
  std::string why;     // one line for the log / stdout
};
// exit_code: the health verdict's (0 healthy, 1 warning, 2 critical, 3 unknown); finding: the
// first critical finding, one line.
HealthDecision decideHealthAction(int exit_code, const std::string& finding, const NodeState& node);
// A reason Slurm and a shell both take: printable ASCII, no quotes, at most 200 bytes.
std::string cleanReason(const std::string& text);

class Scontrol {
 public:
  Scontrol(platform::ProcessRunner& runner, std::string program = "scontrol")
      : runner_(runner), program_(std::move(program)) {}
  Result<NodeState> showNode(const std::string& name);
  Status drain(const std::string& name, const std::string& reason);
  Status resume(const std::string& name);

 private:
  Result<std::string> run(const std::vector<std::string>& args);
  platform::ProcessRunner& runner_;
  std::string program_;
};

// ---- prolog / epilog

struct JobEnv {
  std::string job_id;
  std::vector<std::string> gpus;  // Slurm's GRES indexes (or UUIDs from CUDA_VISIBLE_DEVICES)
  std::string user;
  std::int64_t uid = -1;
};
// SLURM_JOB_ID (required), SLURM_JOB_GPUS, else CUDA_VISIBLE_DEVICES, else GPU_DEVICE_ORDINAL;
// SLURM_JOB_USER, SLURM_JOB_UID. An error says which variable is missing or malformed.
Result<JobEnv> jobFromEnv(const std::function<const char*(const char*)>& getenv);

// The epilog's cleanup of processes a job left on its GPUs: SIGTERM to each, SIGKILL to those
// still there after `grace`. A process counts as gone once it no longer exists or is a zombie
// (dead, waiting for its parent to read its status: it holds no GPU memory any more).
struct KillOutcome {
  std::vector<int> killed;     // needed SIGKILL
  std::vector<int> survivors;  // still there after SIGKILL (in uninterruptible sleep in the driver)
};
KillOutcome killLeftovers(const std::vector<int>& pids, std::chrono::milliseconds grace);

}  // namespace gw::cluster::slurm
