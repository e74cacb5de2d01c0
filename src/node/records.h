// The node's records (R35, R36; docs/records.md): what was installed when, and every change made
// to the node through gpuwarden, kept in the records database (DataDir::recordsDb()), newest last.
//  - kind "install": the install state (driver, CUDA, cuDNN, frameworks, container runtime, VBIOS
//    and serial of every GPU) when the agent starts and whenever it changes, with what changed;
//  - kind "setting": a setting changed through gpuwarden (who, before, after; issue 15's setters).
// A job's fingerprint names the install record it ran under (jobs.h).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "platform/fs_root.h"
#include "platform/process_runner.h"
#include "platform/sqlite.h"

namespace gw::nvml {
class Session;
}

namespace gw::node {

struct Record {
  std::int64_t id = 0;
  std::int64_t time_ms = 0;
  std::string kind;        // "install", "setting"
  std::string who;         // "agent", "uid 0 (root) pid 1234"
  std::string summary;     // one line: "driver 550.54.15 → 550.90.07"
  nlohmann::json state;    // the whole state after
  nlohmann::json changes;  // [{"what", "before", "after"}]
};
nlohmann::json recordJson(const Record& r);

class RecordStore {
 public:
  static constexpr std::int64_t kSchemaVersion = 1;
  static Result<std::unique_ptr<RecordStore>> open(const std::string& path);
  Result<std::int64_t> append(const Record& r);
  // Newest first; kind "" = every kind.
  Result<std::vector<Record>> list(std::size_t limit, const std::string& kind = "");
  Result<std::optional<Record>> latest(const std::string& kind);
  Result<std::optional<Record>> get(std::int64_t id);

 private:
  RecordStore() = default;
  static Result<std::unique_ptr<RecordStore>> openOnce(const std::string& path);
  Result<std::vector<Record>> read(platform::Query& q);
  std::unique_ptr<platform::Database> db_;
  platform::Statement insert_, list_, get_;
};

// How often the agent reads the install state when nothing else (a new driver, GPUs that come or
// go) made it look.
inline constexpr std::chrono::hours kInstallCheckEvery{1};

// Keeps the install record current: check() reads the install state and appends a record when it
// differs from the latest one (the first check always records). Shared by the agent's threads.
class InstallRecorder {
 public:
  InstallRecorder(std::unique_ptr<RecordStore> store, std::string root)
      : store_(std::move(store)), root_(std::move(root)) {}
  // Returns the latest install record's id after the check.
  Result<std::int64_t> check(const nvml::Session& session, std::int64_t now_ms);
  // The latest install record (0 / null before the first).
  std::int64_t latestId() const;
  nlohmann::json latestState() const;
  std::string latestSummary() const;
  // Appends a record of another kind (a "setting" the agent applied) under the same lock.
  Result<std::int64_t> append(const Record& r);
  // The records, newest first (the store is only used under this recorder's lock).
  Result<std::vector<Record>> list(std::size_t limit, const std::string& kind = "");

 private:
  mutable std::mutex mu_;
  std::unique_ptr<RecordStore> store_;
  std::string root_;
  std::int64_t latest_id_ = 0;
  nlohmann::json latest_state_;
  std::string latest_summary_;
  bool loaded_ = false;
};

// The install state now: NVML's driver, CUDA and NVML versions and each GPU's name, UUID, serial,
// VBIOS and InfoROM; the CUDA toolkit, nvcc, cuDNN, PyTorch and Paddle versions and the container
// GPU access the doctor finds under `root` (it may run nvcc and python3: seconds, so not often).
nlohmann::json readInstallState(const nvml::Session& session, const platform::FsRoot& root,
                                platform::ProcessRunner& runner);
// The software stack part of the install state, as found under `root` with `runner`: the doctor's
// findings for the CUDA toolkit, nvcc, cuDNN, PyTorch, Paddle and the container's GPU access, and
// the container runtime's pieces that answer `--version` (nvidia-ctk, nvidia-container-cli,
// docker, containerd, podman; their first line, 3 s each; absent ones left out).
nlohmann::json readStackState(const platform::FsRoot& root, platform::ProcessRunner& runner,
                              const std::string& driver_version, int cuda_driver_version);

// What differs between two install states, as [{"what", "before", "after"}] ("what": a key path
// like "driver_version", "gpus.GPU-….vbios", "stack.lib.cudnn"); empty when they are equal.
nlohmann::json installChanges(const nlohmann::json& before, const nlohmann::json& after);
// "driver 550.54.15 → 550.90.07; GPU-… vbios 96.00.5E → 96.00.74" (at most a few, then "+N more").
std::string changesSummary(const nlohmann::json& changes);

}  // namespace gw::node
