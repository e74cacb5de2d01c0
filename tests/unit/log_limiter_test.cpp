// The log limiter's bounds at their edges, on a made-up clock: the burst, the window's end, and
// the count of what was left out.
#include <gtest/gtest.h>

#include <chrono>

#include "platform/log.h"

namespace gw::platform {
namespace {

using namespace std::chrono_literals;
using T = LogLimiter::Clock::time_point;

TEST(LogLimiter, TheBurstPassesAndTheNextLineIsCounted) {
  LogLimiter l(5, 1min);
  const T t0 = T{} + 1h;
  for (int i = 0; i < 5; ++i) {
    auto a = l.admit(t0 + i * 1s);
    EXPECT_TRUE(a.log) << i;
    EXPECT_EQ(a.suppressed_now, 0) << i;
  }
  auto sixth = l.admit(t0 + 5s);
  EXPECT_FALSE(sixth.log);
  EXPECT_EQ(sixth.suppressed_now, 0);
}

TEST(LogLimiter, TheWindowEndsOneTickAfterItsLengthAndReportsWhatItLeftOut) {
  LogLimiter l(2, 1min);
  const T t0 = T{} + 1h;
  EXPECT_TRUE(l.admit(t0).log);
  EXPECT_TRUE(l.admit(t0).log);
  EXPECT_FALSE(l.admit(t0 + 1s).log);
  EXPECT_FALSE(l.admit(t0 + 30s).log);
  // Exactly one window after its first line: still the same window.
  auto edge = l.admit(t0 + 1min);
  EXPECT_FALSE(edge.log);
  EXPECT_EQ(edge.suppressed_now, 0);
  // One tick later a new window opens; its first line carries the count of the three left out.
  auto next = l.admit(t0 + 1min + LogLimiter::Clock::duration(1));
  EXPECT_TRUE(next.log);
  EXPECT_EQ(next.suppressed_now, 3);
  // The count is handed back once.
  auto again = l.admit(t0 + 1min + 2s);
  EXPECT_TRUE(again.log);
  EXPECT_EQ(again.suppressed_now, 0);
}

TEST(LogLimiter, AQuietWindowReportsNothing) {
  LogLimiter l(1, 10s);
  const T t0 = T{} + 1h;
  EXPECT_TRUE(l.admit(t0).log);
  auto later = l.admit(t0 + 1h);
  EXPECT_TRUE(later.log);
  EXPECT_EQ(later.suppressed_now, 0);
}

// The first line ever is let through whatever the clock reads (a steady clock may start near 0).
TEST(LogLimiter, TheFirstLineAtTimeZeroPasses) {
  LogLimiter l(1, 1min);
  EXPECT_TRUE(l.admit(T{}).log);
  EXPECT_FALSE(l.admit(T{} + 1s).log);
}

}  // namespace
}  // namespace gw::platform
