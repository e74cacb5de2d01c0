// The one clock: wall and monotonic milliseconds and the RFC 3339 text form.
#include <gtest/gtest.h>

#include <chrono>

#include "platform/clock.h"

namespace gw::platform {
namespace {

TEST(Clock, FormatsRfc3339InUtcWithMilliseconds) {
  EXPECT_EQ(formatRfc3339(1714564800123), "2024-05-01T12:00:00.123Z");
  EXPECT_EQ(formatRfc3339(1700000000123), "2023-11-14T22:13:20.123Z");
  EXPECT_EQ(formatRfc3339(0), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(formatRfc3339(-1), "1969-12-31T23:59:59.999Z") << "milliseconds stay 0..999 before 1970";
}

TEST(Clock, WallAndMonotonicAgreeWithTheStandardClocks) {
  using namespace std::chrono;
  const auto sys = duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
  EXPECT_NEAR(static_cast<double>(wallMs()), static_cast<double>(sys), 1000.0);
  // steady_clock is CLOCK_MONOTONIC too, so deadlines kept either way compare.
  const auto steady = duration_cast<milliseconds>(steady_clock::now().time_since_epoch()).count();
  const auto mono = monoMs();
  EXPECT_NEAR(static_cast<double>(mono), static_cast<double>(steady), 1000.0);
  EXPECT_GE(monoMs(), mono);
}

}  // namespace
}  // namespace gw::platform
