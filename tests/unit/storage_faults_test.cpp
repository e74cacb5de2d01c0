// The data folder's writes on a full disk (a small tmpfs filled to the last byte): atomic
// replacement keeps the old file, an append never leaves half a record, storage health logs once
// per episode with the path and once on recovery; and a damaged SQLite file is moved aside.
#include <gtest/gtest.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <sstream>

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

}  // namespace
}  // namespace gw::platform
