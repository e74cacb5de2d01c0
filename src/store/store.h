// The history store: recent samples in memory, history on disk in SQLite (WAL) as compressed
// chunks (chunk_codec.h), with retention and downsampling. See docs/store.md.
//
// Threading: append() is safe from any number of threads and takes only a per-series lock for
// O(1) work. flush(), compact() and query() may run concurrently with appends; flush and compact
// serialise with each other, queries use their own SQLite connection and never wait for them.
//
// Persistence: with options.background (the default) the Store owns a thread that flushes every
// flush_interval and compacts every downsample_step; it stops (and flushes) in the destructor.
// Without it, the owner calls flush() and compact() on its own timer.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "store/store_types.h"

namespace gw::store {

class Store {
 public:
  // Opens or creates the database. Errors name the path and SQLite's reason (missing directory,
  // not a database, unwritable, newer schema).
  static Result<std::unique_ptr<Store>> open(const StoreOptions& options);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // The id of (gpu_uuid, field), created on first use; ids survive restarts.
  Result<SeriesId> series(std::string_view gpu_uuid, std::string_view field);

  // Adds one sample. False (and counted in stats) for an unknown series or a timestamp not after
  // the series' last one, also across restarts. No allocation except when a chunk fills up.
  bool append(SeriesId id, int64_t ts_ms, double value);

  // Writes sealed chunks and the complete-so-far open chunks in one transaction.
  Status flush();

  // flush(), then downsamples every complete downsample_step before now_ms, then drops chunks
  // past retention (full-resolution data only once it has been downsampled).
  Status compact(int64_t now_ms);

  // step_ms == 0: the samples with since_ms <= ts <= until_ms.
  // step_ms > 0: one point per non-empty step, at the step's start; steps are aligned to
  // multiples of step_ms and whole (the first and last step may reach outside the range). When
  // step_ms is a multiple of downsample_step, steps already downsampled are read from the
  // downsampled rows (cheaper, and available after full resolution has expired).
  Result<std::vector<Point>> query(SeriesId id, int64_t since_ms, int64_t until_ms, int64_t step_ms = 0,
                                   Agg agg = Agg::Avg) const;

  std::vector<SeriesInfo> listSeries() const;
  Stats stats() const;
  // Only the in-memory counters of stats() (appended, rejected, pending, dropped, corrupt, flush
  // failures, resets): no SQL, no file system; cheap enough for every scrape.
  Stats counters() const;
  const StoreOptions& options() const;

 private:
  struct Impl;
  explicit Store(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace gw::store
