#include "platform/sqlite.h"

#include <sqlite3.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <utility>

#include "platform/clock.h"
#include "platform/log.h"
#include "platform/storage_health.h"

namespace gw::platform {
namespace {

// The errno behind a failed write of this connection, for storage health; 0 when the result is
// not about the storage (a constraint, a busy lock, a bad statement).
int storageErrno(sqlite3* db, int rc) {
  switch (rc & 0xff) {
    case SQLITE_FULL:
      return ENOSPC;
    case SQLITE_IOERR: {
      const int sys = sqlite3_system_errno(db);
      return sys != 0 ? sys : EIO;
    }
    case SQLITE_READONLY:
      return EROFS;
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return EIO;
    default:
      return 0;
  }
}

std::string fileOf(sqlite3* db) {
  const char* f = sqlite3_db_filename(db, "main");
  return f ? std::string(f) : std::string();
}

// Reports the outcome of a write of `db` to storage health, under SQLite's name for the file (the
// full path), so that every connection to one file reports as one.
void reportWrite(sqlite3* db, int rc, std::string path) {
  if (db == nullptr) return;
  if (std::string full = fileOf(db); !full.empty()) path = std::move(full);
  if (path.empty()) return;
  if (rc == SQLITE_OK || rc == SQLITE_DONE) {
    storageHealth().succeeded(path);
    return;
  }
  if (const int err = storageErrno(db, rc); err != 0) {
    std::string why = sqlite3_errstr(rc);
    if (const std::string msg = sqlite3_errmsg(db); msg != why) why += " (" + msg + ")";
    storageHealth().failed(path, err, why);
  }
}

}  // namespace

bool isDamage(const Status& st) {
  const int rc = st.sqliteCode() & 0xff;
  return rc == SQLITE_CORRUPT || rc == SQLITE_NOTADB;
}

Status damaged(const std::string& what) { return Status::Sqlite(SQLITE_CORRUPT, what); }

Result<std::string> moveAsideDamaged(const std::string& path, const std::string& label, const std::string& why) {
  namespace fs = std::filesystem;
  std::string stamp = formatRfc3339(wallMs());  // 2026-01-02T03:04:05.678Z
  std::string compact;
  for (char c : stamp)
    if (c != '-' && c != ':') compact += c == '.' ? '-' : c;
  std::string aside = path + ".damaged-" + compact;
  std::error_code ec;
  for (int n = 2; fs::exists(aside, ec) && n < 1000; ++n)
    aside = path + ".damaged-" + compact + "-" + std::to_string(n);
  // The main file last: a crash in between leaves the journal files next to nothing, which SQLite ignores.
  for (const char* suffix : {"-wal", "-shm", "-journal"}) {
    if (!fs::exists(path + suffix, ec)) continue;
    fs::rename(path + suffix, aside + suffix, ec);
    if (ec) return Status::Errno(ec.value(), "cannot move " + path + suffix + " aside: " + ec.message());
  }
  if (fs::exists(path, ec)) {
    fs::rename(path, aside, ec);
    if (ec) return Status::Errno(ec.value(), "cannot move " + path + " aside: " + ec.message());
  }
  storageHealth().movedAside(path);
  // The reason usually names the file already ("<label> '<path>': file is not a database").
  std::string reason = why;
  if (const std::string prefix = label + " '" + path + "': "; reason.rfind(prefix, 0) == 0)
    reason.erase(0, prefix.size());
  logLine("error", label + " '" + path + "' is damaged (" + reason + "): moved aside to " + aside +
                       " (kept for inspection) and started afresh");
  return aside;
}

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
  // A write that ends outside a transaction is committed (or refused) here.
  if (!sqlite3_stmt_readonly(st_->stmt_) && sqlite3_get_autocommit(st_->db_))
    reportWrite(st_->db_, rc, {});
  else if (rc != SQLITE_DONE)
    reportWrite(st_->db_, rc, {});
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
    if (db) reportWrite(db, rc, path);
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
  const sqlite3_int64 changes = sqlite3_total_changes64(db_);
  const int rc = sqlite3_exec(db_, sql, nullptr, nullptr, &err);
  // Success counts as a write for COMMIT and for changes committed outside a transaction (a
  // ROLLBACK or a PRAGMA proves nothing).
  if (rc != SQLITE_OK || std::strncmp(sql, "COMMIT", 6) == 0 ||
      (sqlite3_get_autocommit(db_) && sqlite3_total_changes64(db_) != changes))
    reportWrite(db_, rc, path_);
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

Result<int64_t> Database::schemaVersion(int64_t understood) {
  auto version = queryInt("PRAGMA user_version");
  if (!version) return version.status();
  if (*version > understood)
    return Status::Error(describe("schema version " + std::to_string(*version) +
                                  " is newer than this gpuwarden understands (" + std::to_string(understood) + ")"));
  return *version;
}

Result<std::unique_ptr<Database>> openWithSchema(const std::string& path, const std::string& label, int64_t version,
                                                 std::initializer_list<const char*> schema) {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  auto db = Database::open(path, label);
  if (!db) return db.status();
  Database& d = **db;
  if (auto st = d.checkIntegrity(); !st.ok()) return st;
  auto found = d.schemaVersion(version);
  if (!found) return found.status();
  for (const char* sql : schema)
    if (auto st = d.exec(sql); !st.ok()) return st;
  if (*found != version)
    if (auto st = d.exec(("PRAGMA user_version=" + std::to_string(version)).c_str()); !st.ok()) return st;
  return db;
}

Status Database::checkIntegrity() {
  auto r = queryText("PRAGMA quick_check");
  if (!r) return r.status();
  if (*r != "ok") return damaged(describe("integrity check failed: " + *r));
  return Status::Ok();
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
