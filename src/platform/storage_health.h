// Storage health as one fact: every write to the data folder (atomic file replacements, appends,
// SQLite commits) reports its outcome here, per file. A file that starts failing (ENOSPC, EIO,
// EROFS, ...) is logged once with its path and the reason, and once more when a write to it
// succeeds again; in between its failures are only counted. /healthz and /metrics read the
// snapshot (node/storage_status.h, exporter::renderStorageMetrics).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace gw::platform {

struct StorageFileState {
  std::string path;                // absolute, normalised
  std::string file;                // the metric label: the path's file name ("history.db")
  std::uint64_t write_errors = 0;  // failed writes since the process started
  std::uint64_t moved_aside = 0;   // times the file was found damaged and moved aside
  bool failing = false;            // the last write failed
  int err = 0;                     // errno of the last failure
  std::string reason;              // the last failure's message
  std::int64_t failing_since_ms = 0;
};

class StorageHealth {
 public:
  // A write to `path` failed with errno `err` (message: what failed, for the log and /healthz).
  // Logs only when the file was not failing already.
  void failed(const std::string& path, int err, const std::string& message);
  // A write to `path` succeeded; logs the recovery when it was failing.
  void succeeded(const std::string& path);
  // `path` was damaged and moved to `aside` (logged by the caller).
  void movedAside(const std::string& path);

  std::vector<StorageFileState> snapshot() const;  // by path
  bool ok() const;                                 // no file failing now
  // "" when ok; else one line per failing file: "disk full: cannot write <path>: <reason>".
  std::string problem() const;
  // Forgets everything (tests).
  void reset();

 private:
  StorageFileState& entry(const std::string& key);
  mutable std::mutex mu_;
  std::atomic<bool> failing_{false};  // some file is failing (read without the lock)
  std::map<std::string, StorageFileState> files_;
};

// The process's one instance.
StorageHealth& storageHealth();

// True for the errno values that mean "the storage refuses writes" (ENOSPC, EDQUOT, EIO, EROFS,
// ENOMEM is not one of them).
bool isStorageErrno(int err);

}  // namespace gw::platform
