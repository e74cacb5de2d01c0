// Appends from several threads while flushes, compactions and queries run.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "store/store.h"
#include "store_test_util.h"

namespace gw::store {
namespace {

TEST(StoreConcurrency, ParallelAppendFlushQuery) {
  testing::TempDir dir;
  auto opt = testing::testOptions(dir.file("c.db"));
  opt.chunk_samples = 100;
  auto store = testing::openOrDie(opt);
  constexpr int kThreads = 4, kPerThread = 20000;
  const SeriesId shared = store->series("GPU-shared", "x").value();
  std::atomic<bool> done{false};
  std::atomic<int> shared_accepted{0};

  std::vector<std::thread> writers;
  for (int t = 0; t < kThreads; ++t) {
    writers.emplace_back([&, t] {
      // Registration races with other threads' appends and flushes too.
      const SeriesId own = store->series("GPU-" + std::to_string(t), "temp").value();
      for (int i = 0; i < kPerThread; ++i) {
        EXPECT_TRUE(store->append(own, 1000 + i, i));
        // All threads push the same timestamps into one series: exactly one wins each.
        if (store->append(shared, 1000 + i, t)) shared_accepted.fetch_add(1);
      }
    });
  }
  std::thread background([&] {
    int64_t last_seen = 0;
    while (!done.load()) {
      EXPECT_TRUE(store->flush().ok());
      auto q = store->query(shared, 0, 1 << 30);
      ASSERT_TRUE(q.ok()) << q.error();
      EXPECT_GE(static_cast<int64_t>(q->size()), last_seen);  // never goes backwards
      last_seen = static_cast<int64_t>(q->size());
      for (size_t i = 1; i < q->size(); ++i) ASSERT_LT((*q)[i - 1].ts_ms, (*q)[i].ts_ms);
      EXPECT_TRUE(store->compact(1000).ok());
    }
  });
  for (auto& w : writers) w.join();
  done = true;
  background.join();
  ASSERT_TRUE(store->flush().ok());

  for (int t = 0; t < kThreads; ++t) {
    const SeriesId own = store->series("GPU-" + std::to_string(t), "temp").value();
    auto q = store->query(own, 0, 1 << 30);
    ASSERT_TRUE(q.ok());
    ASSERT_EQ(q->size(), static_cast<size_t>(kPerThread));
    for (int i = 0; i < kPerThread; ++i) ASSERT_EQ((*q)[i], (Point{1000 + i, double(i)}));
  }
  auto q = store->query(shared, 0, 1 << 30);
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(static_cast<int>(q->size()), shared_accepted.load());
  EXPECT_EQ(store->stats().raw_samples, static_cast<uint64_t>(kThreads * kPerThread + shared_accepted.load()));
}

}  // namespace
}  // namespace gw::store
