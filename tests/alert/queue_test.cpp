// The on-disk alert queue's file: its schema version (the committed goldens in tests/golden/ check
// what it holds and loads).
#include "alert/queue.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "../support/temp_dir.h"
#include "platform/sqlite.h"

namespace gw::alert {
namespace {

// A queue from a newer gpuwarden (a later schema version) is refused, naming the file and both
// versions, and left as it is: it is not damage, and the alerts waiting in it must not be lost.
TEST(DiskQueue, NewerSchemaVersionIsRefusedNamingTheFileAndBothVersions) {
  testsupport::TempDir dir("gw-queue");
  const std::string path = dir.file("alerts.db");
  Alert a;
  a.id = "r/GPU-1";
  a.rule = "r";
  a.starts_at_ms = 1000;
  {
    auto q = DiskQueue::open(path);
    ASSERT_TRUE(q.ok()) << q.error();
    ASSERT_TRUE((*q)->submit(a, {"hook"}, 1000, 60'000).ok());
  }
  const int newer = DiskQueue::kSchemaVersion + 1;
  {
    auto db = platform::Database::open(path, "test");
    ASSERT_TRUE(db.ok()) << db.error();
    EXPECT_EQ((*db)->queryInt("PRAGMA user_version").value_or(-1), DiskQueue::kSchemaVersion);
    ASSERT_TRUE((*db)->exec(("PRAGMA user_version=" + std::to_string(newer)).c_str()).ok());
  }
  auto q = DiskQueue::open(path);
  ASSERT_FALSE(q.ok());
  const std::string why = q.error();
  EXPECT_NE(why.find(path), std::string::npos) << why;
  EXPECT_NE(why.find("schema version " + std::to_string(newer)), std::string::npos) << why;
  EXPECT_NE(why.find("(" + std::to_string(DiskQueue::kSchemaVersion) + ")"), std::string::npos) << why;
  for (const auto& e : std::filesystem::directory_iterator(dir.path()))
    EXPECT_EQ(e.path().filename().string().find("damaged"), std::string::npos) << e.path();
  auto db = platform::Database::open(path, "test");
  ASSERT_TRUE(db.ok()) << db.error();
  EXPECT_EQ((*db)->queryInt("PRAGMA user_version").value_or(-1), newer);
  EXPECT_EQ((*db)->queryInt("SELECT count(*) FROM queue").value_or(-1), 1);
}

}  // namespace
}  // namespace gw::alert
