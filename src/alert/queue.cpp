#include "alert/queue.h"

#include <sqlite3.h>

namespace gw::alert {
namespace {

// A prepared statement that finalizes itself.
class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql) { rc_ = sqlite3_prepare_v2(db, sql, -1, &s_, nullptr); }
  ~Stmt() { sqlite3_finalize(s_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  bool ok() const { return rc_ == SQLITE_OK; }
  void bind(int i, const std::string& v) {
    sqlite3_bind_text(s_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  }
  void bind(int i, int64_t v) { sqlite3_bind_int64(s_, i, v); }
  int step() { return sqlite3_step(s_); }
  int64_t i64(int c) { return sqlite3_column_int64(s_, c); }
  std::string text(int c) {
    const unsigned char* p = sqlite3_column_text(s_, c);
    return p ? std::string(reinterpret_cast<const char*>(p), static_cast<std::size_t>(sqlite3_column_bytes(s_, c)))
             : std::string();
  }

 private:
  sqlite3_stmt* s_ = nullptr;
  int rc_;
};

}  // namespace

Result<std::unique_ptr<DiskQueue>> DiskQueue::open(const std::string& db_path) {
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
                           nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    return Status::Error("alert queue " + db_path + ": " + msg);
  }
  sqlite3_busy_timeout(db, 5000);
  std::unique_ptr<DiskQueue> q(new DiskQueue(db));
  for (const char* sql : {
           "PRAGMA journal_mode=WAL",
           "PRAGMA synchronous=FULL",
           "CREATE TABLE IF NOT EXISTS queue (seq INTEGER PRIMARY KEY AUTOINCREMENT, sink TEXT "
           "NOT NULL, alert_id TEXT NOT NULL, payload TEXT NOT NULL, enqueued_ms INTEGER NOT NULL)",
           "CREATE INDEX IF NOT EXISTS queue_sink ON queue(sink, seq)",
           "CREATE TABLE IF NOT EXISTS dedupe (alert_id TEXT PRIMARY KEY, state TEXT NOT NULL, "
           "last_ms INTEGER NOT NULL)",
           "CREATE TABLE IF NOT EXISTS dead (seq INTEGER PRIMARY KEY, sink TEXT NOT NULL, "
           "alert_id TEXT NOT NULL, payload TEXT NOT NULL, error TEXT NOT NULL, at_ms INTEGER)",
       }) {
    Status s = q->exec(sql);
    if (!s.ok()) return s;
  }
  return q;
}

DiskQueue::~DiskQueue() { sqlite3_close(db_); }

Status DiskQueue::exec(const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : "unknown";
    sqlite3_free(err);
    return Status::Error(std::string("alert queue: ") + msg + " in: " + sql);
  }
  return Status::Ok();
}

Result<bool> DiskQueue::submit(const Alert& alert, const std::vector<std::string>& sinks, int64_t now_ms,
                               int64_t repeat_ms) {
  std::lock_guard lock(mu_);
  const std::string state = alert.status();
  Status s = exec("BEGIN IMMEDIATE");
  if (!s.ok()) return s;
  auto fail = [&](const std::string& what) -> Result<bool> {
    std::string msg = what + ": " + sqlite3_errmsg(db_);
    exec("ROLLBACK");
    return Status::Error("alert queue: " + msg);
  };
  {
    Stmt q(db_, "SELECT state, last_ms FROM dedupe WHERE alert_id = ?");
    if (!q.ok()) return fail("prepare");
    q.bind(1, alert.id);
    if (q.step() == SQLITE_ROW && q.text(0) == state && now_ms - q.i64(1) < repeat_ms) {
      exec("COMMIT");
      return false;
    }
  }
  {
    Stmt up(db_,
            "INSERT INTO dedupe(alert_id, state, last_ms) VALUES(?, ?, ?) ON CONFLICT(alert_id) "
            "DO UPDATE SET state = excluded.state, last_ms = excluded.last_ms");
    if (!up.ok()) return fail("prepare");
    up.bind(1, alert.id);
    up.bind(2, state);
    up.bind(3, now_ms);
    if (up.step() != SQLITE_DONE) return fail("dedupe");
  }
  const std::string payload = toJson(alert).dump();
  for (const auto& sink : sinks) {
    Stmt ins(db_, "INSERT INTO queue(sink, alert_id, payload, enqueued_ms) VALUES(?, ?, ?, ?)");
    if (!ins.ok()) return fail("prepare");
    ins.bind(1, sink);
    ins.bind(2, alert.id);
    ins.bind(3, payload);
    ins.bind(4, now_ms);
    if (ins.step() != SQLITE_DONE) return fail("enqueue");
  }
  s = exec("COMMIT");
  if (!s.ok()) {
    exec("ROLLBACK");
    return s;
  }
  return true;
}

std::optional<QueuedAlert> DiskQueue::head(const std::string& sink) {
  std::lock_guard lock(mu_);
  Stmt q(db_, "SELECT seq, payload FROM queue WHERE sink = ? ORDER BY seq LIMIT 1");
  if (!q.ok()) return std::nullopt;
  q.bind(1, sink);
  if (q.step() != SQLITE_ROW) return std::nullopt;
  QueuedAlert out;
  out.seq = q.i64(0);
  out.sink = sink;
  auto j = nlohmann::json::parse(q.text(1), nullptr, false);
  if (!j.is_discarded()) out.alert = alertFromJson(j);
  return out;
}

Status DiskQueue::ack(int64_t seq) {
  std::lock_guard lock(mu_);
  Stmt d(db_, "DELETE FROM queue WHERE seq = ?");
  if (!d.ok()) return Status::Error(sqlite3_errmsg(db_));
  d.bind(1, seq);
  if (d.step() != SQLITE_DONE) return Status::Error(std::string("ack: ") + sqlite3_errmsg(db_));
  return Status::Ok();
}

Status DiskQueue::reject(int64_t seq, const std::string& error) {
  std::lock_guard lock(mu_);
  Status s = exec("BEGIN IMMEDIATE");
  if (!s.ok()) return s;
  Stmt m(db_,
         "INSERT OR REPLACE INTO dead(seq, sink, alert_id, payload, error, at_ms) "
         "SELECT seq, sink, alert_id, payload, ?, ? FROM queue WHERE seq = ?");
  Stmt d(db_, "DELETE FROM queue WHERE seq = ?");
  if (!m.ok() || !d.ok()) {
    exec("ROLLBACK");
    return Status::Error(sqlite3_errmsg(db_));
  }
  m.bind(1, error);
  m.bind(2, nowMs());
  m.bind(3, seq);
  d.bind(1, seq);
  if (m.step() != SQLITE_DONE || d.step() != SQLITE_DONE) {
    std::string msg = sqlite3_errmsg(db_);
    exec("ROLLBACK");
    return Status::Error("reject: " + msg);
  }
  return exec("COMMIT");
}

int64_t DiskQueue::pending(const std::string& sink) {
  std::lock_guard lock(mu_);
  Stmt q(db_, sink.empty() ? "SELECT count(*) FROM queue" : "SELECT count(*) FROM queue WHERE sink = ?");
  if (!q.ok()) return -1;
  if (!sink.empty()) q.bind(1, sink);
  return q.step() == SQLITE_ROW ? q.i64(0) : -1;
}

int64_t DiskQueue::rejected() {
  std::lock_guard lock(mu_);
  Stmt q(db_, "SELECT count(*) FROM dead");
  return q.ok() && q.step() == SQLITE_ROW ? q.i64(0) : -1;
}

}  // namespace gw::alert
