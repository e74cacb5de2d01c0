#include "platform/sqlite.h"

#include <sqlite3.h>

#include <utility>

namespace gw::platform {

Statement::Statement(Statement&& other) noexcept {
  // The running use resets the statement while `other` still holds it.
  if (other.active_) other.active_->finish();
  db_ = std::exchange(other.db_, nullptr);
  stmt_ = std::exchange(other.stmt_, nullptr);
}

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    release();
    if (other.active_) other.active_->finish();
    db_ = std::exchange(other.db_, nullptr);
    stmt_ = std::exchange(other.stmt_, nullptr);
  }
  return *this;
}

Statement::~Statement() { release(); }

void Statement::release() {
  if (active_) active_->finish();
  sqlite3_finalize(stmt_);
  stmt_ = nullptr;
  db_ = nullptr;
}

Query Statement::use() {
  if (active_) active_->finish();
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
  return Query(*this);
}

Query::Query(Query&& other) noexcept
    : st_(std::exchange(other.st_, nullptr)), done_(other.done_), status_(std::move(other.status_)) {
  if (st_ && st_->active_ == &other) st_->active_ = this;
}

Query::~Query() { finish(); }

void Query::finish() {
  done_ = true;
  if (!st_) return;
  if (st_->active_ == this) {
    sqlite3_reset(st_->stmt_);
    st_->active_ = nullptr;
  }
  st_ = nullptr;
}

Query& Query::bind(int index, int64_t v) {
  if (st_) sqlite3_bind_int64(st_->stmt_, index, v);
  return *this;
}

Query& Query::bind(int index, double v) {
  if (st_) sqlite3_bind_double(st_->stmt_, index, v);
  return *this;
}

Query& Query::bind(int index, std::string_view text) {
  if (st_) sqlite3_bind_text(st_->stmt_, index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
  return *this;
}

Query& Query::bind(int index, std::span<const uint8_t> blob) {
  // SQLITE_STATIC: the caller keeps the blob alive until the query has run (no copy of chunks).
  if (st_) sqlite3_bind_blob(st_->stmt_, index, blob.data(), static_cast<int>(blob.size()), SQLITE_STATIC);
  return *this;
}

Query& Query::bindNull(int index) {
  if (st_) sqlite3_bind_null(st_->stmt_, index);
  return *this;
}

bool Query::step() {
  if (done_ || !st_) return false;
  const int rc = sqlite3_step(st_->stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc != SQLITE_DONE) status_ = Status::Sqlite(rc, sqlite3_errmsg(st_->db_));
  // Done or failed: reset now, so that neither a read snapshot nor an unfinished write (a step
  // that failed with SQLITE_BUSY is not halted) outlives this call.
  finish();
  return false;
}

Status Query::run() {
  while (step()) {
  }
  return status_;
}

int64_t Query::int64(int col) const { return sqlite3_column_int64(st_ ? st_->stmt_ : nullptr, col); }
int Query::int32(int col) const { return sqlite3_column_int(st_ ? st_->stmt_ : nullptr, col); }
double Query::real(int col) const { return sqlite3_column_double(st_ ? st_->stmt_ : nullptr, col); }
// A finished query reads as an empty row: sqlite3_column_* accept a null statement.
bool Query::isNull(int col) const { return sqlite3_column_type(st_ ? st_->stmt_ : nullptr, col) == SQLITE_NULL; }

std::string Query::text(int col) const {
  sqlite3_stmt* s = st_ ? st_->stmt_ : nullptr;
  const auto* p = sqlite3_column_text(s, col);
  return p ? std::string(reinterpret_cast<const char*>(p), static_cast<size_t>(sqlite3_column_bytes(s, col)))
           : std::string();
}

std::span<const uint8_t> Query::blob(int col) const {
  sqlite3_stmt* s = st_ ? st_->stmt_ : nullptr;
  const auto* p = static_cast<const uint8_t*>(sqlite3_column_blob(s, col));
  return {p, static_cast<size_t>(sqlite3_column_bytes(s, col))};
}

Result<std::unique_ptr<Database>> Database::open(const std::string& path, std::string label,
                                                 const OpenOptions& options) {
  sqlite3* db = nullptr;
  // NOMUTEX: every owner serialises use of its connection with its own mutex.
  const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
  const int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close(db);
    return Status::Sqlite(rc, "cannot open " + label + " '" + path + "': " + msg);
  }
  sqlite3_extended_result_codes(db, 1);
  // Another process (the CLI, a second agent) may hold the lock for a moment: wait, don't fail.
  sqlite3_busy_timeout(db, options.busy_timeout_ms);
  std::unique_ptr<Database> out(new Database(db, path, std::move(label)));
  if (options.read_only) {
    if (Status s = out->exec("PRAGMA query_only=1"); !s.ok()) return s;
  }
  return out;
}

Database::~Database() { sqlite3_close_v2(db_); }

std::string Database::describe(std::string_view what) const {
  return label_ + " '" + path_ + "': " + std::string(what);
}

std::string Database::lastError() const { return sqlite3_errmsg(db_); }

int64_t Database::lastInsertRowId() const { return sqlite3_last_insert_rowid(db_); }

int Database::busyStatements() const {
  int n = 0;
  for (sqlite3_stmt* s = sqlite3_next_stmt(db_, nullptr); s != nullptr; s = sqlite3_next_stmt(db_, s))
    if (sqlite3_stmt_busy(s)) ++n;
  return n;
}

Status Database::exec(const char* sql) {
  char* err = nullptr;
  const int rc = sqlite3_exec(db_, sql, nullptr, nullptr, &err);
  if (rc == SQLITE_OK) return Status::Ok();
  std::string msg = err ? err : sqlite3_errstr(rc);
  sqlite3_free(err);
  return Status::Sqlite(rc, describe(msg));
}

Result<Statement> Database::prepare(const char* sql) {
  sqlite3_stmt* stmt = nullptr;
  const int rc = sqlite3_prepare_v3(db_, sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
  if (rc != SQLITE_OK) return Status::Sqlite(rc, describe(sqlite3_errmsg(db_)));
  return Statement(db_, stmt);
}

Result<std::string> Database::queryText(const char* sql) {
  auto st = prepare(sql);
  if (!st) return st.status();
  Query q = st->use();
  if (q.step()) return q.text(0);
  if (!q.status().ok()) return q.status().withMessage(describe(q.status().message()));
  return std::string();
}

Result<int64_t> Database::queryInt(const char* sql) {
  auto st = prepare(sql);
  if (!st) return st.status();
  Query q = st->use();
  if (q.step()) return q.int64(0);
  if (!q.status().ok()) return q.status().withMessage(describe(q.status().message()));
  return int64_t{0};
}

Transaction::Transaction(Database& db, Mode mode) : db_(db) {
  begun_ = db_.exec(mode == Mode::Write ? "BEGIN IMMEDIATE" : "BEGIN");
  open_ = begun_.ok();
}

Transaction::~Transaction() {
  if (open_) (void)db_.exec("ROLLBACK");
}

Status Transaction::commit() {
  if (!open_) return begun_.ok() ? Status::Error(db_.describe("transaction already finished")) : begun_;
  Status s = db_.exec("COMMIT");
  if (s.ok()) open_ = false;
  return s;
}

}  // namespace gw::platform
