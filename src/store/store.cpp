#include "store/store.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "platform/clock.h"
#include "store/aggregate.h"
#include "store/store_impl.h"
#include "platform/thread_guard.h"

namespace gw::store {
namespace {

Status validate(const StoreOptions& o) {
  if (o.path.empty()) return Status::Error("history store: no database path given");
  if (o.flush_interval.count() <= 0) return Status::Error("history store: flush_interval must be positive");
  if (o.downsample_step.count() <= 0) return Status::Error("history store: downsample_step must be positive");
  if (o.raw_retention.count() <= 0 || o.downsampled_retention.count() <= 0)
    return Status::Error("history store: retention must be positive");
  if (o.chunk_samples < 2 || o.chunk_samples > 100000)
    return Status::Error("history store: chunk_samples must be between 2 and 100000");
  return Status::Ok();
}

Status prepareInto(Database& db, const char* sql, Statement& out) {
  auto st = db.prepare(sql);
  if (!st) return st.status();
  out = std::move(st.value());
  return Status::Ok();
}

bool overlaps(const ChunkRow& r, int64_t from, int64_t to) { return r.end_ms >= from && r.start_ms <= to; }

// What a pending chunk holds in memory.
uint64_t pendingSize(const ChunkRow& r) { return sizeof(ChunkRow) + r.data.capacity(); }

ChunkRow snapshot(SeriesId id, const ChunkEncoder& enc) {
  ChunkRow row{id, enc.firstTimestamp(), enc.lastTimestamp(), enc.count(), {}};
  enc.encodeTo(row.data);
  return row;
}

}  // namespace

Store::Store(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Status Store::Impl::openDatabase() {
  auto w = Database::open(opt.path, "history database");
  if (!w) return w.status();
  wdb = std::move(w.value());
  Database& db = *wdb;
  // A file that is not a database, or one damaged (truncated, overwritten), is found here and
  // not at some later read, so that it can be moved aside before anything is built on it.
  GW_STORE_TRY(db.checkIntegrity());
  // Ids are checked again row by row in loadSeries(); this finds a bad one before anything writes.
  if (db.queryInt("SELECT count(*) FROM sqlite_master WHERE name = 'series'").value_or(0) > 0) {
    auto bad =
        db.queryInt(("SELECT count(*) FROM series WHERE id < 0 OR id > " + std::to_string(kMaxSeriesId)).c_str());
    if (!bad) return bad.status();
    if (*bad > 0)
      return platform::damaged("history database '" + opt.path + "': " + std::to_string(*bad) +
                               " series id(s) out of range (0.." + std::to_string(kMaxSeriesId) + ")");
  }
  // auto_vacuum only takes effect on a new, empty file; it lets compact() give freed pages back.
  GW_STORE_TRY(db.exec("PRAGMA auto_vacuum=INCREMENTAL"));
  auto mode = db.queryText("PRAGMA journal_mode=WAL");
  if (!mode) return mode.status();
  if (*mode != "wal")
    return Status::Error("history database '" + opt.path + "': cannot use WAL mode (got '" + *mode + "')");
  GW_STORE_TRY(db.exec(opt.sync_full ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL"));
  auto version = db.queryInt("PRAGMA user_version");
  if (!version) return version.status();
  if (*version > kHistorySchemaVersion)
    return Status::Error("history database '" + opt.path + "' has schema version " + std::to_string(*version) +
                         ", newer than this gpuwarden understands (" + std::to_string(kHistorySchemaVersion) + ")");
  GW_STORE_TRY(db.exec(kSchemaSql));
  // Only a new file is written here: an existing one opens on a full disk too.
  if (*version != kHistorySchemaVersion)
    GW_STORE_TRY(db.exec(("PRAGMA user_version=" + std::to_string(kHistorySchemaVersion)).c_str()));

  GW_STORE_TRY(prepareInto(db,
                           "INSERT INTO series (gpu_uuid, field, rolled_until) VALUES (?1, ?2, ?3) "
                           "ON CONFLICT (gpu_uuid, field) DO NOTHING",
                           insert_series));
  GW_STORE_TRY(prepareInto(db, "INSERT INTO series (id, gpu_uuid, field, rolled_until) VALUES (?1, ?2, ?3, ?4)",
                           insert_series_id));
  GW_STORE_TRY(prepareInto(db, "SELECT id FROM series WHERE gpu_uuid = ?1 AND field = ?2", find_series));
  GW_STORE_TRY(prepareInto(db,
                           "INSERT OR REPLACE INTO chunks (series_id, start_ms, end_ms, count, data) "
                           "VALUES (?1, ?2, ?3, ?4, ?5)",
                           upsert_chunk));
  GW_STORE_TRY(prepareInto(db,
                           "INSERT OR REPLACE INTO rollups (series_id, start_ms, end_ms, count, data) "
                           "VALUES (?1, ?2, ?3, ?4, ?5)",
                           upsert_rollup));
  GW_STORE_TRY(prepareInto(db, "UPDATE series SET rolled_until = ?2 WHERE id = ?1", set_rolled));
  GW_STORE_TRY(
      prepareInto(db, "DELETE FROM chunks WHERE series_id = ?1 AND start_ms < ?2 AND end_ms < ?2", delete_chunks));
  GW_STORE_TRY(
      prepareInto(db, "DELETE FROM rollups WHERE series_id = ?1 AND start_ms < ?2 AND end_ms < ?2", delete_rollups));
  GW_STORE_TRY(prepareInto(db, kScanChunksSql, scan_chunks_w));

  auto r = Database::open(opt.path, "history database", {.read_only = true});
  if (!r) return r.status();
  rdb = std::move(r.value());
  GW_STORE_TRY(prepareInto(*rdb, kScanChunksSql, scan_chunks_r));
  GW_STORE_TRY(prepareInto(*rdb, kScanRollupsSql, scan_rollups_r));
  GW_STORE_TRY(prepareInto(*rdb, "SELECT rolled_until FROM series WHERE id = ?1", get_rolled_r));
  return Status::Ok();
}

void Store::Impl::closeDatabase() {
  for (Statement* st :
       {&insert_series, &insert_series_id, &find_series, &upsert_chunk, &upsert_rollup, &set_rolled, &delete_chunks,
        &delete_rollups, &scan_chunks_w, &scan_chunks_r, &scan_rollups_r, &get_rolled_r})
    *st = Statement();
  rdb.reset();
  wdb.reset();
}

Status Store::Impl::loadSeries() {
  // Reload series and where each one stopped, so ids stay stable and appends stay monotonic.
  Statement all, last;
  GW_STORE_TRY(prepareInto(*wdb, "SELECT id, gpu_uuid, field, rolled_until FROM series ORDER BY id", all));
  GW_STORE_TRY(
      prepareInto(*wdb, "SELECT end_ms FROM chunks WHERE series_id = ?1 ORDER BY start_ms DESC LIMIT 1", last));
  Query rows = all.use();
  while (rows.step()) {
    // Every id read from the file is checked before it indexes anything: an id past the range
    // SQLite hands out (UINT32_MAX, a negative one) is damage, not a reason to resize by_id.
    const int64_t raw = rows.int64(0);
    if (raw < 0 || raw > kMaxSeriesId)
      return platform::damaged("history database '" + opt.path + "': series id " + std::to_string(raw) +
                               " out of range (0.." + std::to_string(kMaxSeriesId) + ")");
    const auto id = static_cast<SeriesId>(raw);
    auto state = std::make_unique<SeriesState>(id, rows.text(1), rows.text(2));
    if (state->gpu_uuid.empty() || state->field.empty())
      return platform::damaged("history database '" + opt.path + "': series " + std::to_string(id) +
                               " has no GPU or field name");
    state->rolled_until = rows.int64(3);
    Query end = last.use();
    end.bind(1, raw);
    if (end.step()) state->last_ts = end.int64(0);
    GW_STORE_TRY(end.status());
    by_name.emplace(state->gpu_uuid + '\x1f' + state->field, id);
    if (by_id.size() <= id) by_id.resize(static_cast<size_t>(id) + 1);
    by_id[id] = std::move(state);
  }
  return rows.status();
}

Result<std::unique_ptr<Store>> Store::open(const StoreOptions& options) {
  GW_STORE_TRY(validate(options));
  auto impl = std::make_unique<Impl>();
  impl->opt = options;
  impl->downsample_ms = std::chrono::duration_cast<std::chrono::milliseconds>(options.downsample_step).count();

  // A damaged file is moved aside (kept for inspection) and a fresh one started: history is lost,
  // the agent is not. Anything else (a missing folder, no permission, a newer schema) is an error.
  Status st = impl->openDatabase();
  if (st.ok()) st = impl->loadSeries();
  if (platform::isDamage(st)) {
    impl->closeDatabase();
    impl->by_id.clear();
    impl->by_name.clear();
    auto aside = platform::moveAsideDamaged(options.path, "history database", st.message());
    if (!aside) return aside.status();
    impl->resets.fetch_add(1, std::memory_order_relaxed);
    st = impl->openDatabase();
    if (st.ok()) st = impl->loadSeries();
  }
  GW_STORE_TRY(st);

  std::unique_ptr<Store> store(new Store(std::move(impl)));
  if (options.background) {
    Store* self = store.get();
    self->impl_->background = std::thread(platform::guardedThread("history-store", [self] {
      Impl& im = *self->impl_;
      auto next_compact = std::chrono::steady_clock::now() + im.opt.downsample_step;
      std::unique_lock lock(im.bg_mu);
      while (!im.bg_cv.wait_for(lock, im.opt.flush_interval, [&] { return im.stopping; })) {
        lock.unlock();
        Status s;
        if (std::chrono::steady_clock::now() >= next_compact) {
          next_compact += im.opt.downsample_step;
          // Leave the collector a flush interval to deliver samples of the step just ended.
          const int64_t now_ms =
              platform::wallMs() - std::chrono::duration_cast<std::chrono::milliseconds>(im.opt.flush_interval).count();
          s = self->compact(now_ms);
        } else {
          s = self->flush();
        }
        if (!s.ok()) im.background_errors.fetch_add(1, std::memory_order_relaxed);
        lock.lock();
      }
    }));
  }
  return store;
}

Store::~Store() {
  if (impl_->background.joinable()) {
    {
      std::lock_guard lock(impl_->bg_mu);
      impl_->stopping = true;
    }
    impl_->bg_cv.notify_all();
    impl_->background.join();
  }
  (void)flush();
}

const StoreOptions& Store::options() const { return impl_->opt; }

SeriesState* Store::Impl::find(SeriesId id) const {
  std::shared_lock lock(series_mu);
  return id < by_id.size() ? by_id[id].get() : nullptr;  // states are never removed: pointer stays valid
}

std::vector<SeriesState*> Store::Impl::allSeries() const {
  std::shared_lock lock(series_mu);
  std::vector<SeriesState*> out;
  out.reserve(by_id.size());
  for (const auto& s : by_id)
    if (s) out.push_back(s.get());
  return out;
}

Result<SeriesId> Store::series(std::string_view gpu_uuid, std::string_view field) {
  if (gpu_uuid.empty() || field.empty())
    return Status::Error("history store: series needs a GPU UUID and a field name");
  std::string key;
  key.reserve(gpu_uuid.size() + field.size() + 1);
  key.append(gpu_uuid).push_back('\x1f');
  key.append(field);
  {
    std::shared_lock lock(impl_->series_mu);
    auto it = impl_->by_name.find(key);
    if (it != impl_->by_name.end()) return it->second;
  }
  std::lock_guard write(impl_->write_mu);
  if (!impl_->wdb) return Status::Error("history store: no database (" + impl_->opt.path + " could not be reopened)");
  GW_STORE_TRY(impl_->insert_series.use().bind(1, gpu_uuid).bind(2, field).bind(3, kNever).run());
  Query find = impl_->find_series.use();
  find.bind(1, gpu_uuid).bind(2, field);
  if (!find.step()) return Status::Error("history store: cannot register series: " + find.status().message());
  const int64_t raw = find.int64(0);
  find.finish();
  if (raw < 0 || raw > kMaxSeriesId) {
    // The row just inserted goes again: left in the file, the next open would take it for damage
    // and move the whole history aside.
    Status undone = impl_->wdb->exec(("DELETE FROM series WHERE id = " + std::to_string(raw)).c_str());
    return Status::Error("history store: series id " + std::to_string(raw) + " of " + std::string(gpu_uuid) + " " +
                         std::string(field) + " is out of range (0.." + std::to_string(kMaxSeriesId) + ")" +
                         (undone.ok() ? "" : "; cannot remove it: " + undone.message()));
  }
  const auto id = static_cast<SeriesId>(raw);
  std::unique_lock lock(impl_->series_mu);
  if (!impl_->by_name.contains(key)) {
    impl_->by_name.emplace(key, id);
    if (impl_->by_id.size() <= id) impl_->by_id.resize(static_cast<size_t>(id) + 1);
    impl_->by_id[id] = std::make_unique<SeriesState>(id, std::string(gpu_uuid), std::string(field));
  }
  return id;
}

bool Store::append(SeriesId id, int64_t ts_ms, double value) {
  SeriesState* s = impl_->find(id);
  if (s == nullptr) {
    impl_->rejected.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  std::lock_guard lock(s->mu);
  if (ts_ms <= s->last_ts) {
    impl_->rejected.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  if (s->open.count() >= impl_->opt.chunk_samples) {
    s->sealed.push_back(snapshot(id, s->open));
    s->open.reset();
    impl_->pending_bytes.fetch_add(pendingSize(s->sealed.back()), std::memory_order_relaxed);
    // Over the cap (the database has refused writes for a while): this series gives up its oldest
    // pending chunk. Every series seals at its own pace, so each pays for its own backlog.
    if (impl_->pending_bytes.load(std::memory_order_relaxed) > impl_->opt.max_pending_bytes) {
      const ChunkRow& oldest = s->sealed.front();
      impl_->pending_bytes.fetch_sub(pendingSize(oldest), std::memory_order_relaxed);
      // A prefix of it may be on disk already (written as the open chunk): that part is not lost.
      const uint32_t on_disk = oldest.start_ms == s->flushed_start ? std::min(s->flushed_count, oldest.count) : 0;
      impl_->dropped.fetch_add(oldest.count - on_disk, std::memory_order_relaxed);
      s->sealed.pop_front();
    }
  }
  if (!s->open.append(ts_ms, value)) {  // only a gap wider than int64 gets here
    impl_->rejected.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  s->last_ts = ts_ms;
  impl_->appended.fetch_add(1, std::memory_order_relaxed);
  return true;
}

Status Store::Impl::writeRow(Statement& upsert, const ChunkRow& row) {
  return upsert.use()
      .bind(1, static_cast<int64_t>(row.series))
      .bind(2, row.start_ms)
      .bind(3, row.end_ms)
      .bind(4, static_cast<int64_t>(row.count))
      .bind(5, std::span<const uint8_t>(row.data))
      .run();
}

Status Store::flush() {
  std::lock_guard lock(impl_->write_mu);
  return impl_->recoverFrom(impl_->flushLocked());
}

void Store::Impl::noteDamage(const Status& st) {
  if (!platform::isDamage(st)) return;
  std::lock_guard lock(damage_mu);
  if (damage_reason.empty()) damage_reason = st.message();
  damage_seen = true;
}

Status Store::Impl::recoverFrom(Status st) {
  noteDamage(st);
  if (!wdb && !damage_seen.load()) {  // an earlier recovery could not reopen: try again
    std::lock_guard lock(damage_mu);
    damage_reason = "still damaged after an earlier attempt to move it aside";
    damage_seen = true;
  }
  if (!damage_seen.load()) return st;
  std::string why;
  {
    std::lock_guard lock(damage_mu);
    why = std::exchange(damage_reason, std::string());
    damage_seen = false;
  }
  std::lock_guard read(read_mu);
  closeDatabase();
  // Should the file not move (a read-only folder), the damaged one is opened again: the store
  // keeps its data in memory, flushes fail and are retried, and nothing dereferences a closed
  // connection.
  auto aside = platform::moveAsideDamaged(opt.path, "history database", why);
  if (aside) resets.fetch_add(1, std::memory_order_relaxed);
  if (Status reopened = openDatabase(); !reopened.ok()) {
    closeDatabase();
    return Status::Error("history store: cannot reopen " + opt.path + " after damage: " + reopened.message());
  }
  if (!aside) return aside.status();
  // Same ids as before (the sink and the API hold them); what is on disk is gone, what is in
  // memory is written again from the start of the open chunks.
  for (SeriesState* s : allSeries()) {
    GW_STORE_TRY(insert_series_id.use()
                     .bind(1, static_cast<int64_t>(s->id))
                     .bind(2, s->gpu_uuid)
                     .bind(3, s->field)
                     .bind(4, kNever)
                     .run());
    s->rolled_until = kNever;
    s->rollup.reset();
    s->rollup_sealed.clear();
    std::lock_guard lock(s->mu);
    s->flushed_start = kNever;
    s->flushed_count = 0;
  }
  return st.ok() ? st : Status::Error("history store: " + st.message() + "; started a fresh database");
}

Status Store::Impl::flushLocked() {
  // Copy what is new under each series lock, write without holding any, then mark it flushed.
  // Sealed chunks stay in memory until committed, so a query never misses them.
  struct Taken {
    SeriesState* s;
    size_t sealed;
    int64_t sealed_last_start;  // the newest sealed chunk written: appends may drop older ones meanwhile
    int64_t open_start;
    uint32_t open_count;
  };
  std::vector<ChunkRow> rows;
  std::vector<Taken> taken;
  for (SeriesState* s : allSeries()) {
    std::lock_guard lock(s->mu);
    Taken t{s, s->sealed.size(), s->sealed.empty() ? kNever : s->sealed.back().start_ms, kNever, 0};
    for (const ChunkRow& c : s->sealed) rows.push_back(c);
    const bool open_dirty =
        !s->open.empty() && !(s->open.firstTimestamp() == s->flushed_start && s->open.count() == s->flushed_count);
    if (open_dirty) {
      rows.push_back(snapshot(s->id, s->open));
      t.open_start = s->open.firstTimestamp();
      t.open_count = s->open.count();
    }
    if (t.sealed > 0 || t.open_count > 0) taken.push_back(t);
  }
  if (rows.empty()) return Status::Ok();

  // A refused write (full disk) leaves everything in memory, to be written at the next flush.
  Status st = [&]() -> Status {
    if (!wdb) return Status::Error("history store: no database (" + opt.path + " could not be reopened)");
    Transaction tx(*wdb);
    GW_STORE_TRY(tx.begun());
    for (const ChunkRow& row : rows) GW_STORE_TRY(writeRow(upsert_chunk, row));
    return tx.commit();
  }();
  if (!st.ok()) {
    flush_failures.fetch_add(1, std::memory_order_relaxed);
    return st;
  }

  for (const Taken& t : taken) {
    std::lock_guard lock(t.s->mu);
    while (t.sealed > 0 && !t.s->sealed.empty() && t.s->sealed.front().start_ms <= t.sealed_last_start) {
      pending_bytes.fetch_sub(pendingSize(t.s->sealed.front()), std::memory_order_relaxed);
      t.s->sealed.pop_front();
    }
    if (t.open_count > 0) {
      t.s->flushed_start = t.open_start;
      t.s->flushed_count = t.open_count;
    }
  }
  return Status::Ok();
}

Status Store::Impl::readRaw(Statement& scan_chunks, SeriesState& s, int64_t from, int64_t to, std::vector<Sample>& out,
                            const std::vector<ChunkRow>& in_memory) {
  // Disk rows and the in-memory snapshot may hold the same chunk (same start); the copy with
  // more samples is the newer one, so it wins.
  std::vector<ChunkRow> rows = in_memory;
  Query scan = scan_chunks.use();
  scan.bind(1, static_cast<int64_t>(s.id)).bind(2, from).bind(3, to);
  while (scan.step()) {
    // Lengths and counts read from the file are checked: a row that cannot be a chunk is skipped
    // and counted, the rest of the series still reads.
    const int64_t count = scan.int64(2);
    auto blob = scan.blob(3);
    if (count < 0 || count > UINT32_MAX || scan.int64(1) < scan.int64(0) || blob.size() < 3) {
      corrupt_chunks.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    ChunkRow r{s.id, scan.int64(0), scan.int64(1), static_cast<uint32_t>(count), {}};
    if (!overlaps(r, from, to)) continue;
    r.data.assign(blob.begin(), blob.end());
    rows.push_back(std::move(r));
  }
  if (!scan.status().ok()) {
    noteDamage(scan.status());
    return scan.status();
  }
  std::sort(rows.begin(), rows.end(), [](const ChunkRow& a, const ChunkRow& b) {
    return a.start_ms != b.start_ms ? a.start_ms < b.start_ms : a.count > b.count;
  });
  int64_t last_start = kNever;
  bool first = true;
  for (const ChunkRow& r : rows) {
    if (!first && r.start_ms == last_start) continue;
    first = false;
    last_start = r.start_ms;
    auto reader = ChunkReader::open(r.data);
    if (!reader || reader->columns() != 1) {
      corrupt_chunks.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    // A chunk that goes bad halfway keeps the samples before the damage.
    Sample x{};
    while (reader->next(x.ts_ms, std::span<double>(&x.value, 1)))
      if (x.ts_ms >= from && x.ts_ms <= to) out.push_back(x);
    if (!reader->status().ok()) corrupt_chunks.fetch_add(1, std::memory_order_relaxed);
  }
  // Chunks of one series do not overlap, but a damaged one may claim any timestamps.
  if (!std::is_sorted(out.begin(), out.end(), [](const Sample& a, const Sample& b) { return a.ts_ms < b.ts_ms; }))
    std::stable_sort(out.begin(), out.end(), [](const Sample& a, const Sample& b) { return a.ts_ms < b.ts_ms; });
  return Status::Ok();
}

Result<std::vector<Point>> Store::query(SeriesId id, int64_t since_ms, int64_t until_ms, int64_t step_ms,
                                        Agg agg) const {
  SeriesState* s = impl_->find(id);
  if (s == nullptr) return Status::Error("history store: unknown series " + std::to_string(id));
  if (step_ms < 0) return Status::Error("history store: negative query step");
  std::vector<Point> out;
  if (until_ms < since_ms) return out;

  // Aggregated queries cover whole steps.
  int64_t from = since_ms, to = until_ms;
  if (step_ms > 0) {
    from = stepStart(since_ms, step_ms);
    to = stepStart(until_ms, step_ms) + (step_ms - 1);
  }

  // Memory first, then disk: anything flushed after this snapshot is found on disk.
  std::vector<ChunkRow> in_memory;
  {
    std::lock_guard lock(s->mu);
    for (const ChunkRow& c : s->sealed)
      if (overlaps(c, from, to)) in_memory.push_back(c);
    if (!s->open.empty()) {
      ChunkRow open = snapshot(id, s->open);
      if (overlaps(open, from, to)) in_memory.push_back(std::move(open));
    }
  }

  std::lock_guard read(impl_->read_mu);
  if (!impl_->rdb) return Status::Error("history store: no database (" + impl_->opt.path + " could not be reopened)");
  Database& db = *impl_->rdb;
  Transaction snapshot(db, Transaction::Mode::Read);  // one snapshot for rolled_until, rollups and chunks
  GW_STORE_TRY(snapshot.begun());

  std::vector<Sample> raw;
  if (step_ms == 0) {
    GW_STORE_TRY(impl_->readRaw(impl_->scan_chunks_r, *s, from, to, raw, in_memory));
    out.reserve(raw.size());
    for (const Sample& x : raw) out.push_back({x.ts_ms, x.value});
    return out;
  }

  Bucket bucket;
  int64_t bucket_start = kNever;
  auto emit = [&] {
    if (!bucket.empty()) out.push_back({bucket_start, bucket.value(agg)});
    bucket = Bucket{};
  };
  auto into = [&](int64_t ts) {
    const int64_t b = stepStart(ts, step_ms);
    if (b != bucket_start) {
      emit();
      bucket_start = b;
    }
  };

  int64_t raw_from = from;
  if (step_ms % impl_->downsample_ms == 0) {
    int64_t rolled_until = kNever;
    {
      Query rolled = impl_->get_rolled_r.use();
      rolled.bind(1, static_cast<int64_t>(id));
      if (rolled.step()) rolled_until = rolled.int64(0);
      GW_STORE_TRY(rolled.status());
    }
    if (rolled_until > from) {
      const int64_t rollup_to = std::min(to, rolled_until - 1);
      Query scan = impl_->scan_rollups_r.use();
      scan.bind(1, static_cast<int64_t>(id)).bind(2, from).bind(3, rollup_to);
      while (scan.step()) {
        auto reader = ChunkReader::open(scan.blob(3));
        if (!reader || reader->columns() != kRollupColumns) {
          impl_->corrupt_chunks.fetch_add(1, std::memory_order_relaxed);  // skipped, the rest still reads
          continue;
        }
        int64_t ts = 0;
        double v[kRollupColumns];
        while (reader->next(ts, v)) {
          // A damaged chunk may claim any timestamp: only in-order buckets are merged.
          if (ts < from || ts > rollup_to || (bucket_start != kNever && ts < bucket_start)) continue;
          into(ts);
          bucket.merge(v[0], v[1], v[2], v[3]);
        }
        if (!reader->status().ok()) impl_->corrupt_chunks.fetch_add(1, std::memory_order_relaxed);
      }
      if (!scan.status().ok()) impl_->noteDamage(scan.status());
      GW_STORE_TRY(scan.status());
      raw_from = std::max(from, rolled_until);
    }
  }
  if (raw_from <= to) {
    GW_STORE_TRY(impl_->readRaw(impl_->scan_chunks_r, *s, raw_from, to, raw, in_memory));
    for (const Sample& x : raw) {
      into(x.ts_ms);
      bucket.add(x.value);
    }
  }
  emit();
  return out;
}

std::vector<SeriesInfo> Store::listSeries() const {
  std::vector<SeriesInfo> out;
  for (SeriesState* s : impl_->allSeries()) out.push_back({s->id, s->gpu_uuid, s->field});
  return out;
}

Stats Store::counters() const {
  Stats st;
  st.samples_appended = impl_->appended.load(std::memory_order_relaxed);
  st.samples_rejected = impl_->rejected.load(std::memory_order_relaxed);
  st.pending_bytes = impl_->pending_bytes.load(std::memory_order_relaxed);
  st.dropped_samples = impl_->dropped.load(std::memory_order_relaxed);
  st.corrupt_chunks = impl_->corrupt_chunks.load(std::memory_order_relaxed);
  st.flush_failures = impl_->flush_failures.load(std::memory_order_relaxed);
  st.databases_reset = impl_->resets.load(std::memory_order_relaxed);
  return st;
}

Stats Store::stats() const {
  Stats st = counters();
  std::error_code ec;
  for (const char* suffix : {"", "-wal"}) {
    const auto size = std::filesystem::file_size(impl_->opt.path + suffix, ec);
    if (!ec) st.file_bytes += size;
  }
  std::lock_guard read(impl_->read_mu);
  if (!impl_->rdb) return st;
  Database& db = *impl_->rdb;
  auto sums = [&](const char* sql, uint64_t& rows, uint64_t& samples, uint64_t& bytes) {
    auto stmt = db.prepare(sql);
    if (!stmt) return;
    Query q = stmt->use();
    if (q.step()) {
      rows = static_cast<uint64_t>(q.int64(0));
      samples = static_cast<uint64_t>(q.int64(1));
      bytes = static_cast<uint64_t>(q.int64(2));
    }
  };
  uint64_t rollup_chunks = 0;
  sums("SELECT count(*), coalesce(sum(count), 0), coalesce(sum(length(data)), 0) FROM chunks", st.raw_chunks,
       st.raw_samples, st.raw_chunk_bytes);
  sums("SELECT count(*), coalesce(sum(count), 0), coalesce(sum(length(data)), 0) FROM rollups", rollup_chunks,
       st.rollup_buckets, st.rollup_chunk_bytes);
  const int64_t pages = db.queryInt("PRAGMA page_count").value_or(0);
  const int64_t free_pages = db.queryInt("PRAGMA freelist_count").value_or(0);
  const int64_t page_size = db.queryInt("PRAGMA page_size").value_or(0);
  st.used_bytes = static_cast<uint64_t>((pages - free_pages) * page_size);
  if (st.raw_samples > 0)
    st.bytes_per_sample = static_cast<double>(st.used_bytes) / static_cast<double>(st.raw_samples);
  return st;
}

}  // namespace gw::store
