// The one SQLite wrapper: a connection, prepared statements with bound values (SQL is never built
// from values), transactions, errors as Status with SQLite's message.
//
// A statement is only ever run through a Query, which resets it when the query finishes or goes
// out of scope. A statement left mid-read (a SELECT stepped to a row and never reset) keeps a read
// snapshot open: once another connection commits, this connection's next write fails with
// SQLITE_BUSY_SNAPSHOT, leaves its write statement in progress, and every COMMIT after it fails
// with "cannot commit transaction - SQL statements in progress". Scoped queries make that state
// unreachable.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "common/result.h"

struct sqlite3;
struct sqlite3_stmt;

namespace gw::platform {

class Query;

// A prepared statement owned by one connection. Persistent: prepare once, use many times.
class Statement {
 public:
  Statement() = default;
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&& other) noexcept;
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Starts a use with fresh (null) bindings. A use still running ends here (it sees no more rows).
  Query use();
  bool valid() const { return stmt_ != nullptr; }

 private:
  friend class Database;
  friend class Query;
  Statement(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  void release();
  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
  Query* active_ = nullptr;  // the running use, whose end resets the statement
};

// One use of a Statement: bind, step through rows or run, read columns. Resets the statement
// when the rows are exhausted, on an error, and in any case when it is destroyed.
class Query {
 public:
  Query(Query&& other) noexcept;
  Query& operator=(Query&&) = delete;
  Query(const Query&) = delete;
  Query& operator=(const Query&) = delete;
  ~Query();

  Query& bind(int index, int64_t v);
  Query& bind(int index, int v) { return bind(index, static_cast<int64_t>(v)); }
  Query& bind(int index, double v);
  Query& bind(int index, std::string_view text);
  Query& bind(int index, const std::string& text) { return bind(index, std::string_view(text)); }
  Query& bind(int index, const char* text) { return bind(index, std::string_view(text)); }
  // The blob must stay alive until the query has run.
  Query& bind(int index, std::span<const uint8_t> blob);
  Query& bindNull(int index);

  // Next row: true with a row; false when done or on error (see status()), and the statement is
  // reset then, so a loop that runs to the end holds nothing open.
  bool step();
  // Runs to completion (ignoring rows) and returns the outcome.
  Status run();
  // Ends this use now: the statement is reset; no more rows.
  void finish();
  const Status& status() const { return status_; }

  int64_t int64(int col) const;
  int int32(int col) const;
  double real(int col) const;
  bool isNull(int col) const;
  std::string text(int col) const;
  std::span<const uint8_t> blob(int col) const;

 private:
  friend class Statement;
  explicit Query(Statement& st) : st_(&st) { st.active_ = this; }
  Statement* st_;
  bool done_ = false;
  Status status_;
};

struct OpenOptions {
  // How long a connection waits for another connection's lock before failing with SQLITE_BUSY.
  int busy_timeout_ms = 5000;
  bool read_only = false;  // PRAGMA query_only: this connection never writes
};

class Database {
 public:
  // Opens (creating) the file. `label` names it in every message, e.g. "history database".
  static Result<std::unique_ptr<Database>> open(const std::string& path, std::string label,
                                                const OpenOptions& options = {});
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  // One or more statements without values or rows (schema, pragmas, BEGIN/COMMIT).
  Status exec(const char* sql);
  Result<Statement> prepare(const char* sql);
  Result<Statement> prepare(const std::string& sql) { return prepare(sql.c_str()); }
  // The first column of the first row, as text ("" with no row), e.g. "PRAGMA journal_mode=WAL".
  Result<std::string> queryText(const char* sql);
  // The first column of the first row, as an integer (0 with no row).
  Result<int64_t> queryInt(const char* sql);
  int64_t lastInsertRowId() const;
  // How many statements of this connection are mid-run; 0 between uses. For tests and asserts.
  int busyStatements() const;

  std::string lastError() const;
  const std::string& path() const { return path_; }
  const std::string& label() const { return label_; }
  // "<label> '<path>': <what>", the shape of every message about this database.
  std::string describe(std::string_view what) const;
  // PRAGMA quick_check: a damage Status (isDamage) when the file does not hold a sound database.
  // Reads every page once: called at open, never per write.
  Status checkIntegrity();
  // The file's PRAGMA user_version, or an error naming the file and both versions when it is newer
  // than `understood` (refused before anything is written: a newer file is not damage).
  Result<int64_t> schemaVersion(int64_t understood);

 private:
  Database(sqlite3* db, std::string path, std::string label)
      : db_(db), path_(std::move(path)), label_(std::move(label)) {}
  sqlite3* db_;
  std::string path_;
  std::string label_;
};

// A transaction: BEGIN IMMEDIATE (Write: takes the write lock up front, waiting up to the busy
// timeout, so no write inside fails on a stale snapshot) or BEGIN (Read: one consistent snapshot
// for several queries). Rolls back on destruction unless commit() succeeded.
class Transaction {
 public:
  enum class Mode { Write, Read };
  explicit Transaction(Database& db, Mode mode = Mode::Write);
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

// Writes through this wrapper report to storageHealth() (platform/storage_health.h): a statement
// or COMMIT refused with SQLITE_FULL / IOERR / READONLY marks the file failing (logged once), a
// later successful commit marks it recovered.

// True when `st` says the file is not a sound database (SQLITE_CORRUPT, SQLITE_NOTADB): what no
// retry cures. Everything else (full disk, permissions, a busy lock) is not damage.
bool isDamage(const Status& st);
// A Status that isDamage() recognises, for damage found by the caller's own checks (an id or a
// length read from the file that is out of range).
Status damaged(const std::string& what);
// Moves a damaged database file (and its -wal, -shm and -journal files) to
// "<path>.damaged-<YYYYMMDDTHHMMSS-mmmZ>" (kept for inspection), logs it with `why` and counts it
// in storage health. Returns the new name. The caller must have closed every connection to it.
Result<std::string> moveAsideDamaged(const std::string& path, const std::string& label, const std::string& why);

// Opens the file (creating its folder) as a database of schema `version`: checks its integrity,
// refuses a newer version, runs `schema` (pragmas, CREATE … IF NOT EXISTS) and stamps the version
// when the file had none. A version-0 file must have this very schema: stamping it is the whole
// migration. A file already of this version is not written, so it opens on a full disk too.
Result<std::unique_ptr<Database>> openWithSchema(const std::string& path, const std::string& label, int64_t version,
                                                 std::initializer_list<const char*> schema);

// Runs `open`; when it finds the file damaged (isDamage), moves the file aside (kept, logged) and
// runs it once more on a fresh file: what the file held is lost, the service is not.
template <typename T, typename Open>
Result<T> openOrMoveAside(const std::string& path, const std::string& label, Open&& open) {
  Result<T> r = open();
  if (r || !isDamage(r.status())) return r;
  auto aside = moveAsideDamaged(path, label, r.error());
  if (!aside) return aside.status();
  return open();
}

}  // namespace gw::platform
