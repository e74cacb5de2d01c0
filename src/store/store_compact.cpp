// Downsampling and retention.
#include <algorithm>

#include "store/aggregate.h"
#include "store/store_impl.h"

namespace gw::store {

Status Store::Impl::rollUp(SeriesState& s, int64_t target, std::vector<Sample>& scratch) {
  // Every step in [rolled_until, target) is complete: the flush before this wrote all samples
  // appended so far, and appends are monotonic per series.
  const int64_t from = s.rolled_until;
  if (target <= from) return Status::Ok();
  scratch.clear();
  GW_STORE_TRY(readRaw(scan_chunks_w, s, from, target - 1, scratch, {}));

  Bucket bucket;
  int64_t bucket_start = kNever;
  auto emit = [&] {
    if (bucket.empty()) return;
    if (s.rollup.count() >= opt.chunk_samples) {
      ChunkRow row{s.id, s.rollup.firstTimestamp(), s.rollup.lastTimestamp(), s.rollup.count(), {}};
      s.rollup.encodeTo(row.data);
      s.rollup_sealed.push_back(std::move(row));
      s.rollup.reset();
    }
    const double columns[kRollupColumns] = {bucket.min, bucket.max, bucket.sum, bucket.count};
    // A step already in the open rollup chunk (left over from a compaction that rolled back) is
    // refused here, which is what we want.
    (void)s.rollup.append(bucket_start, columns);
  };
  for (const Sample& x : scratch) {
    const int64_t b = stepStart(x.ts_ms, downsample_ms);
    if (b != bucket_start) {
      emit();
      bucket = Bucket{};
      bucket_start = b;
    }
    bucket.add(x.value);
  }
  emit();

  for (const ChunkRow& row : s.rollup_sealed) GW_STORE_TRY(writeRow(upsert_rollup, row));
  if (!s.rollup.empty()) {
    ChunkRow open{s.id, s.rollup.firstTimestamp(), s.rollup.lastTimestamp(), s.rollup.count(), {}};
    s.rollup.encodeTo(open.data);
    GW_STORE_TRY(writeRow(upsert_rollup, open));
  }
  return set_rolled.use().bind(1, static_cast<int64_t>(s.id)).bind(2, target).run();
}

Status Store::compact(int64_t now_ms) {
  Impl& im = *impl_;
  std::lock_guard lock(im.write_mu);
  GW_STORE_TRY(im.recoverFrom(im.flushLocked()));
  return im.recoverFrom(im.compactLocked(now_ms));
}

Status Store::Impl::compactLocked(int64_t now_ms) {
  Impl& im = *this;

  using std::chrono::milliseconds;
  const int64_t target = stepStart(now_ms, im.downsample_ms);
  const int64_t raw_cutoff = now_ms - std::chrono::duration_cast<milliseconds>(im.opt.raw_retention).count();
  const int64_t rollup_cutoff = now_ms - std::chrono::duration_cast<milliseconds>(im.opt.downsampled_retention).count();
  const std::vector<SeriesState*> all = im.allSeries();

  if (!im.wdb) return Status::Error("history store: no database (" + im.opt.path + " could not be reopened)");
  {
    Transaction tx(*im.wdb);
    GW_STORE_TRY(tx.begun());
    std::vector<Sample> scratch;
    for (SeriesState* s : all) {
      GW_STORE_TRY(im.rollUp(*s, target, scratch));
      // Full resolution goes only once it is downsampled; a chunk goes only when all of it is old.
      const int64_t raw_limit = std::min(raw_cutoff, std::max(target, s->rolled_until));
      GW_STORE_TRY(im.delete_chunks.use().bind(1, static_cast<int64_t>(s->id)).bind(2, raw_limit).run());
      GW_STORE_TRY(im.delete_rollups.use().bind(1, static_cast<int64_t>(s->id)).bind(2, rollup_cutoff).run());
    }
    GW_STORE_TRY(tx.commit());
  }

  for (SeriesState* s : all) {
    s->rolled_until = std::max(target, s->rolled_until);
    s->rollup_sealed.clear();
    // An open chunk whose samples have all expired was just deleted: start afresh rather than
    // write it back at the next flush.
    if (!s->rollup.empty() && s->rollup.lastTimestamp() < rollup_cutoff) s->rollup.reset();
    std::lock_guard series_lock(s->mu);
    if (!s->open.empty() && s->open.lastTimestamp() < std::min(raw_cutoff, s->rolled_until)) {
      s->open.reset();
      s->flushed_start = kNever;
      s->flushed_count = 0;
    }
  }
  // Hand pages freed by retention back to the file system.
  return im.wdb->exec("PRAGMA incremental_vacuum");
}

}  // namespace gw::store
