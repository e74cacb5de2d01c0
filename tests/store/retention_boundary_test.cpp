// Retention at its value and one millisecond either side: a chunk goes only when all of it is older
// than the retention; the last sample exactly at the cutoff keeps it.
#include <gtest/gtest.h>

#include <chrono>

#include "store_test_util.h"

namespace gw::store {
namespace {

using testing::openOrDie;
using testing::TempDir;
using testing::testOptions;

constexpr std::int64_t kT0 = 1'700'000'040'000;  // a whole minute
constexpr std::int64_t kMinute = 60'000;

TEST(RetentionBoundary, DefaultsAreTheDocumentedOnes) {
  const StoreOptions o;
  EXPECT_EQ(o.raw_retention, std::chrono::hours(24));
  EXPECT_EQ(o.downsampled_retention, std::chrono::hours(24 * 30));
  EXPECT_EQ(o.downsample_step, std::chrono::seconds(60));
  EXPECT_EQ(o.chunk_samples, 120u);
  // The agent leaves these two to the library (it sets its own flush interval from its config):
  // docs/store.md says 5 s and 32 MiB.
  EXPECT_EQ(o.flush_interval, std::chrono::milliseconds(5000));
  EXPECT_EQ(o.max_pending_bytes, std::size_t{32} * 1024 * 1024);
}

// Two minutes at 1 s: one full chunk (120 samples), two one-minute rollup buckets.
std::unique_ptr<Store> filled(TempDir& dir, SeriesId* id) {
  auto store = openOrDie(testOptions(dir.file("h.db")));
  *id = store->series("GPU-1", "gpu_temp").value();
  for (int i = 0; i < 120; ++i) EXPECT_TRUE(store->append(*id, kT0 + i * 1000LL, 40.0 + i % 7));
  EXPECT_TRUE(store->flush().ok());
  EXPECT_TRUE(store->compact(kT0 + 3 * kMinute).ok());  // rolled up; nothing old enough to go
  return store;
}

TEST(RetentionBoundary, RawChunkAtTheCutoffStaysOneMillisecondLaterGoes) {
  const std::int64_t last = kT0 + 119'000;
  const std::int64_t raw = std::chrono::duration_cast<std::chrono::milliseconds>(StoreOptions{}.raw_retention).count();
  for (std::int64_t d : {-1, 0, 1}) {
    TempDir dir;
    SeriesId id{};
    auto store = filled(dir, &id);
    ASSERT_TRUE(store->compact(last + raw + d).ok());
    // What the running store answers, and what is on disk (after a reopen: nothing in memory).
    for (int reopened = 0; reopened < 2; ++reopened) {
      if (reopened) {
        store.reset();
        store = openOrDie(testOptions(dir.file("h.db")));
      }
      const auto got = store->query(id, kT0, last);
      ASSERT_TRUE(got.ok()) << got.error();
      EXPECT_EQ(got->size(), d <= 0 ? 120u : 0u)
          << "compacted " << d << " ms after the last sample's cutoff" << (reopened ? ", reopened" : "");
    }
  }
}

TEST(RetentionBoundary, RollupAtTheCutoffStaysOneMillisecondLaterGoes) {
  const std::int64_t lastBucket = kT0 + kMinute;
  const std::int64_t kept =
      std::chrono::duration_cast<std::chrono::milliseconds>(StoreOptions{}.downsampled_retention).count();
  for (std::int64_t d : {-1, 0, 1}) {
    TempDir dir;
    SeriesId id{};
    auto store = filled(dir, &id);
    ASSERT_TRUE(store->compact(lastBucket + kept + d).ok());
    for (int reopened = 0; reopened < 2; ++reopened) {
      if (reopened) {
        store.reset();
        store = openOrDie(testOptions(dir.file("h.db")));
      }
      const auto got = store->query(id, kT0, lastBucket, kMinute, Agg::Count);
      ASSERT_TRUE(got.ok()) << got.error();
      EXPECT_EQ(got->size(), d <= 0 ? 2u : 0u)
          << "compacted " << d << " ms after the last bucket's cutoff" << (reopened ? ", reopened" : "");
    }
  }
}

}  // namespace
}  // namespace gw::store
