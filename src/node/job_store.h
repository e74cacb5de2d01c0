// The jobs database (DataDir::jobsDb()): one row per run of a job on this node, with its per-GPU
// accounts as JSON. A job id can run more than once (Slurm requeues keep the id), so a run has its
// own number and `job show ID` reads the latest. A damaged file is moved aside and a fresh one
// started: the jobs it held are lost, the agent is not.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "platform/sqlite.h"

namespace gw::node {

struct JobRun {
  std::int64_t run = 0;  // the row: 0 until stored
  std::string job_id;
  std::string user;
  std::int64_t uid = -1;  // -1: not told
  std::string source;     // "slurm", "dcgm-map", "api"
  std::int64_t start_ms = 0;
  std::int64_t end_ms = 0;     // 0: still running
  nlohmann::json gpus;         // array of JobGpuAccount::toJson()
  nlohmann::json fingerprint;  // object; null until taken
};

class JobStore {
 public:
  static constexpr std::int64_t kSchemaVersion = 1;
  static Result<std::unique_ptr<JobStore>> open(const std::string& path);

  Result<std::int64_t> insert(const JobRun& r);  // returns the run number
  Status update(const JobRun& r);                // by r.run
  // Newest first; at most `limit`.
  Result<std::vector<JobRun>> list(std::size_t limit);
  // The latest run of `job_id`, if any.
  Result<std::optional<JobRun>> latest(const std::string& job_id);
  Result<std::vector<JobRun>> running();  // end_ms = 0, oldest first

 private:
  JobStore() = default;
  static Result<std::unique_ptr<JobStore>> openOnce(const std::string& path);
  Result<std::vector<JobRun>> read(platform::Statement& st, const std::string* job_id, std::size_t limit);
  std::unique_ptr<platform::Database> db_;
  platform::Statement insert_, update_, list_, latest_, running_;
};

}  // namespace gw::node
