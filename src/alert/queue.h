// The on-disk alert queue: one SQLite database (WAL, synchronous=FULL) in the data directory.
// An alert is written once per sink before submit() returns and removed only when that sink
// acknowledged it, so a crash, a restart or a sink being down loses nothing. Rows are taken in
// insertion order (seq), which keeps each alert id's history in order per sink.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "alert/alert.h"
#include "common/result.h"
#include "platform/sqlite.h"

namespace gw::alert {

struct QueuedAlert {
  int64_t seq = 0;
  std::string sink;
  Alert alert;
};

class DiskQueue {
 public:
  // The schema version the queue file carries (PRAGMA user_version). 0 is the same schema from
  // before files carried a version; a newer one is refused at open. A change to the schema or to
  // the payload's meaning needs a new version, a migration and a golden (tests/golden/).
  static constexpr int kSchemaVersion = 1;

  static Result<std::unique_ptr<DiskQueue>> open(const std::string& db_path);
  ~DiskQueue();
  DiskQueue(const DiskQueue&) = delete;
  DiskQueue& operator=(const DiskQueue&) = delete;

  // Deduplicates and enqueues in one transaction. Returns false (and writes nothing) when the
  // same id was last accepted in the same state (firing/resolved) less than repeat_ms ago.
  Result<bool> submit(const Alert& alert, const std::vector<std::string>& sinks, int64_t now_ms, int64_t repeat_ms);
  // The oldest alert for the sink; rows that cannot be read back are buried on the way (see rejected()).
  std::optional<QueuedAlert> head(const std::string& sink);
  Status ack(int64_t seq);
  // A receiver refused the alert for good: move it to the dead-letter table (kept, not lost).
  Status reject(int64_t seq, const std::string& error);
  int64_t pending(const std::string& sink = {});  // all sinks when empty
  int64_t rejected();

 private:
  static Result<std::unique_ptr<DiskQueue>> openOnce(const std::string& db_path);
  Status buryLocked(int64_t seq, const std::string& error);  // mu_ held
  DiskQueue() = default;
  std::mutex mu_;
  std::unique_ptr<platform::Database> db_;
  platform::Statement dedupe_get_, dedupe_put_, enqueue_, head_, delete_, bury_, count_all_, count_sink_, count_dead_;
};

}  // namespace gw::alert
