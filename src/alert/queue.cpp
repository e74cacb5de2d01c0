#include "alert/queue.h"

#include <string>

#include "platform/clock.h"
#include "platform/bounded_json.h"

namespace gw::alert {

using platform::Query;
using platform::Transaction;

Result<std::unique_ptr<DiskQueue>> DiskQueue::open(const std::string& db_path) {
  // A damaged file is moved aside (kept for inspection, logged) and a fresh queue started: the
  // alerts waiting in it are lost, alerting is not.
  return platform::openOrMoveAside<std::unique_ptr<DiskQueue>>(db_path, "alert queue",
                                                               [&] { return openOnce(db_path); });
}

Result<std::unique_ptr<DiskQueue>> DiskQueue::openOnce(const std::string& db_path) {
  auto db = platform::openWithSchema(
      db_path, "alert queue", kSchemaVersion,
      {
          "PRAGMA journal_mode=WAL",
          "PRAGMA synchronous=FULL",
          "CREATE TABLE IF NOT EXISTS queue (seq INTEGER PRIMARY KEY AUTOINCREMENT, sink TEXT "
          "NOT NULL, alert_id TEXT NOT NULL, payload TEXT NOT NULL, enqueued_ms INTEGER NOT NULL)",
          "CREATE INDEX IF NOT EXISTS queue_sink ON queue(sink, seq)",
          "CREATE TABLE IF NOT EXISTS dedupe (alert_id TEXT PRIMARY KEY, state TEXT NOT NULL, "
          "last_ms INTEGER NOT NULL)",
          "CREATE TABLE IF NOT EXISTS dead (seq INTEGER PRIMARY KEY, sink TEXT NOT NULL, "
          "alert_id TEXT NOT NULL, payload TEXT NOT NULL, error TEXT NOT NULL, at_ms INTEGER)",
      });
  if (!db) return db.status();
  std::unique_ptr<DiskQueue> q(new DiskQueue());
  q->db_ = std::move(db.value());
  platform::Database& d = *q->db_;
  const std::pair<platform::Statement*, const char*> statements[] = {
      {&q->dedupe_get_, "SELECT state, last_ms FROM dedupe WHERE alert_id = ?"},
      {&q->dedupe_put_,
       "INSERT INTO dedupe(alert_id, state, last_ms) VALUES(?, ?, ?) ON CONFLICT(alert_id) "
       "DO UPDATE SET state = excluded.state, last_ms = excluded.last_ms"},
      {&q->enqueue_, "INSERT INTO queue(sink, alert_id, payload, enqueued_ms) VALUES(?, ?, ?, ?)"},
      {&q->head_, "SELECT seq, payload FROM queue WHERE sink = ? ORDER BY seq LIMIT 1"},
      {&q->delete_, "DELETE FROM queue WHERE seq = ?"},
      {&q->bury_,
       "INSERT OR REPLACE INTO dead(seq, sink, alert_id, payload, error, at_ms) "
       "SELECT seq, sink, alert_id, payload, ?, ? FROM queue WHERE seq = ?"},
      {&q->count_all_, "SELECT count(*) FROM queue"},
      {&q->count_sink_, "SELECT count(*) FROM queue WHERE sink = ?"},
      {&q->count_dead_, "SELECT count(*) FROM dead"},
  };
  for (const auto& [out, sql] : statements) {
    auto st = d.prepare(sql);
    if (!st) return st.status();
    *out = std::move(st.value());
  }
  return q;
}

DiskQueue::~DiskQueue() = default;

Result<bool> DiskQueue::submit(const Alert& alert, const std::vector<std::string>& sinks, int64_t now_ms,
                               int64_t repeat_ms) {
  std::lock_guard lock(mu_);
  const std::string state = alert.status();
  Transaction tx(*db_);
  if (!tx.begun().ok()) return tx.begun();
  {
    Query q = dedupe_get_.use();
    q.bind(1, alert.id);
    if (q.step() && q.text(0) == state && now_ms - q.int64(1) < repeat_ms) return false;  // nothing written
    if (!q.status().ok()) return q.status().withMessage(db_->describe("dedupe: " + q.status().message()));
  }
  if (Status s = dedupe_put_.use().bind(1, alert.id).bind(2, state).bind(3, now_ms).run(); !s.ok())
    return s.withMessage(db_->describe("dedupe: " + s.message()));
  const std::string payload = toJson(alert).dump();
  for (const auto& sink : sinks) {
    if (Status s = enqueue_.use().bind(1, sink).bind(2, alert.id).bind(3, payload).bind(4, now_ms).run(); !s.ok())
      return s.withMessage(db_->describe("enqueue: " + s.message()));
  }
  if (Status s = tx.commit(); !s.ok()) return s;
  return true;
}

std::optional<QueuedAlert> DiskQueue::head(const std::string& sink) {
  std::lock_guard lock(mu_);
  for (;;) {
    QueuedAlert out;
    out.seq = -1;
    out.sink = sink;
    std::string why;
    {
      Query q = head_.use();
      q.bind(1, sink);
      if (!q.step()) return std::nullopt;
      out.seq = q.int64(0);
      auto j = platform::parseBounded(q.text(1));
      auto alert = j ? alertFromJson(*j) : Result<Alert>(j.status());
      if (alert) {
        out.alert = std::move(alert).value();
        return out;
      }
      why = alert.error();
    }
    // A row a damaged disk or another writer left unreadable goes to the dead letters (kept for
    // inspection); delivering it as an empty alert, or throwing out of the dispatcher's thread,
    // would not do. If even that fails, nothing is handed out now: the next submit tries again.
    if (!buryLocked(out.seq, "damaged in the queue: " + why).ok()) return std::nullopt;
  }
}

Status DiskQueue::ack(int64_t seq) {
  std::lock_guard lock(mu_);
  if (Status s = delete_.use().bind(1, seq).run(); !s.ok()) return s.withMessage(db_->describe("ack: " + s.message()));
  return Status::Ok();
}

Status DiskQueue::reject(int64_t seq, const std::string& error) {
  std::lock_guard lock(mu_);
  return buryLocked(seq, error);
}

Status DiskQueue::buryLocked(int64_t seq, const std::string& error) {
  Transaction tx(*db_);
  if (!tx.begun().ok()) return tx.begun();
  Status s = bury_.use().bind(1, error).bind(2, platform::wallMs()).bind(3, seq).run();
  if (s.ok()) s = delete_.use().bind(1, seq).run();
  if (!s.ok()) return s.withMessage(db_->describe("reject: " + s.message()));
  return tx.commit();
}

int64_t DiskQueue::pending(const std::string& sink) {
  std::lock_guard lock(mu_);
  Query q = sink.empty() ? count_all_.use() : count_sink_.use();
  if (!sink.empty()) q.bind(1, sink);
  return q.step() ? q.int64(0) : -1;
}

int64_t DiskQueue::rejected() {
  std::lock_guard lock(mu_);
  Query q = count_dead_.use();
  return q.step() ? q.int64(0) : -1;
}

}  // namespace gw::alert
