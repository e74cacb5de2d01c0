// Thin RAII wrappers over the system SQLite: one connection, prepared statements with bound
// values (SQL is never built from values), errors as Status with SQLite's message.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "common/result.h"

namespace gw::store {

class Statement {
 public:
  Statement() = default;
  Statement(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt, &sqlite3_finalize) {}

  // Resets the statement and its bindings for a fresh use; returns *this for chaining binds.
  Statement& use();
  Statement& bind(int index, int64_t v);
  Statement& bind(int index, double v);
  Statement& bind(int index, std::string_view text);
  Statement& bind(int index, std::span<const uint8_t> blob);

  // Next row: true with a row, false when done or on error (see status()).
  bool step();
  // Runs a statement that returns no rows (or ignores them).
  Status run();
  const Status& status() const { return status_; }

  int64_t int64(int col) const { return sqlite3_column_int64(stmt_.get(), col); }
  double real(int col) const { return sqlite3_column_double(stmt_.get(), col); }
  bool isNull(int col) const { return sqlite3_column_type(stmt_.get(), col) == SQLITE_NULL; }
  std::string text(int col) const;
  std::span<const uint8_t> blob(int col) const;

 private:
  sqlite3* db_ = nullptr;
  std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt*)> stmt_{nullptr, &sqlite3_finalize};
  Status status_;
};

class Database {
 public:
  static Result<std::unique_ptr<Database>> open(const std::string& path);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  Status exec(const char* sql);
  Result<Statement> prepare(const char* sql);
  // A single-value pragma or query, as text (e.g. "PRAGMA journal_mode=WAL" -> "wal").
  Result<std::string> queryText(const char* sql);
  Result<int64_t> queryInt(const char* sql);
  std::string lastError() const { return sqlite3_errmsg(db_); }
  const std::string& path() const { return path_; }

 private:
  Database(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  sqlite3* db_;
  std::string path_;
};

// BEGIN IMMEDIATE on construction; ROLLBACK on destruction unless commit() succeeded.
class Transaction {
 public:
  explicit Transaction(Database& db);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  const Status& begun() const { return begun_; }
  Status commit();

 private:
  Database& db_;
  Status begun_;
  bool open_ = false;
};

}  // namespace gw::store
