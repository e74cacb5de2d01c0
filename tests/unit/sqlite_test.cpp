// The SQLite wrapper: scoped statement uses, two connections on one file, busy waits.
#include <gtest/gtest.h>

#include <thread>

#include "../support/temp_dir.h"
#include "platform/sqlite.h"

namespace gw::platform {
namespace {

struct Pair {
  std::unique_ptr<Database> agent, cli;
};

// Two connections on one WAL file, as the agent and a CLI process have on incidents.db.
Pair openPair(const std::string& path) {
  auto a = Database::open(path, "test database");
  EXPECT_TRUE(a.ok()) << a.error();
  EXPECT_TRUE((*a)->exec("PRAGMA journal_mode=WAL; CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER);").ok());
  EXPECT_TRUE((*a)->exec("INSERT INTO t VALUES ('a', 1), ('b', 2)").ok());
  auto b = Database::open(path, "test database");
  EXPECT_TRUE(b.ok()) << b.error();
  return {std::move(a.value()), std::move(b.value())};
}

Status writeInTransaction(Database& db, Statement& update, int64_t v) {
  Transaction tx(db);
  if (!tx.begun().ok()) return tx.begun();
  if (Status s = update.use().bind(1, v).bind(2, "a").run(); !s.ok()) return s;
  return tx.commit();
}

// The incidents.db wedge: the agent stepped a SELECT to its row and moved on without resetting
// it; the CLI resolved an incident (committed); from then on every write of the agent failed and
// left its UPDATE mid-run, so every later COMMIT said "SQL statements in progress".
TEST(Sqlite, ARowReadLeavesNothingOpenAcrossAnotherConnectionsCommit) {
  testsupport::TempDir dir;
  auto [agent, cli] = openPair(dir.file("x.db"));
  auto count = agent->prepare("SELECT count(*) FROM t WHERE k = ?");
  auto update = agent->prepare("UPDATE t SET v = ? WHERE k = ?");
  auto cli_update = cli->prepare("UPDATE t SET v = ? WHERE k = ?");
  ASSERT_TRUE(count.ok() && update.ok() && cli_update.ok());

  for (int pass = 0; pass < 5; ++pass) {
    // One pass of the agent, shaped like IncidentStore::apply.
    Transaction tx(*agent);
    ASSERT_TRUE(tx.begun().ok()) << "pass " << pass << ": " << tx.begun().message();
    {
      // The pattern of the bug: one row read, the statement neither stepped to its end nor reset.
      auto q = count->use();
      q.bind(1, "a");
      ASSERT_TRUE(q.step());
      EXPECT_EQ(q.int64(0), 1);
    }
    ASSERT_TRUE(update->use().bind(1, int64_t{pass}).bind(2, "a").run().ok());
    Status s = tx.commit();
    ASSERT_TRUE(s.ok()) << "pass " << pass << ": " << s.message();
    EXPECT_EQ(agent->busyStatements(), 0) << "a use that ended holds no statement open";
    // The CLI's write between two passes.
    ASSERT_TRUE(cli_update->use().bind(1, int64_t{100 + pass}).bind(2, "b").run().ok());
  }
  EXPECT_EQ(cli->queryInt("SELECT v FROM t WHERE k = 'a'").value_or(-1), 4);
  EXPECT_EQ(agent->queryInt("SELECT v FROM t WHERE k = 'b'").value_or(-1), 104);
}

// What the wrapper guards against, shown with a use deliberately kept open: the stale snapshot
// makes the write fail; the failure leaves nothing running, and the connection recovers as soon as
// the use ends.
TEST(Sqlite, AHeldReadFailsTheWriteButNeverWedgesTheConnection) {
  testsupport::TempDir dir;
  auto [agent, cli] = openPair(dir.file("x.db"));
  auto scan = agent->prepare("SELECT k FROM t ORDER BY k");
  auto update = agent->prepare("UPDATE t SET v = ? WHERE k = ?");
  ASSERT_TRUE(scan.ok() && update.ok());
  {
    auto held = scan->use();
    ASSERT_TRUE(held.step());
    ASSERT_TRUE(cli->exec("UPDATE t SET v = 50 WHERE k = 'b'").ok());
    Status s = update->use().bind(1, int64_t{7}).bind(2, "a").run();
    EXPECT_FALSE(s.ok()) << "a write on a snapshot older than the other connection's commit";
    EXPECT_EQ(agent->busyStatements(), 1) << "only the held read is running; the failed write was reset";
  }
  EXPECT_EQ(agent->busyStatements(), 0);
  for (int pass = 0; pass < 3; ++pass) {
    Status s = writeInTransaction(*agent, *update, 10 + pass);
    ASSERT_TRUE(s.ok()) << "pass " << pass << ": " << s.message();
  }
  EXPECT_EQ(cli->queryInt("SELECT v FROM t WHERE k = 'a'").value_or(-1), 12);
}

TEST(Sqlite, AStepLoopToTheEndAndANewUseResetTheStatement) {
  testsupport::TempDir dir;
  auto [agent, cli] = openPair(dir.file("x.db"));
  auto scan = agent->prepare("SELECT k, v FROM t ORDER BY k");
  ASSERT_TRUE(scan.ok());
  auto q = scan->use();
  std::string keys;
  while (q.step()) keys += q.text(0);
  EXPECT_EQ(keys, "ab");
  EXPECT_TRUE(q.status().ok());
  EXPECT_EQ(agent->busyStatements(), 0) << "reset when the rows ran out, before the use ends";
  EXPECT_FALSE(q.step()) << "a finished use does not start over";

  auto first = scan->use();
  ASSERT_TRUE(first.step());
  auto second = scan->use();  // ends `first`
  EXPECT_FALSE(first.step());
  ASSERT_TRUE(second.step());
  EXPECT_EQ(second.text(0), "a");

  Statement moved(std::move(*scan));  // ends `second`, and resets the statement it had
  EXPECT_FALSE(second.step());
  EXPECT_EQ(agent->busyStatements(), 0);
  auto again = moved.use();
  ASSERT_TRUE(again.step());
  EXPECT_EQ(again.text(0), "a");
}

TEST(Sqlite, ASecondWriterWaitsForTheBusyTimeout) {
  testsupport::TempDir dir;
  auto [agent, cli] = openPair(dir.file("x.db"));
  std::thread holder;
  {
    auto tx = std::make_unique<Transaction>(*cli);
    ASSERT_TRUE(tx->begun().ok());
    ASSERT_TRUE(cli->exec("UPDATE t SET v = 3 WHERE k = 'a'").ok());
    holder = std::thread([tx = std::move(tx)]() mutable {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      EXPECT_TRUE(tx->commit().ok());
    });
  }
  // Without a busy timeout this would fail at once with "database is locked". The default (5 s) is
  // too long to wait out in a test; callers rely on its value.
  EXPECT_EQ(OpenOptions{}.busy_timeout_ms, 5000);
  Status s = agent->exec("BEGIN IMMEDIATE; UPDATE t SET v = v + 1 WHERE k = 'a'; COMMIT;");
  holder.join();
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(agent->queryInt("SELECT v FROM t WHERE k = 'a'").value_or(-1), 4);
}

TEST(Sqlite, ErrorsNameTheDatabase) {
  testsupport::TempDir dir;
  auto missing = Database::open(dir.file("no/such/dir/x.db"), "test database");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().find("test database"), std::string::npos) << missing.error();
  EXPECT_NE(missing.error().find("no/such/dir/x.db"), std::string::npos) << missing.error();
  auto db = Database::open(dir.file("x.db"), "test database");
  ASSERT_TRUE(db.ok());
  auto bad = (*db)->prepare("SELECT x FROM nowhere");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().find("no such table"), std::string::npos) << bad.error();
  auto ro = Database::open(dir.file("x.db"), "test database", {.read_only = true});
  ASSERT_TRUE(ro.ok());
  EXPECT_FALSE((*ro)->exec("CREATE TABLE u (x)").ok()) << "query_only";
}

// A file at the version this code understands opens; one older is brought up to it; one a
// version newer is refused before the schema touches it (a newer file is not damage).
TEST(Sqlite, ASchemaNewerThanUnderstoodIsRefusedAndNothingWritten) {
  testsupport::TempDir dir;
  const auto open3 = [&](const std::string& name) {
    return openWithSchema(dir.file(name), "test database", 3, {"CREATE TABLE IF NOT EXISTS u (x)"});
  };
  const auto preset = [&](const std::string& name, int version) {
    auto db = Database::open(dir.file(name), "test database");
    ASSERT_TRUE(db.ok()) << db.error();
    ASSERT_TRUE((*db)->exec(("PRAGMA user_version=" + std::to_string(version)).c_str()).ok());
  };
  auto fresh = open3("fresh.db");
  ASSERT_TRUE(fresh.ok()) << fresh.error();
  EXPECT_EQ((*fresh)->queryInt("PRAGMA user_version").value_or(-1), 3);
  preset("older.db", 2);
  auto older = open3("older.db");
  ASSERT_TRUE(older.ok()) << older.error();
  EXPECT_EQ((*older)->queryInt("PRAGMA user_version").value_or(-1), 3);
  preset("same.db", 3);
  auto same = open3("same.db");
  ASSERT_TRUE(same.ok()) << same.error();
  EXPECT_EQ((*same)->queryInt("SELECT count(*) FROM sqlite_master WHERE name = 'u'").value_or(-1), 1);
  preset("newer.db", 4);
  auto newer = open3("newer.db");
  ASSERT_FALSE(newer.ok());
  EXPECT_NE(newer.error().find("schema version 4 is newer than this gpuwarden understands (3)"), std::string::npos)
      << newer.error();
  auto look = Database::open(dir.file("newer.db"), "test database");
  ASSERT_TRUE(look.ok());
  EXPECT_EQ((*look)->queryInt("SELECT count(*) FROM sqlite_master WHERE name = 'u'").value_or(-1), 0);
  EXPECT_EQ((*look)->queryInt("PRAGMA user_version").value_or(-1), 4);
}

}  // namespace
}  // namespace gw::platform
