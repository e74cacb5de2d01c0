// The data folder's writes on a full disk (a small tmpfs filled to the last byte): atomic
// replacement keeps the old file, an append never leaves half a record, storage health logs once
// per episode with the path and once on recovery; and a damaged SQLite file is moved aside.
#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "../support/small_tmpfs.h"
#include "../support/temp_dir.h"
#include "platform/atomic_file.h"
#include "platform/sqlite.h"
#include "platform/storage_health.h"

namespace gw::platform {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(StorageFaults, AtomicReplaceOnAFullDiskKeepsTheOldFileAndLogsOnce) {
  testsupport::SmallTmpfs disk(256 << 10);
  if (!disk.mounted()) GTEST_SKIP() << disk.why();
  storageHealth().reset();
  const std::string path = disk.path() + "/kmsg-position.json";
  ASSERT_TRUE(writeFileAtomic(path, "{\"offset\":10}\n").ok());
  disk.fill();

  testing::internal::CaptureStderr();
  const std::string big(64 << 10, 'p');  // more than any page left over
  for (int i = 0; i < 5; ++i) {
    Status st = writeFileAtomic(path, big);
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.errnoCode(), ENOSPC) << st.message();
    EXPECT_NE(st.message().find(path), std::string::npos) << st.message();
    EXPECT_EQ(slurp(path), "{\"offset\":10}\n");  // never empty, never a part
  }
  const std::string log = testing::internal::GetCapturedStderr();
  EXPECT_EQ(count(log, "cannot write " + path), 1u) << log;
  EXPECT_NE(log.find("disk full"), std::string::npos) << log;
  EXPECT_FALSE(storageHealth().ok());
  EXPECT_NE(storageHealth().problem().find("disk full: cannot write " + path), std::string::npos);
  auto snap = storageHealth().snapshot();
  ASSERT_EQ(snap.size(), 1u);
  EXPECT_EQ(snap[0].write_errors, 5u);
  EXPECT_EQ(snap[0].file, "kmsg-position.json");
  // Only our own temporaries were created, and all were removed.
  for (const auto& e : std::filesystem::directory_iterator(disk.path()))
    EXPECT_EQ(e.path().filename().string().find(".kmsg-position.json.tmp"), std::string::npos) << e.path();

  disk.release();
  testing::internal::CaptureStderr();
  ASSERT_TRUE(writeFileAtomic(path, "{\"offset\":20}\n").ok());
  ASSERT_TRUE(writeFileAtomic(path, "{\"offset\":30}\n").ok());
  const std::string after = testing::internal::GetCapturedStderr();
  EXPECT_EQ(count(after, "storage recovered: " + path), 1u) << after;
  EXPECT_TRUE(storageHealth().ok());
  EXPECT_EQ(slurp(path), "{\"offset\":30}\n");
}

TEST(StorageFaults, AnAppendOnAFullDiskLeavesNoPartialRecord) {
  testsupport::SmallTmpfs disk(256 << 10);
  if (!disk.mounted()) GTEST_SKIP() << disk.why();
  storageHealth().reset();
  const std::string path = disk.path() + "/events.jsonl";
  ASSERT_TRUE(appendToFile(path, "{\"id\":1}\n").ok());
  disk.fill();
  // A record larger than the page the file's tail may still have free: written in part, then cut.
  const std::string record = std::string(20000, 'e') + "\n";
  testing::internal::CaptureStderr();
  Status st = appendToFile(path, record);
  (void)testing::internal::GetCapturedStderr();
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.errnoCode(), ENOSPC);
  EXPECT_EQ(slurp(path), "{\"id\":1}\n");
  disk.release();
  testing::internal::CaptureStderr();
  ASSERT_TRUE(appendToFile(path, record).ok());
  (void)testing::internal::GetCapturedStderr();
  EXPECT_EQ(slurp(path), "{\"id\":1}\n" + record);
  EXPECT_TRUE(storageHealth().ok());
}

TEST(StorageFaults, SqliteOnAFullDiskIsReportedAndRecovers) {
  testsupport::SmallTmpfs disk(512 << 10);
  if (!disk.mounted()) GTEST_SKIP() << disk.why();
  storageHealth().reset();
  const std::string path = disk.path() + "/incidents.db";
  auto db = Database::open(path, "incident database");
  ASSERT_TRUE(db.ok()) << db.error();
  ASSERT_TRUE((*db)->exec("PRAGMA journal_mode=WAL; CREATE TABLE t (v BLOB)").ok());
  disk.fill();
  testing::internal::CaptureStderr();
  Status st;
  for (int i = 0; i < 50 && st.ok(); ++i) st = (*db)->exec("INSERT INTO t VALUES (randomblob(8192))");
  const std::string log = testing::internal::GetCapturedStderr();
  ASSERT_FALSE(st.ok()) << "the full disk never refused";
  EXPECT_FALSE(isDamage(st));
  EXPECT_EQ(count(log, "cannot write " + path), 1u) << log;
  EXPECT_FALSE(storageHealth().ok());
  disk.release();
  testing::internal::CaptureStderr();
  ASSERT_TRUE((*db)->exec("INSERT INTO t VALUES (randomblob(8192))").ok());
  const std::string after = testing::internal::GetCapturedStderr();
  EXPECT_NE(after.find("storage recovered: " + path), std::string::npos) << after;
  EXPECT_TRUE(storageHealth().ok());
}

TEST(StorageFaults, ADamagedDatabaseIsMovedAsideWithItsJournal) {
  testsupport::TempDir dir("gw-damaged");
  const std::string path = dir.file("alerts.db");
  std::ofstream(path, std::ios::binary) << std::string(4096, '\x5a');
  {
    auto db = Database::open(path, "alert queue");
    ASSERT_TRUE(db.ok());  // SQLite opens lazily
    Status st = (*db)->checkIntegrity();
    ASSERT_FALSE(st.ok());
    EXPECT_TRUE(isDamage(st)) << st.message();
  }
  std::ofstream(path + "-wal", std::ios::binary) << "wal bytes";  // what a crashed writer leaves
  testing::internal::CaptureStderr();
  auto aside = moveAsideDamaged(path, "alert queue", "not a database");
  const std::string log = testing::internal::GetCapturedStderr();
  ASSERT_TRUE(aside.ok()) << aside.error();
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_FALSE(std::filesystem::exists(path + "-wal"));
  EXPECT_EQ(slurp(*aside), std::string(4096, '\x5a'));
  EXPECT_EQ(slurp(*aside + "-wal"), "wal bytes");
  EXPECT_NE(log.find("alert queue '" + path + "' is damaged (not a database): moved aside to " + *aside),
            std::string::npos)
      << log;
  // A fresh one opens and checks sound.
  auto db = Database::open(path, "alert queue");
  ASSERT_TRUE(db.ok());
  EXPECT_TRUE((*db)->checkIntegrity().ok());
}

// Only errno values that mean "the storage refuses writes" make a storage failure.
TEST(StorageHealth, StorageErrnosAreTheFiveThatMeanTheDiskRefuses) {
  for (int err : {ENOSPC, EDQUOT, EIO, EROFS, EFBIG}) EXPECT_TRUE(isStorageErrno(err)) << err;
  for (int err : {0, ENOMEM, EACCES, EINTR, ENOENT}) EXPECT_FALSE(isStorageErrno(err)) << err;
}

// Two files failing at once: each has its own line, its own count and the time it began failing
// (the first failure's, not the last's); one recovering leaves the other failing, and the other
// recovering later is still seen.
TEST(StorageHealth, EachFileFailsAndRecoversOnItsOwn) {
  testsupport::TempDir dir;
  StorageHealth h;
  const std::string a = dir.file("a.json"), b = dir.file("b.db");
  testing::internal::CaptureStderr();
  h.failed(a, EDQUOT, "fsync: quota");
  const auto since = h.snapshot().at(0).failing_since_ms;
  EXPECT_GT(since, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  h.failed(dir.path() + "/./a.json", EDQUOT, "fsync: quota");  // the same file by another name
  h.failed(b, EROFS, "rename: read-only");
  auto snap = h.snapshot();
  ASSERT_EQ(snap.size(), 2u);
  EXPECT_EQ(snap[0].write_errors, 2u);
  EXPECT_EQ(snap[0].failing_since_ms, since);
  EXPECT_EQ(snap[1].write_errors, 1u);
  EXPECT_EQ(h.problem(), "disk full: cannot write " + a + ": fsync: quota\nread-only file system: cannot write " + b +
                             ": rename: read-only");
  h.succeeded(a);
  h.succeeded(a);  // not failing any more: no second recovery in the log
  EXPECT_EQ(count(testing::internal::GetCapturedStderr(), "storage recovered: " + a), 1u);
  testing::internal::CaptureStderr();
  EXPECT_FALSE(h.ok());
  EXPECT_EQ(h.problem(), "read-only file system: cannot write " + b + ": rename: read-only");
  h.failed(a, EIO, "write");
  EXPECT_EQ(h.problem(), "write error: cannot write " + a + ": write\nread-only file system: cannot write " + b +
                             ": rename: read-only");
  h.succeeded(a);
  h.succeeded(b);
  testing::internal::GetCapturedStderr();
  EXPECT_TRUE(h.ok());
  EXPECT_EQ(h.problem(), "");
  h.movedAside(b);
  h.movedAside(b);
  EXPECT_EQ(h.snapshot().at(1).moved_aside, 2u);
  EXPECT_EQ(h.snapshot().at(1).write_errors, 1u);
}

}  // namespace
}  // namespace gw::platform
