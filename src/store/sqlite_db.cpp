#include "store/sqlite_db.h"

namespace gw::store {

Statement& Statement::use() {
  sqlite3_reset(stmt_.get());
  sqlite3_clear_bindings(stmt_.get());
  status_ = Status::Ok();
  return *this;
}

Statement& Statement::bind(int index, int64_t v) {
  sqlite3_bind_int64(stmt_.get(), index, v);
  return *this;
}

Statement& Statement::bind(int index, double v) {
  sqlite3_bind_double(stmt_.get(), index, v);
  return *this;
}

Statement& Statement::bind(int index, std::string_view text) {
  sqlite3_bind_text(stmt_.get(), index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
  return *this;
}

Statement& Statement::bind(int index, std::span<const uint8_t> blob) {
  // SQLITE_STATIC: callers keep the blob alive until the statement has run.
  sqlite3_bind_blob(stmt_.get(), index, blob.data(), static_cast<int>(blob.size()), SQLITE_STATIC);
  return *this;
}

bool Statement::step() {
  const int rc = sqlite3_step(stmt_.get());
  if (rc == SQLITE_ROW) return true;
  if (rc != SQLITE_DONE) status_ = Status::Error(sqlite3_errmsg(db_), rc);
  return false;
}

Status Statement::run() {
  while (step()) {
  }
  Status result = status_;
  sqlite3_reset(stmt_.get());
  return result;
}

std::string Statement::text(int col) const {
  const auto* p = sqlite3_column_text(stmt_.get(), col);
  return p ? std::string(reinterpret_cast<const char*>(p), static_cast<size_t>(sqlite3_column_bytes(stmt_.get(), col)))
           : std::string();
}

std::span<const uint8_t> Statement::blob(int col) const {
  const auto* p = static_cast<const uint8_t*>(sqlite3_column_blob(stmt_.get(), col));
  return {p, static_cast<size_t>(sqlite3_column_bytes(stmt_.get(), col))};
}

Result<std::unique_ptr<Database>> Database::open(const std::string& path) {
  sqlite3* db = nullptr;
  // NOMUTEX: the store serialises use of each connection itself.
  const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
  const int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close(db);
    return Status::Error("cannot open history database '" + path + "': " + msg, rc);
  }
  sqlite3_extended_result_codes(db, 1);
  sqlite3_busy_timeout(db, 5000);
  return std::unique_ptr<Database>(new Database(db, path));
}

Database::~Database() { sqlite3_close(db_); }

Status Database::exec(const char* sql) {
  char* err = nullptr;
  const int rc = sqlite3_exec(db_, sql, nullptr, nullptr, &err);
  if (rc == SQLITE_OK) return Status::Ok();
  std::string msg = err ? err : sqlite3_errstr(rc);
  sqlite3_free(err);
  return Status::Error("history database '" + path_ + "': " + msg, rc);
}

Result<Statement> Database::prepare(const char* sql) {
  sqlite3_stmt* stmt = nullptr;
  const int rc = sqlite3_prepare_v3(db_, sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
  if (rc != SQLITE_OK) return Status::Error("history database '" + path_ + "': " + sqlite3_errmsg(db_), rc);
  return Statement(db_, stmt);
}

Result<std::string> Database::queryText(const char* sql) {
  auto st = prepare(sql);
  if (!st) return st.status();
  if (!st->step()) {
    if (!st->status().ok()) return Status::Error("history database '" + path_ + "': " + st->status().message());
    return std::string();
  }
  return st->text(0);
}

Result<int64_t> Database::queryInt(const char* sql) {
  auto st = prepare(sql);
  if (!st) return st.status();
  if (!st->step()) {
    if (!st->status().ok()) return Status::Error("history database '" + path_ + "': " + st->status().message());
    return int64_t{0};
  }
  return st->int64(0);
}

Transaction::Transaction(Database& db) : db_(db) {
  begun_ = db_.exec("BEGIN IMMEDIATE");
  open_ = begun_.ok();
}

Transaction::~Transaction() {
  if (open_) db_.exec("ROLLBACK");
}

Status Transaction::commit() {
  if (!open_) return begun_.ok() ? Status::Error("transaction already finished") : begun_;
  Status s = db_.exec("COMMIT");
  if (s.ok()) open_ = false;
  return s;
}

}  // namespace gw::store
