// The history store when its folder fails it: a full disk (a small tmpfs filled to the last byte)
// and damaged files (random bytes, a truncated database, a series id of UINT32_MAX, a chunk that
// does not decode).
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <bit>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <set>

#include "../support/small_tmpfs.h"
#include "platform/storage_health.h"
#include "store_test_util.h"

namespace gw::store::testing {
namespace {

namespace fs = std::filesystem;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The files <path>.damaged-* next to path.
std::vector<std::string> asideFiles(const std::string& path) {
  std::vector<std::string> out;
  const std::string prefix = fs::path(path).filename().string() + ".damaged-";
  for (const auto& e : fs::directory_iterator(fs::path(path).parent_path())) {
    const std::string n = e.path().filename().string();
    if (n.rfind(prefix, 0) == 0 && n.find("-wal") == std::string::npos && n.find("-shm") == std::string::npos)
      out.push_back(e.path().string());
  }
  return out;
}

void sql(const std::string& path, const char* statement) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  const int rc = sqlite3_exec(db, statement, nullptr, nullptr, &err);
  EXPECT_EQ(rc, SQLITE_OK) << (err ? err : "");
  sqlite3_free(err);
  sqlite3_close(db);
}

// A fresh store on `path` still works: a series, samples, a flush, a query.
void expectUsable(const StoreOptions& o) {
  auto s = openOrDie(o);
  ASSERT_NE(s, nullptr);
  auto id = s->series("GPU-fresh", "temp");
  ASSERT_TRUE(id.ok()) << id.error();
  for (int i = 1; i <= 50; ++i) ASSERT_TRUE(s->append(*id, i * 1000, i));
  ASSERT_TRUE(s->flush().ok());
  auto q = s->query(*id, 0, 100000);
  ASSERT_TRUE(q.ok()) << q.error();
  EXPECT_EQ(q->size(), 50u);
}

TEST(StoreDiskFull, BoundedInMemoryLoggedOnceAndNothingBufferedIsLost) {
  testsupport::SmallTmpfs disk(1 << 20);
  if (!disk.mounted()) GTEST_SKIP() << disk.why();
  StoreOptions o = testOptions(disk.path() + "/history.db");
  o.chunk_samples = 20;
  o.max_pending_bytes = 24 << 10;
  auto s = openOrDie(o);
  ASSERT_NE(s, nullptr);
  std::vector<SeriesId> ids;
  for (int g = 0; g < 4; ++g) ids.push_back(*s->series("GPU-" + std::to_string(g), "power"));
  int64_t ts = 1'700'000'000'000;
  uint64_t appended = 0;
  auto appendRound = [&](int n) {
    for (int i = 0; i < n; ++i, ts += 1000)
      for (SeriesId id : ids) {
        // Random values: each sample costs its full 64 bits, so chunks are large.
        ASSERT_TRUE(s->append(id, ts, std::bit_cast<double>(std::mt19937_64(ts + id)())));
        ++appended;
      }
  };
  appendRound(100);
  ASSERT_TRUE(s->flush().ok());
  const int64_t first_ts = 1'700'000'000'000;

  ::testing::internal::CaptureStderr();
  disk.fill();
  // Until the database refuses: what is written may still fit in pages SQLite already holds.
  // Then long enough that what waits in memory reaches the cap.
  int failed = 0;
  for (int round = 0; round < 400 && (failed < 5 || s->counters().dropped_samples == 0); ++round) {
    appendRound(40);
    if (!s->flush().ok()) ++failed;
  }
  const std::string log = ::testing::internal::GetCapturedStderr();
  ASSERT_GE(failed, 5) << "the full tmpfs never refused a flush";
  const Stats full = s->counters();
  EXPECT_GE(full.flush_failures, 5u);
  // Bounded: the cap plus at most one chunk per series sealed past it.
  EXPECT_LE(full.pending_bytes, o.max_pending_bytes + ids.size() * 2048) << full.pending_bytes;
  EXPECT_GT(full.dropped_samples, 0u);
  // Logged once, with the path, however many flushes failed.
  const std::string line = "cannot write " + o.path;
  std::size_t n = 0;
  for (std::size_t at = log.find(line); at != std::string::npos; at = log.find(line, at + 1)) ++n;
  EXPECT_EQ(n, 1u) << log;
  EXPECT_NE(log.find("disk full"), std::string::npos) << log;
  bool failing = false;
  for (const auto& f : platform::storageHealth().snapshot())
    if (f.path == o.path) failing = f.failing && f.err == ENOSPC && f.write_errors >= 5;
  EXPECT_TRUE(failing);
  EXPECT_FALSE(platform::storageHealth().ok());

  // Space again: the next flush writes everything still in memory; only what was dropped (and
  // counted) is missing.
  disk.release();
  ::testing::internal::CaptureStderr();
  ASSERT_TRUE(s->flush().ok());
  const std::string recovered = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(recovered.find("storage recovered: " + o.path), std::string::npos) << recovered;
  EXPECT_TRUE(platform::storageHealth().ok());
  const Stats after = s->counters();
  EXPECT_EQ(after.pending_bytes, 0u);
  uint64_t on_disk = 0;
  for (SeriesId id : ids) {
    auto q = s->query(id, first_ts, ts);
    ASSERT_TRUE(q.ok()) << q.error();
    on_disk += q->size();
    // The newest samples (appended while the disk was full) are all there.
    ASSERT_FALSE(q->empty());
    EXPECT_EQ(q->back().ts_ms, ts - 1000);
  }
  EXPECT_EQ(on_disk + after.dropped_samples, appended);
  // And they survive a reopen.
  s.reset();
  auto again = openOrDie(o);
  uint64_t reopened = 0;
  for (SeriesId id : ids) reopened += again->query(id, first_ts, ts)->size();
  EXPECT_EQ(reopened, on_disk);
}

enum class Damage { RandomBytes, Truncated, SeriesIdUint32Max, NegativeSeriesId };

class StoreDamaged : public ::testing::TestWithParam<Damage> {};

TEST_P(StoreDamaged, MovedAsideKeptAndAFreshOneStarted) {
  TempDir dir;
  StoreOptions o = testOptions(dir.file("history.db"));
  o.chunk_samples = 10;
  switch (GetParam()) {
    case Damage::RandomBytes: {
      std::mt19937 rng(42);
      std::string junk(64 << 10, '\0');
      for (char& c : junk) c = static_cast<char>(rng());
      std::ofstream(o.path, std::ios::binary) << junk;
      break;
    }
    case Damage::Truncated: {
      {
        auto s = openOrDie(o);
        for (int g = 0; g < 20; ++g) {
          SeriesId id = *s->series("GPU-" + std::to_string(g), "temp");
          for (int i = 1; i <= 2000; ++i) s->append(id, i * 1000, i * 0.37 + g);
        }
        ASSERT_TRUE(s->flush().ok());
      }
      const auto size = fs::file_size(o.path);
      ASSERT_GT(size, 64u << 10);
      fs::resize_file(o.path, size / 2);
      break;
    }
    case Damage::SeriesIdUint32Max:
    case Damage::NegativeSeriesId: {
      {
        auto s = openOrDie(o);
        SeriesId id = *s->series("GPU-a", "temp");
        s->append(id, 1000, 1);
      }
      sql(o.path, GetParam() == Damage::SeriesIdUint32Max
                      ? "INSERT INTO series (id, gpu_uuid, field, rolled_until) VALUES (4294967295, 'GPU-b', 'temp', 0)"
                      : "INSERT INTO series (id, gpu_uuid, field, rolled_until) VALUES (-7, 'GPU-b', 'temp', 0)");
      break;
    }
  }
  const std::string before = slurp(o.path);

  ::testing::internal::CaptureStderr();
  auto s = Store::open(o);
  const std::string log = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(s.ok()) << s.error();
  EXPECT_EQ((*s)->counters().databases_reset, 1u);
  EXPECT_TRUE((*s)->listSeries().empty());
  const auto aside = asideFiles(o.path);
  ASSERT_EQ(aside.size(), 1u);
  EXPECT_EQ(slurp(aside[0]), before);  // kept as it was, for inspection
  EXPECT_NE(log.find("history database '" + o.path + "' is damaged"), std::string::npos) << log;
  EXPECT_NE(log.find("moved aside to " + aside[0]), std::string::npos) << log;
  s->reset();
  expectUsable(o);
}

INSTANTIATE_TEST_SUITE_P(Files, StoreDamaged,
                         ::testing::Values(Damage::RandomBytes, Damage::Truncated, Damage::SeriesIdUint32Max,
                                           Damage::NegativeSeriesId),
                         [](const auto& p) {
                           switch (p.param) {
                             case Damage::RandomBytes:
                               return std::string("RandomBytes");
                             case Damage::Truncated:
                               return std::string("Truncated");
                             case Damage::SeriesIdUint32Max:
                               return std::string("SeriesIdUint32Max");
                             case Damage::NegativeSeriesId:
                               return std::string("NegativeSeriesId");
                           }
                           return std::string();
                         });

// Samples 1..30 (value i at i s) of one series, flushed as three chunks of ten (o.chunk_samples
// 10); its id, 0 when the store would not take them.
SeriesId thirtySamplesInThreeChunks(const StoreOptions& o) {
  auto s = openOrDie(o);
  if (!s) return 0;
  auto id = s->series("GPU-a", "temp");
  if (!id) return 0;
  for (int i = 1; i <= 30; ++i) s->append(*id, i * 1000, i);
  return s->flush().ok() ? *id : 0;
}

TEST(StoreDamagedChunks, AChunkThatDoesNotDecodeIsSkippedAndCounted) {
  TempDir dir;
  StoreOptions o = testOptions(dir.file("history.db"));
  o.chunk_samples = 10;
  const SeriesId id = thirtySamplesInThreeChunks(o);
  ASSERT_GT(id, 0u);
  // The middle chunk (samples 11..20): a count far past what its bytes hold, then garbage; and a
  // row whose count column is out of range.
  sql(o.path, "UPDATE chunks SET data = x'01018080808008ffffffffffffffffff' WHERE start_ms = 11000");
  sql(o.path, "UPDATE chunks SET count = 99999999999 WHERE start_ms = 21000");
  auto s = openOrDie(o);
  auto q = s->query(id, 0, 100000);
  ASSERT_TRUE(q.ok()) << q.error();
  ASSERT_EQ(q->size(), 10u);  // the first chunk; the other two are skipped
  EXPECT_EQ(q->front().ts_ms, 1000);
  EXPECT_EQ(s->counters().corrupt_chunks, 2u);
  EXPECT_EQ(s->counters().databases_reset, 0u);  // a bad row is not a bad file
}

// A chunk that opens but goes bad after its first sample keeps that sample and counts as one
// damaged chunk, like one that does not open at all.
TEST(StoreDamagedChunks, AChunkThatGoesBadHalfwayKeepsItsSamplesBeforeAndCountsOnce) {
  TempDir dir;
  StoreOptions o = testOptions(dir.file("history.db"));
  o.chunk_samples = 10;
  const SeriesId id = thirtySamplesInThreeChunks(o);
  ASSERT_GT(id, 0u);
  // The middle chunk: format 1, one column, 3 samples, the first at 11000 ms (zigzag varint
  // f0 ab 01) of 11.0 (little-endian bits), then a zero byte: the second sample's
  // delta-of-delta 0 on a delta of 0, a timestamp that does not advance.
  sql(o.path, "UPDATE chunks SET data = x'010103f0ab01000000000000264000' WHERE start_ms = 11000");
  auto s = openOrDie(o);
  auto q = s->query(id, 0, 100000);
  ASSERT_TRUE(q.ok()) << q.error();
  ASSERT_EQ(q->size(), 21u);
  EXPECT_EQ((*q)[9], (Point{10000, 10.0}));
  EXPECT_EQ((*q)[10], (Point{11000, 11.0}));
  EXPECT_EQ((*q)[11], (Point{21000, 21.0}));
  EXPECT_EQ(s->counters().corrupt_chunks, 1u);
}

// Damage found while the store runs (here: a schema another process broke, with the cookie
// bumped so that the store rereads it): the file is moved aside and the fresh one gets the series
// again under their ids, with their names, so that the samples still in memory are written back
// and a restarted agent finds them.
TEST(StoreDamagedWhileRunning, TheFreshFileHasEverySeriesAndTheSamplesStillInMemory) {
  TempDir dir;
  StoreOptions o = testOptions(dir.file("history.db"));
  {
    auto s = openOrDie(o);
    const SeriesId a = *s->series("GPU-a", "temp");
    const SeriesId b = *s->series("GPU-b", "power");
    for (int i = 1; i <= 20; ++i) {
      ASSERT_TRUE(s->append(a, i * 1000, i));
      ASSERT_TRUE(s->append(b, i * 1000, 100 + i));
    }
    ASSERT_TRUE(s->flush().ok());
    sql(o.path,
        "PRAGMA writable_schema=ON; PRAGMA schema_version=4242; "
        "UPDATE sqlite_master SET sql = 'CREATE TABLE rollups (' WHERE name = 'rollups';");
    ASSERT_TRUE(s->append(a, 21000, 21));
    ASSERT_TRUE(s->append(b, 21000, 121));
    ::testing::internal::CaptureStderr();
    const Status reset = s->flush();
    const std::string log = ::testing::internal::GetCapturedStderr();
    EXPECT_FALSE(reset.ok()) << log;
    EXPECT_NE(reset.message().find("started a fresh database"), std::string::npos) << reset.message() << "\n" << log;
    EXPECT_EQ(s->counters().databases_reset, 1u);
    ASSERT_TRUE(s->flush().ok());
  }
  ASSERT_EQ(asideFiles(o.path).size(), 1u);
  auto s = openOrDie(o);
  ASSERT_NE(s, nullptr);
  std::set<std::string> names;
  for (const SeriesInfo& i : s->listSeries()) names.insert(i.gpu_uuid + "/" + i.field);
  EXPECT_EQ(names, (std::set<std::string>{"GPU-a/temp", "GPU-b/power"}));
  auto q = s->query(*s->series("GPU-a", "temp"), 0, 100000);
  ASSERT_TRUE(q.ok()) << q.error();
  ASSERT_EQ(q->size(), 21u);
  EXPECT_EQ(q->front(), (Point{1000, 1.0}));
  EXPECT_EQ(q->back(), (Point{21000, 21.0}));
}

TEST(StoreIds, AnOutOfRangeNewSeriesIdIsAnErrorNotACrash) {
  TempDir dir;
  StoreOptions o = testOptions(dir.file("history.db"));
  {
    auto s = openOrDie(o);
    ASSERT_TRUE(s->series("GPU-a", "temp").ok());
  }
  // A valid file whose next rowid is past the range: opening moves nothing aside (the id in it is
  // in range), registering the next series must fail cleanly.
  sql(o.path, ("INSERT INTO series (id, gpu_uuid, field, rolled_until) VALUES (" + std::to_string(kMaxSeriesId) +
               ", 'GPU-b', 'temp', 0)")
                  .c_str());
  auto s = openOrDie(o);
  EXPECT_EQ(s->counters().databases_reset, 0u);
  auto id = s->series("GPU-c", "temp");
  EXPECT_FALSE(id.ok());
  EXPECT_NE(id.error().find("out of range"), std::string::npos) << id.error();
  EXPECT_TRUE(s->series("GPU-a", "temp").ok());
}

// The range is 0 to 1 000 000 inclusive (docs/store.md), the same when a series is registered as
// when the file is opened: the series that gets id 1 000 000 registers, the one after it does not.
TEST(StoreIds, TheSeriesAtIdOneMillionRegistersTheNextIsRefused) {
  TempDir dir;
  StoreOptions o = testOptions(dir.file("history.db"));
  { openOrDie(o); }
  sql(o.path, "INSERT INTO series (id, gpu_uuid, field, rolled_until) VALUES (999999, 'GPU-b', 'temp', 0)");
  auto s = openOrDie(o);
  EXPECT_EQ(s->counters().databases_reset, 0u);
  auto last = s->series("GPU-c", "temp");
  ASSERT_TRUE(last.ok()) << last.error();
  EXPECT_EQ(*last, 1000000u);
  EXPECT_TRUE(s->append(*last, 1000, 1.0));
  auto past = s->series("GPU-d", "temp");
  ASSERT_FALSE(past.ok());
  EXPECT_NE(past.error().find("series id 1000001 "), std::string::npos) << past.error();
  EXPECT_NE(past.error().find("out of range (0..1000000)"), std::string::npos) << past.error();
  // The refused registration leaves nothing behind: the file opens again as it is, with its
  // history, instead of being taken for damage and moved aside.
  s.reset();
  s = openOrDie(o);
  EXPECT_EQ(s->counters().databases_reset, 0u);
  EXPECT_EQ(s->series("GPU-c", "temp").value(), 1000000u);
  EXPECT_EQ(s->query(1000000, 1000, 1000).value(), (std::vector<Point>{{1000, 1.0}}));
}

}  // namespace
}  // namespace gw::store::testing

namespace gw::store {
namespace {

using namespace gw::store::testing;
constexpr int64_t kRollupT0 = 1'700'000'040'000;  // a whole minute
constexpr int64_t kRollupHour = 3'600'000;

// A rollup scan that fails part way (here: its table is gone under the store) is the query's
// error, not a shorter answer that looks complete.
TEST(StoreFaults, ARollupScanThatFailsIsTheQuerysError) {
  TempDir dir;
  auto opt = testOptions(dir.file("h.db"));
  opt.raw_retention = std::chrono::hours(1);
  opt.downsampled_retention = std::chrono::hours(3);
  auto store = openOrDie(opt);
  const SeriesId id = store->series("GPU-1", "gpu_temp").value();
  const int64_t start = kRollupT0;
  for (int i = 0; i < 2 * 3600; ++i) ASSERT_TRUE(store->append(id, start + i * 1000LL, 40.0 + i % 7));
  ASSERT_TRUE(store->compact(start + 90 * 60000 + 1234).ok());
  ASSERT_TRUE(store->query(id, start, start + 2 * kRollupHour, 60000).ok());
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open(opt.path.c_str(), &other), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(other, "ALTER TABLE rollups RENAME TO rollups_gone;", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(other);
  auto got = store->query(id, start, start + 2 * kRollupHour, 60000);
  EXPECT_FALSE(got.ok()) << got->size() << " points";
}

}  // namespace
}  // namespace gw::store
