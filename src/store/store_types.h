// Plain types of the history store's API.
#pragma once

#include <chrono>
#include <cstdint>
#include <limits>
#include <string>

namespace gw::store {

using SeriesId = uint32_t;

struct StoreOptions {
  std::string path;  // the SQLite file; its directory must exist
  // Open chunks are written as complete-so-far rows this often: a crash (even kill -9) loses at
  // most this much. Documented bound: 10 s.
  std::chrono::milliseconds flush_interval{5000};
  std::chrono::hours raw_retention{24};
  std::chrono::hours downsampled_retention{24 * 30};
  std::chrono::seconds downsample_step{60};
  size_t chunk_samples = 120;  // samples (or downsampled buckets) per chunk row
  // Store runs its own thread: flush every flush_interval, compact every downsample_step. When
  // false the owner calls flush() and compact() itself (tests, or an agent with its own timer).
  bool background = true;
  // synchronous=FULL: survives power loss as well as process crashes, at an fsync per flush.
  // The default (NORMAL) in WAL mode is safe against kill -9 and never corrupts the database.
  bool sync_full = false;
  // Full chunks waiting in memory for a database that refuses writes (a full disk) are capped at
  // this many bytes: past it, each newly sealed chunk makes its series give up its oldest pending
  // one (counted in Stats::dropped_samples). What is still in memory is written when the disk
  // takes writes again.
  size_t max_pending_bytes = size_t{32} << 20;
};

// The schema version history.db carries (PRAGMA user_version). A file of a newer version is refused
// at open; a change to the schema or to what its rows mean needs a new version, a migration from the
// older ones and a golden for the new one (tests/golden/, docs/testing.md).
inline constexpr int kHistorySchemaVersion = 1;

// Series ids are SQLite rowids handed out in order; an id read from the file above this is damage
// (the in-memory index is a vector indexed by id).
inline constexpr uint32_t kMaxSeriesId = 1'000'000;

struct Point {
  int64_t ts_ms;
  double value;
  bool operator==(const Point&) const = default;
};

// How samples in one query step are combined. NaN samples are skipped by every aggregation.
enum class Agg { Avg, Min, Max, Sum, Count };

struct SeriesInfo {
  SeriesId id;
  std::string gpu_uuid;
  std::string field;
};

struct Stats {
  uint64_t file_bytes = 0;   // database + WAL files
  uint64_t used_bytes = 0;   // database pages in use (excludes free pages and the WAL)
  uint64_t raw_samples = 0;  // full-resolution samples on disk
  uint64_t raw_chunks = 0;
  uint64_t raw_chunk_bytes = 0;  // encoded payload of raw chunks alone
  uint64_t rollup_buckets = 0;
  uint64_t rollup_chunk_bytes = 0;
  uint64_t samples_appended = 0;  // since open
  uint64_t samples_rejected = 0;  // out of order, duplicate, or unknown series
  double bytes_per_sample = 0;    // used_bytes / raw_samples
  uint64_t pending_bytes = 0;     // full chunks in memory not yet written
  uint64_t dropped_samples = 0;   // given up because pending_bytes reached max_pending_bytes
  uint64_t corrupt_chunks = 0;    // chunks read from the file that did not decode (skipped)
  uint64_t flush_failures = 0;    // flushes the database refused (retried at the next interval)
  uint64_t databases_reset = 0;   // damaged database files moved aside since open
};

}  // namespace gw::store
