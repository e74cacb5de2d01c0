// The on-disk alert queue's file: its schema version (the committed goldens in tests/golden/ check
// what it holds and loads).
#include "alert/queue.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

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

// An acknowledgement the database refuses (a full or failing disk) is reported, naming the step, and
// the alert stays at the head of its sink's queue: it is delivered again rather than lost.
TEST(DiskQueue, AFailedAckIsReportedAndTheAlertStaysQueued) {
  testsupport::TempDir dir("gw-queue");
  const std::string path = dir.file("alerts.db");
  auto q = DiskQueue::open(path);
  ASSERT_TRUE(q.ok()) << q.error();
  Alert a;
  a.id = "r/GPU-1";
  a.rule = "r";
  a.starts_at_ms = 1000;
  ASSERT_TRUE((*q)->submit(a, {"hook"}, 1000, 60'000).ok());
  auto head = (*q)->head("hook");
  ASSERT_TRUE(head.has_value());
  {
    // Another connection makes every delete fail, as a failing disk would.
    auto db = platform::Database::open(path, "test");
    ASSERT_TRUE(db.ok()) << db.error();
    ASSERT_TRUE(
        (*db)
            ->exec("CREATE TRIGGER refuse BEFORE DELETE ON queue BEGIN SELECT RAISE(ABORT, 'disk says no'); END")
            .ok());
  }
  const Status s = (*q)->ack(head->seq);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("ack"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("disk says no"), std::string::npos) << s.message();
  auto again = (*q)->head("hook");
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->seq, head->seq);
  EXPECT_EQ(again->alert.id, "r/GPU-1");
}

// A row a damaged disk or another writer left unreadable (not JSON, a field of the wrong type, a
// number past its type) is moved to the dead letters, naming why, and the next alert is the head:
// it is neither delivered as an empty alert nor allowed to end the dispatcher's thread.
TEST(DiskQueue, ADamagedRowIsBuriedAndTheNextAlertIsTheHead) {
  testsupport::TempDir dir("gw-queue");
  const std::string path = dir.file("alerts.db");
  auto q = DiskQueue::open(path);
  ASSERT_TRUE(q.ok()) << q.error();
  const std::vector<std::pair<std::string, std::string>> damages = {
      {"not json", "JSON"},
      {R"({"id": "x", "rule": 5})", "rule"},
      {R"({"id": "x", "labels": {"a": 1}})", "labels"},
      {R"({"id": "x", "gpu_index": 4294967297})", "\"gpu_index\" is not a whole number in range"},
      {R"({"id": "x", "starts_at_ms": 1.5})", "\"starts_at_ms\" is not a whole number in range"},
      {"[1]", "not a JSON object"},
  };
  {
    auto db = platform::Database::open(path, "test");
    ASSERT_TRUE(db.ok()) << db.error();
    for (const auto& [payload, why] : damages) {
      auto st = (*db)->prepare("INSERT INTO queue(sink, alert_id, payload, enqueued_ms) VALUES('hook', 'x', ?, 1)");
      ASSERT_TRUE(st.ok()) << st.error();
      ASSERT_TRUE(st->use().bind(1, payload).run().ok());
    }
  }
  Alert a;
  a.id = "r/GPU-1";
  a.rule = "r";
  a.gpu_index = 1;
  a.starts_at_ms = 1000;
  ASSERT_TRUE((*q)->submit(a, {"hook"}, 1000, 60'000).ok());
  auto head = (*q)->head("hook");
  ASSERT_TRUE(head.has_value());
  EXPECT_EQ(head->alert.id, "r/GPU-1");
  EXPECT_EQ(head->alert.gpu_index, 1);
  EXPECT_EQ((*q)->rejected(), static_cast<std::int64_t>(damages.size()));
  EXPECT_EQ((*q)->pending("hook"), 1);
  auto db = platform::Database::open(path, "test");
  ASSERT_TRUE(db.ok()) << db.error();
  auto st = (*db)->prepare("SELECT error FROM dead ORDER BY seq");
  ASSERT_TRUE(st.ok()) << st.error();
  auto rows = st->use();
  for (const auto& [payload, why] : damages) {
    ASSERT_TRUE(rows.step()) << payload;
    const std::string error = rows.text(0);
    EXPECT_TRUE(error.starts_with("damaged in the queue: ")) << error;
    EXPECT_NE(error.find(why), std::string::npos) << payload << ": " << error;
  }
}

// The dispatcher's repeat interval, at its edge: the same firing alert submitted again one
// millisecond before `repeat_interval` has passed since the last send is dropped, and at exactly
// the interval it is sent again (docs/alerts.md: "dropped if it comes within repeat_interval").
TEST(DiskQueue, TheSameStateIsQueuedAgainExactlyOneRepeatIntervalLater) {
  testsupport::TempDir dir("gw-queue");
  auto q = DiskQueue::open(dir.file("alerts.db"));
  ASSERT_TRUE(q.ok()) << q.error();
  Alert a;
  a.id = "r/GPU-1";
  a.rule = "r";
  a.starts_at_ms = 1000;
  ASSERT_TRUE((*q)->submit(a, {"hook"}, 1000, 60'000).value());
  EXPECT_FALSE((*q)->submit(a, {"hook"}, 60'999, 60'000).value());
  EXPECT_TRUE((*q)->submit(a, {"hook"}, 61'000, 60'000).value());
}

}  // namespace
}  // namespace gw::alert
