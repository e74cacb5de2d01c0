// runEachWithDeadline: every item's result in its place, one thread for a quick run, more when an
// item straggles, and an item that hangs abandoned alone. Waits are for states, not for time.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

#include "platform/deadline.h"

namespace gw::platform {
namespace {

using namespace std::chrono_literals;

TEST(RunEachWithDeadline, AQuickRunUsesOneThreadAndKeepsTheOrder) {
  std::mutex mu;
  std::set<std::thread::id> threads;
  // A straggle far longer than the run: only a stall of minutes could bring in a second worker.
  auto out = runEachWithDeadline<int>(
      8,
      [&](std::size_t i) {
        std::lock_guard l(mu);
        threads.insert(std::this_thread::get_id());
        return static_cast<int>(i * 10);
      },
      60s, 60s);
  ASSERT_EQ(out.size(), 8u);
  for (std::size_t i = 0; i < 8; ++i) {
    ASSERT_TRUE(out[i].has_value()) << i;
    EXPECT_EQ(*out[i], static_cast<int>(i * 10));
  }
  EXPECT_EQ(threads.size(), 1u);
  EXPECT_FALSE(threads.contains(std::this_thread::get_id()));
  EXPECT_EQ(abandonedThreads(), 0u);
}

TEST(RunEachWithDeadline, NothingToDoReturnsAtOnce) {
  auto out = runEachWithDeadline<int>(
      0, [](std::size_t) { return 1; }, 60s, 60s);
  EXPECT_TRUE(out.empty());
}

// Item 0 returns only once every other item is done: that can only happen when other workers take
// them while the first is busy, which is what a straggling item must bring about.
TEST(RunEachWithDeadline, AStragglerBringsInWorkersForTheRest) {
  struct {
    std::mutex mu;
    std::condition_variable cv;
    int others_done = 0;
  } s;
  auto out = runEachWithDeadline<bool>(
      6,
      [&](std::size_t i) {
        std::unique_lock l(s.mu);
        if (i == 0) return s.cv.wait_for(l, 30s, [&] { return s.others_done == 5; });
        ++s.others_done;
        s.cv.notify_all();
        return true;
      },
      60s, 1ms);
  for (std::size_t i = 0; i < 6; ++i) {
    ASSERT_TRUE(out[i].has_value()) << i;
    EXPECT_TRUE(*out[i]) << i;
  }
}

// Item 2 hangs until released: the others are answered, item 2 is empty and its thread is counted
// as abandoned until it comes back.
TEST(RunEachWithDeadline, AHungItemIsAbandonedAloneAndCountedUntilItReturns) {
  struct Gate {
    std::mutex mu;
    std::condition_variable cv;
    bool open = false;
  };
  auto gate = std::make_shared<Gate>();
  auto out = runEachWithDeadline<int>(
      5,
      [gate](std::size_t i) {
        if (i == 2) {
          std::unique_lock l(gate->mu);
          gate->cv.wait(l, [&] { return gate->open; });
        }
        return static_cast<int>(i);
      },
      2s, 1ms);
  for (std::size_t i = 0; i < 5; ++i) {
    if (i == 2) {
      EXPECT_FALSE(out[i].has_value());
      continue;
    }
    ASSERT_TRUE(out[i].has_value()) << i;
    EXPECT_EQ(*out[i], static_cast<int>(i));
  }
  EXPECT_EQ(abandonedThreads(), 1u);
  {
    std::lock_guard l(gate->mu);
    gate->open = true;
  }
  gate->cv.notify_all();
  for (int k = 0; k < 3000 && abandonedThreads() != 0; ++k) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(abandonedThreads(), 0u);
}

}  // namespace
}  // namespace gw::platform
