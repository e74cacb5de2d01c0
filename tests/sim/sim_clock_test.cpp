// The simulator's real-mode clock: a caller that sleeps one step must read the next step. The
// arithmetic is checked on the clock's own function (compiled in); the clock source through the
// library, with assertions that are lower bounds only (a loaded machine sleeps longer, never less).
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <thread>

#include "sim/sim_clock.h"
#include "sim_harness.h"

using namespace simtest;

namespace {

constexpr std::int64_t kSecond = 1'000'000'000;

// Origins as a machine's monotonic clock has them: just booted, up for days, up for years, and
// with nanosecond parts that have no exact binary fraction.
constexpr std::int64_t kOrigins[] = {0, kSecond + 7, 1'036'800 * kSecond + 123'456'789,
                                     315'360'000 * kSecond + 999'999'999};

TEST(SimClockArithmetic, WholeSecondsAfterTheOriginAreWholeSteps) {
  for (std::int64_t origin : kOrigins) {
    for (std::int64_t k = 0; k <= 3600; ++k) {
      const double t = gw::sim::realModeSeconds(600, 1, origin, origin + k * kSecond);
      ASSERT_EQ(t, 600.0 + static_cast<double>(k)) << "origin " << origin << " after " << k << " s";
    }
  }
}

TEST(SimClockArithmetic, SpeedScalesBeforeItRounds) {
  for (std::int64_t origin : kOrigins) {
    // 10x: every 100 ms of wall time is one simulated second.
    for (std::int64_t k = 0; k <= 1000; ++k)
      ASSERT_EQ(gw::sim::realModeSeconds(30, 10, origin, origin + k * (kSecond / 10)), 30.0 + static_cast<double>(k))
          << "origin " << origin << " after " << k << " x 100 ms";
    // Half speed: two wall seconds per simulated second.
    EXPECT_EQ(gw::sim::realModeSeconds(0, 0.5, origin, origin + 7 * kSecond), 3.5);
    // One nanosecond short of the step is still the step before, exactly as the wall clock says.
    EXPECT_LT(gw::sim::realModeSeconds(600, 1, origin, origin + kSecond - 1), 601.0);
  }
}

class SimClockSource : public SimTest {};

// The coarse clock this replaced reads the time of its last tick (4 ms here), and the kernel slews
// tick lengths: after a 1 ms sleep it had not moved at all six times in ten, and after 1 s it could
// read 0.99999997 s, so `dmon -d 1` read the same step twice and then skipped one. The precise clock
// never moves less than the sleep; 1e-9 allows for the rounding of two readings near t = 600.
TEST_F(SimClockSource, ASleepMovesSimulatedTimeAtLeastAsFar) {
  UseScenario(WriteScenario("count: 1\ndefaults: {profile: H100-SXM5-80GB}\n"), "real", "600");
  ASSERT_EQ(nv.nvmlInit_v2(), NVML_SUCCESS) << nv.gwSimLastError();
  for (int round = 0; round < 200; ++round) {
    const double before = nv.gwSimGetTime();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    const double after = nv.gwSimGetTime();
    ASSERT_GE(after - before, 0.001 - 1e-9) << "round " << round << ": " << before << " -> " << after;
  }
  const double before = nv.gwSimGetTime();
  std::this_thread::sleep_for(std::chrono::seconds(1));
  EXPECT_GE(std::floor(nv.gwSimGetTime()), std::floor(before) + 1) << "a 1 s sleep from t=" << before;
}

}  // namespace
