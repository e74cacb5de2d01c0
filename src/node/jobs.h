// Jobs on this node (R30): which job runs on which GPU, what it did to each (JobGpuAccount), and
// the `hpc_job` label (dcgm-exporter's name) of its GPUs' series while it runs.
//
// A job arrives three ways: a scheduler's prolog/epilog through the control socket (`gpuwarden
// slurm prolog`), a dcgm-exporter job-mapping folder (one file per GPU, named by its NVML index,
// holding the ids of the jobs on it, one per line; written by existing prolog scripts), or the
// control socket directly (`job.start`, source "api"). Runs are kept in the jobs database; a job
// still running when the agent stops carries on when it starts again.
//
// Thread-safety: every public call locks; the monitor feeds samples and events from its threads,
// the control socket starts and ends jobs from its own.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "collect/gpu_view.h"
#include "common/result.h"
#include "events/gpu_event.h"
#include "node/job_account.h"
#include "node/job_store.h"
#include "nvml/driver_gpus.h"

namespace gw::node {

// Bounds on what a caller may hand in: a job id and a user are short words, a job holds at most
// this many GPUs.
inline constexpr std::size_t kMaxJobIdBytes = 64;
inline constexpr std::size_t kMaxJobUserBytes = 64;
inline constexpr std::size_t kMaxJobGpus = 64;
inline constexpr std::size_t kMaxRunningJobs = 1024;

// How the integers in a job's GPU list count (UUIDs need no counting).
enum class GpuNumbering {
  Nvml,   // NVML's index (nvidia-smi's, dcgm-exporter's mapping files)
  Slurm,  // Slurm's GRES index: the k-th GPU in device-minor order, as `slurm gres` lists them
};

struct JobStartRequest {
  std::string job_id;
  std::string user;
  std::int64_t uid = -1;
  std::string source = "api";
  std::vector<std::string> gpus;  // UUIDs (GPU-…, MIG-…) or integers in `numbering`
  GpuNumbering numbering = GpuNumbering::Nvml;
  // The install the job starts under ({"install_record", "driver_version", ...}): the first half
  // of its fingerprint; the tracker adds each GPU's figures at load when the job ends.
  nlohmann::json install;
  // The driver's own GPU list (/proc/driver/nvidia/gpus): the device minor of a GPU NVML cannot
  // name (lost, hung), which Slurm's numbering needs.
  std::vector<nvml::DriverGpu> driver_gpus;
};

// Checks a job id or user name: printable ASCII without spaces, quotes or backslashes, not empty,
// at most `max` bytes. The message names `what`.
Status checkJobWord(const std::string& s, const char* what, std::size_t max);

// The JSON shape of a run (docs/jobs.md; `job show --json`, the control socket, the API):
// {"job_id", "run", "user", "uid", "source", "state": "running"|"ended", "start_ms", "end_ms",
//  "duration_s", "gpus": [per-GPU account], "fingerprint"}. The accounts' resumable state is left out.
nlohmann::json jobJson(const JobRun& r, std::int64_t now_ms);

class JobTracker {
 public:
  // path: the jobs database; empty keeps nothing on disk (tests, standalone).
  static Result<std::unique_ptr<JobTracker>> open(const std::string& path);

  // The GPUs of `req` resolved against `views`; an error names the id that matches no GPU.
  // Slurm's numbers need every board's device minor: when one is unknown even to the driver, the
  // numbers are not guessed (the job could be put on the wrong GPU's books, or let onto a lost
  // one); the error says so and *unmapped is set.
  static Result<std::vector<const collect::GpuView*>> resolveGpus(const JobStartRequest& req,
                                                                  const std::vector<collect::GpuView>& views,
                                                                  bool* unmapped = nullptr);

  // Starts a run. A job already running with the same GPUs is not started twice (the reply says
  // so); with other GPUs it is refused.
  Result<JobRun> start(const JobStartRequest& req, const std::vector<collect::GpuView>& views, std::int64_t now_ms);
  // Ends the job's running run; not_found when it is not running.
  Result<JobRun> end(const std::string& job_id, std::int64_t now_ms);

  void observe(const std::vector<collect::GpuView>& views, std::int64_t now_ms);
  void onEvent(const events::GpuEvent& e);

  // A dcgm-exporter job-mapping folder, read once: jobs that appear start (source "dcgm-map"),
  // jobs whose files are gone end. Files are bounded (4 KiB, 16 ids); anything else is ignored.
  // Returns a one-line complaint when the folder cannot be read ("" when fine).
  std::string pollMappingDir(const std::string& dir, const std::vector<collect::GpuView>& views, std::int64_t now_ms);

  // Running runs now, and the last `limit` runs of the database (running ones included).
  std::vector<JobRun> runningJobs() const;
  Result<std::vector<JobRun>> list(std::size_t limit) const;
  // The running run of job_id, else its latest stored run.
  Result<std::optional<JobRun>> show(const std::string& job_id) const;

  // GPU UUID → the ids of the jobs running on it, comma-separated in start order.
  std::map<std::string, std::string> gpuJobLabels() const;
  // Changes whenever gpuJobLabels() would.
  std::uint64_t generation() const;

  // Writes the running runs' accounts now (the monitor calls it every minute and at stop).
  Status checkpoint();

 private:
  struct Running {
    JobRun run;
    std::vector<JobGpuAccount> accounts;
  };
  JobTracker() = default;
  JobRun snapshotLocked(const Running& r) const;

  mutable std::mutex mu_;
  std::unique_ptr<JobStore> store_;
  std::map<std::string, Running> running_;                    // by job id
  std::map<std::string, std::vector<std::string>> from_map_;  // dcgm-map jobs: id → GPU UUIDs
  std::uint64_t generation_ = 1;
  std::int64_t next_checkpoint_ms_ = 0;
};

}  // namespace gw::node
