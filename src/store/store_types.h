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
};

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
};

}  // namespace gw::store
