// The agent's data folder, defined once: every file the agent and the CLI keep there, the lock
// that makes one process its owner at a time, and where the owner's control socket lives.
// Lower layers are handed full paths from here; none of them names a file of the folder itself.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>

#include "common/result.h"

namespace gw::node {

inline constexpr const char* kDefaultDataDir = "/var/lib/gpuwarden";
inline constexpr const char* kDataDirEnv = "GPUWARDEN_DATA_DIR";
// The data folder when none is named: $GPUWARDEN_DATA_DIR when set and not empty, else
// kDefaultDataDir. Every command's --data-dir and the agent's `data_dir` (below the file's and the
// flag's) start from it, so one variable moves the agent and every command that asks it.
// Inline: the configuration parser (config.h's default) is built into the fuzzers without this
// folder's code.
inline std::string defaultDataDir() {
  const char* d = std::getenv(kDataDirEnv);
  return d && *d ? d : kDefaultDataDir;
}
// "$GPUWARDEN_DATA_DIR or /var/lib/gpuwarden": how --help names that default.
inline std::string defaultDataDirHelp() { return std::string("$") + kDataDirEnv + " or " + kDefaultDataDir; }

class DataDir {
 public:
  explicit DataDir(std::string root = kDefaultDataDir) : root_(std::move(root)) {}
  const std::string& root() const { return root_; }

  std::string historyDb() const { return root_ + "/history.db"; }
  std::string incidentsDb() const { return root_ + "/incidents.db"; }
  std::string alertsDb() const { return root_ + "/alerts.db"; }
  std::string jobsDb() const { return root_ + "/jobs.db"; }
  std::string recordsDb() const { return root_ + "/records.db"; }
  std::string eventsLog() const { return root_ + "/events.jsonl"; }  // rotated to events.jsonl.1
  std::string xidCounters() const { return root_ + "/xid-counters.json"; }
  std::string kmsgPosition() const { return root_ + "/kmsg-position.json"; }
  // `gpuwarden diag` reports: diag/<YYYYMMDDTHHMMSSZ>-r<level>[-N].json
  std::string diagReports() const { return root_ + "/diag"; }
  // The file name of a report written at wall_ms; n > 1 tells reports of the same second apart.
  static std::string diagReportName(std::int64_t wall_ms, int level, int n = 1);
  struct DiagReportName {
    std::string time;  // RFC 3339, seconds
    int level = 0;
  };
  // Only names of that shape (anything else in the folder is not a report).
  static std::optional<DiagReportName> parseDiagReportName(const std::string& file);
  // The largest report stored or read back: an 8-GPU level-3 report is some tens of kB, and a file
  // of the folder is read no further than this.
  static constexpr std::size_t kMaxDiagReportBytes = 4 << 20;
  // Writes a report (JSON text) atomically under a fresh name; returns the name. The caller owns
  // the folder: the agent, or a CLI holding the lock. A report over kMaxDiagReportBytes is refused.
  Result<std::string> storeDiagReport(const std::string& json_text, int level, std::int64_t wall_ms) const;
  // Held (flock, exclusive) by the agent for its whole life and by a CLI that changes the folder
  // while no agent runs, so that the two never write at once.
  std::string lockFile() const { return root_ + "/.lock"; }

  // Creates the folder (0750) if needed, and sets the process umask to kDataUmask (see
  // restrictDataUmask).
  Status create() const;

  // The control socket of the agent that owns this folder. Unix socket paths are limited to 107
  // bytes, and the data folder can sit anywhere, so the socket lives in the runtime folder under a
  // name derived from the folder's canonical path: two agents on one machine never share one, and
  // a CLI given the same --data-dir finds the same socket.
  std::string controlSocket() const;

 private:
  std::string root_;
};

// The umask of a process that writes the data folder: folders 0750, files 0640 at most, whatever
// umask the agent was started with. SQLite (history, incidents, alerts and their -wal / -shm
// files) takes its files' mode from the umask, so the umask, not a chmod per file, is what holds
// for every file. Set by DataDir::create() and DataDirLock::acquire() (every writer calls one).
inline constexpr unsigned kDataUmask = 027;
void restrictDataUmask();

// The runtime folder of control sockets: $GPUWARDEN_RUNTIME_DIR, else /run/gpuwarden for root,
// else $XDG_RUNTIME_DIR/gpuwarden, else /tmp/gpuwarden-<uid>.
std::string runtimeDir();

// flock(2) on DataDir::lockFile(). Released on destruction (and by the kernel if the process dies,
// so a crashed agent never leaves a stale lock behind).
class DataDirLock {
 public:
  // Waits up to `wait` for another holder to let go (a CLI's change takes milliseconds); then an
  // error naming the holder's pid.
  static Result<std::unique_ptr<DataDirLock>> acquire(const DataDir& dir,
                                                      std::chrono::milliseconds wait = std::chrono::milliseconds(0));
  ~DataDirLock();
  DataDirLock(const DataDirLock&) = delete;
  DataDirLock& operator=(const DataDirLock&) = delete;

 private:
  explicit DataDirLock(int fd) : fd_(fd) {}
  int fd_;
};

}  // namespace gw::node
