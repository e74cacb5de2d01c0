#include "store/recent_values.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace gw::store {
namespace {

TEST(RecentValues, SetGetClearAndBounds) {
  RecentValues rv(2, 3);
  EXPECT_FALSE(rv.get(0, 0).has_value());
  rv.set(1, 2, 1000, 42.5);
  ASSERT_TRUE(rv.get(1, 2).has_value());
  EXPECT_EQ(rv.get(1, 2)->ts_ms, 1000);
  EXPECT_EQ(rv.get(1, 2)->value, 42.5);
  EXPECT_FALSE(rv.get(0, 2).has_value());
  rv.clear(1, 2);
  EXPECT_FALSE(rv.get(1, 2).has_value());
  rv.set(5, 0, 1, 1);  // ignored
  EXPECT_FALSE(rv.get(5, 0).has_value());
  EXPECT_FALSE(rv.get(0, 3).has_value());
}

TEST(RecentValues, ReadersNeverSeeTornPairs) {
  // Writers keep value == ts; a torn read would show them differing.
  RecentValues rv(1, 1);
  std::atomic<bool> stop{false};
  std::vector<std::thread> writers;
  for (int w = 0; w < 2; ++w)
    writers.emplace_back([&, w] {
      for (int64_t i = 1; !stop.load(std::memory_order_relaxed); ++i) rv.set(0, 0, i * 2 + w, double(i * 2 + w));
    });
  for (int i = 0; i < 50000; ++i) {
    auto s = rv.get(0, 0);
    if (s) {
      ASSERT_EQ(static_cast<double>(s->ts_ms), s->value);
    }
  }
  stop = true;
  for (auto& t : writers) t.join();
}

}  // namespace
}  // namespace gw::store
