// Internals shared by store.cpp (open, append, flush, query) and store_compact.cpp.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <limits>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "store/chunk_codec.h"
#include "platform/sqlite.h"
#include "store/store.h"

namespace gw::store {

using platform::Database;
using platform::Query;
using platform::Statement;
using platform::Transaction;

// Returns the Status of `expr` from the enclosing function when it is an error.
#define GW_STORE_TRY(expr)                           \
  do {                                               \
    ::gw::Status gw_try_status_ = (expr);            \
    if (!gw_try_status_.ok()) return gw_try_status_; \
  } while (0)

inline constexpr int64_t kNever = std::numeric_limits<int64_t>::min();
inline constexpr int kRollupColumns = 4;  // min, max, sum, count

struct ChunkRow {
  SeriesId series = 0;
  int64_t start_ms = 0;
  int64_t end_ms = 0;
  uint32_t count = 0;
  std::vector<uint8_t> data;
};

struct SeriesState {
  SeriesState(SeriesId series_id, std::string uuid, std::string field_name)
      : id(series_id), gpu_uuid(std::move(uuid)), field(std::move(field_name)) {}

  const SeriesId id;
  const std::string gpu_uuid;
  const std::string field;

  // Guards the full-resolution state below. Held for O(1) work in append and short copies in
  // flush and query, never across SQLite calls.
  std::mutex mu;
  ChunkEncoder open{1};
  int64_t last_ts = kNever;
  int64_t flushed_start = kNever;  // which prefix of `open` is already on disk
  uint32_t flushed_count = 0;
  std::deque<ChunkRow> sealed;  // full chunks waiting for the next flush

  // Downsampling state: used only by compact(), under Impl::write_mu.
  ChunkEncoder rollup{kRollupColumns};
  std::vector<ChunkRow> rollup_sealed;
  int64_t rolled_until = kNever;  // every step before this is in the rollups table
};

struct Store::Impl {
  StoreOptions opt;
  int64_t downsample_ms = 60000;

  // Writer connection: flush, compact, series registration.
  std::mutex write_mu;
  std::unique_ptr<Database> wdb;
  Statement insert_series, find_series, upsert_chunk, upsert_rollup, set_rolled, delete_chunks, delete_rollups,
      scan_chunks_w, insert_series_id;

  // Reader connection: queries and stats; WAL lets it read while the writer writes.
  mutable std::mutex read_mu;
  std::unique_ptr<Database> rdb;
  mutable Statement scan_chunks_r, scan_rollups_r, get_rolled_r;

  mutable std::shared_mutex series_mu;
  std::vector<std::unique_ptr<SeriesState>> by_id;  // index = SeriesId
  std::unordered_map<std::string, SeriesId> by_name;

  std::atomic<uint64_t> appended{0}, rejected{0}, background_errors{0};
  std::atomic<uint64_t> pending_bytes{0}, dropped{0}, corrupt_chunks{0}, flush_failures{0}, resets{0};
  // Set by a query that found the file damaged (queries cannot take write_mu); the next flush or
  // compaction moves the file aside.
  std::atomic<bool> damage_seen{false};
  std::mutex damage_mu;
  std::string damage_reason;

  std::thread background;
  std::mutex bg_mu;
  std::condition_variable bg_cv;
  bool stopping = false;

  // Opens both connections on opt.path, checks the file, creates the schema, prepares every
  // statement. A damaged file fails with a Status that platform::isDamage() recognises.
  Status openDatabase();
  // Reads the series table into by_id / by_name, checking every id read.
  Status loadSeries();
  // Drops both connections and their statements.
  void closeDatabase();
  // Under write_mu: when `st` (or a query before it) says the file is damaged, moves it aside,
  // opens a fresh one and registers every known series under its id again, so that what is in
  // memory is written at the next flush. Returns `st`, or the reset's failure.
  Status recoverFrom(Status st);
  void noteDamage(const Status& st);
  Status compactLocked(int64_t now_ms);  // compact() after its flush, under write_mu

  SeriesState* find(SeriesId id) const;
  std::vector<SeriesState*> allSeries() const;
  Status flushLocked();
  Status writeRow(Statement& upsert, const ChunkRow& row);
  // Decodes the full-resolution chunks of `s` overlapping [from, to] into `out` (sorted).
  Status readRaw(Statement& scan, SeriesState& s, int64_t from, int64_t to, std::vector<Sample>& out,
                 const std::vector<ChunkRow>& in_memory);
  Status rollUp(SeriesState& s, int64_t target, std::vector<Sample>& scratch);
};

// Shared SQL, kept in one place (store_sql.cpp).
extern const char* const kSchemaSql;
extern const char* const kScanChunksSql;
extern const char* const kScanRollupsSql;

}  // namespace gw::store
