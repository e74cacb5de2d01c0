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
  // A whole second before 1970 is that second, .000, not the one before it with 1000 ms.
  EXPECT_EQ(formatRfc3339(-1000), "1969-12-31T23:59:59.000Z");
  EXPECT_EQ(formatRfc3339(-1001), "1969-12-31T23:59:58.999Z");
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

// A kernel-log record stamped 5.5 s of monotonic time before now happened 5.5 s of wall time ago;
// microseconds below a millisecond are dropped, not rounded.
TEST(Clock, AMonotonicStampIsNowsWallTimeLessHowLongAgoItWas) {
  const std::int64_t wall = 1714564800123, mono = 3'600'000;  // an hour after boot
  EXPECT_EQ(wallMsOfMonoUs(3'594'500'000ULL, wall, mono), wall - 5500);
  EXPECT_EQ(wallMsOfMonoUs(3'594'500'999ULL, wall, mono), wall - 5500);
  EXPECT_EQ(wallMsOfMonoUs(3'600'000'000ULL, wall, mono), wall);
  EXPECT_EQ(wallMsOfMonoUs(0, wall, mono), wall - mono) << "boot itself";
  // On the clocks themselves, a stamp of now is now (within the slack the test above allows).
  const std::int64_t stamped = wallMsOfMonoUs(static_cast<std::uint64_t>(monoMs()) * 1000);
  EXPECT_NEAR(static_cast<double>(stamped), static_cast<double>(wallMs()), 1000.0);
}

}  // namespace
}  // namespace gw::platform
