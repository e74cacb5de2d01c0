// The watcher over a scripted NVML: each sample reads the values of the current tick, so what a
// summary holds is exact. A long interval leaves only the samples the watcher takes itself (at
// beginStep, endStep and sampleNow); no test waits on wall time except for the loop's own samples.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "diag/watcher.h"
#include "fakes.h"

using namespace gw;
using namespace gw::diag;
using namespace gw::diag::test;

namespace {

struct Tick {
  Result<unsigned> temp = 60u;
  Result<Clocks> clocks = Clocks{1500, 2000};
  Result<double> power = 300.0;
  Result<uint64_t> reasons = uint64_t{0};
  Result<EccCounts> ecc = EccCounts{};
  Result<PcieLink> link = PcieLink{5, 16, 5, 16};
  std::vector<XidEvent> xids;
};

class ScriptedNvml : public FakeNvml {
 public:
  std::map<int, std::vector<Tick>> script;  // per GPU, per tick (the last one repeats)
  size_t tick = 0;
  int xid_polls = 0;
  std::vector<XidEvent> next_xids;

  const Tick& at(int g) {
    const auto& v = script[g];
    return v[std::min(tick, v.size() - 1)];
  }
  Result<unsigned> temperatureC(int g) override { return at(g).temp; }
  Result<Clocks> clocks(int g) override { return at(g).clocks; }
  Result<double> powerDrawW(int g) override { return at(g).power; }
  Result<uint64_t> clockEventReasons(int g) override { return at(g).reasons; }
  Result<EccCounts> ecc(int g) override { return at(g).ecc; }
  Result<PcieLink> pcieLink(int g) override { return at(g).link; }
  std::vector<XidEvent> pollXids() override {
    ++xid_polls;
    return std::exchange(next_xids, {});
  }
};

constexpr double kNever = 3600;  // the loop's interval: it takes no sample during a test

}  // namespace

// Samples at beginStep and endStep, none in between; a GPU is watched once it has a sample.
TEST(Watcher, SamplesAtTheStepsEdges) {
  ScriptedNvml n;
  n.script[0] = {Tick{}};
  n.script[1] = {Tick{}};
  Watcher w(n, {0, 1}, kNever);
  EXPECT_FALSE(w.watched(0));
  EXPECT_FALSE(w.watched(7));
  EXPECT_EQ(w.summary(7).samples, 0);
  w.beginStep("memtest");
  EXPECT_TRUE(w.watched(0));
  EXPECT_EQ(w.summary(0).samples, 1);
  w.endStep();
  EXPECT_EQ(w.summary(0).samples, 2);
  EXPECT_EQ(w.summary(1).samples, 2);
  w.endStep();  // not running: nothing more
  EXPECT_EQ(w.summary(0).samples, 2);
  w.sampleNow();
  EXPECT_EQ(w.summary(1).samples, 3);
  w.beginStep("gemm_burn");
  w.beginStep("targeted_power");  // ends the running step first (its final sample), then samples
  EXPECT_EQ(w.summary(0).samples, 6);
  EXPECT_EQ(n.xid_polls, 6);
}

// The destructor ends a running step (its thread joined) and takes its final sample.
TEST(Watcher, DestructorEndsTheStep) {
  ScriptedNvml n;
  n.script[0] = {Tick{}};
  {
    Watcher w(n, {0}, kNever);
    w.beginStep("memtest");
  }
  EXPECT_EQ(n.xid_polls, 2);
}

// With a short interval the loop samples on its own while a step runs (waited for, not timed).
TEST(Watcher, TheLoopSamplesWhileAStepRuns) {
  ScriptedNvml n;
  n.script[0] = {Tick{}};
  Watcher w(n, {0}, 0.001);
  w.beginStep("memtest");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (w.summary(0).samples < 4 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  w.endStep();
  EXPECT_GE(w.summary(0).samples, 5);
}

// An interval under a second is the interval; only zero or less
// falls back to one second.
TEST(Watcher, AnIntervalUnderASecondIsKept) {
  ScriptedNvml n;
  EXPECT_EQ(Watcher(n, {0}, 0.001).intervalSeconds(), 0.001);
  EXPECT_EQ(Watcher(n, {0}, 0.5).intervalSeconds(), 0.5);
  EXPECT_EQ(Watcher(n, {0}, 2.5).intervalSeconds(), 2.5);
  EXPECT_EQ(Watcher(n, {0}, 0).intervalSeconds(), 1.0);
  EXPECT_EQ(Watcher(n, {0}, -3).intervalSeconds(), 1.0);
}

// Temperature: the hottest and the step it was first reached in; clocks: the range of non-zero
// readings; power: the highest; reasons: OR of all but idle; link: the best seen.
TEST(Watcher, SummaryOfWhatWasRead) {
  ScriptedNvml n;
  Tick a, b, c, d;
  a.temp = 60u;
  b.temp = 70u;
  c.temp = 70u;
  d.temp = 65u;
  a.clocks = Clocks{1500, 1};
  b.clocks = Clocks{0, 1};  // no reading: not a clock of 0
  c.clocks = Clocks{1, 1};
  d.clocks = Clocks{1980, 1};
  a.power = 100.0;
  b.power = 450.5;
  c.power = 200.0;
  a.reasons = uint64_t{0x1};
  b.reasons = uint64_t{0x5};
  c.reasons = uint64_t{0x40};
  a.link = PcieLink{1, 8, 5, 16};
  b.link = PcieLink{5, 4, 5, 16};
  c.link = PcieLink{3, 16, 5, 16};
  n.script[0] = {a, b, c, d};
  Watcher w(n, {0}, kNever);
  for (const char* step : {"a", "b", "c", "d"}) {
    w.beginStep(step);  // one sample
    n.tick++;
    w.sampleNow();
    w.endStep();  // repeats the next tick's values at the next begin
  }
  const WatchSummary s = w.summary(0);
  EXPECT_TRUE(s.temp_known);
  EXPECT_EQ(s.max_temp_c, 70u);
  EXPECT_EQ(s.hottest_during, "a");  // tick 1 (70 C) was read first during step a's sampleNow
  EXPECT_EQ(s.min_sm_mhz, 1u);
  EXPECT_EQ(s.max_sm_mhz, 1980u);
  EXPECT_EQ(s.max_power_w, 450.5);
  EXPECT_EQ(s.reasons_seen, 0x44u);
  EXPECT_EQ(s.best_cur_gen, 5);
  EXPECT_EQ(s.best_cur_width, 16);
  EXPECT_TRUE(s.read_errors.empty());
}

TEST(Watcher, HottestStepAndClockRangeInOrder) {
  ScriptedNvml n;
  Tick cool, hot, off;
  cool.temp = 50u;
  hot.temp = 80u;
  cool.clocks = Clocks{1500, 1};
  hot.clocks = Clocks{1200, 1};
  off.temp = 80u;
  off.clocks = Clocks{0, 1};
  n.script[0] = {cool, hot, off, hot};
  Watcher w(n, {0}, kNever);
  const char* steps[] = {"cuda_deploy", "memtest", "gemm_burn", "targeted_power"};
  for (size_t i = 0; i < 4; ++i) {
    n.tick = i;
    w.beginStep(steps[i]);
    w.sampleNow();
    w.endStep();
  }
  const WatchSummary s = w.summary(0);
  EXPECT_EQ(s.samples, 12);
  EXPECT_EQ(s.max_temp_c, 80u);
  EXPECT_EQ(s.hottest_during, "memtest");  // 80 C first in memtest; equal later readings do not move it
  EXPECT_EQ(s.min_sm_mhz, 1200u);
  EXPECT_EQ(s.max_sm_mhz, 1500u);
}

// Double-bit ECC: the count at the first reading is the start; the step of the first increase is
// named; a count that stays is no increase.
TEST(Watcher, DbeStartEndAndTheStepOfTheFirstIncrease) {
  ScriptedNvml n;
  Tick t2, t3, t5;
  t2.ecc = EccCounts{2, 9};
  t3.ecc = EccCounts{3, 9};
  t5.ecc = EccCounts{5, 9};
  n.script[0] = {t2, t2, t3, t5};
  Watcher w(n, {0}, kNever);
  w.beginStep("cuda_deploy");  // tick 0: 2
  n.tick = 1;
  w.endStep();  // 2 again
  EXPECT_EQ(w.summary(0).dbe_during, "");
  n.tick = 2;
  w.beginStep("memtest");  // 3
  n.tick = 3;
  w.endStep();  // 5
  const WatchSummary s = w.summary(0);
  EXPECT_TRUE(s.dbe_known);
  EXPECT_EQ(s.dbe_start, 2u);
  EXPECT_EQ(s.dbe_end, 5u);
  EXPECT_EQ(s.dbe_during, "memtest");
}

// Read errors: "not supported" is no error; others are kept once each, at most eight; a failed
// clock read is an error, a zero clock is not.
TEST(Watcher, ReadErrorsOncePerKindAndAtMostEight) {
  ScriptedNvml n;
  Tick bad;
  bad.temp = Status::Nvml(999, "unknown error");
  bad.clocks = Status::Nvml(999, "clock error");
  bad.power = Status::Nvml(kNvmlNotSupported, "n/a");
  bad.reasons = Status::Nvml(kNvmlNotSupported, "n/a");
  bad.ecc = Status::Nvml(kNvmlNotSupported, "n/a");
  bad.link = Status::Nvml(999, "link");
  n.script[0] = {bad};
  Watcher w(n, {0}, kNever);
  w.sampleNow();
  w.sampleNow();
  WatchSummary s = w.summary(0);
  EXPECT_EQ(s.read_errors, (std::vector<std::string>{"temperature: unknown error", "clocks: clock error"}));
  EXPECT_FALSE(s.temp_known);
  EXPECT_FALSE(s.dbe_known);
  EXPECT_EQ(s.max_sm_mhz, 0u);
  EXPECT_EQ(s.best_cur_gen, 0);
  // Ten different temperature errors: the first eight (with the clock error) are kept.
  ScriptedNvml many;
  for (int i = 0; i < 10; ++i) {
    Tick t;
    t.temp = Status::Nvml(999, "error " + std::to_string(i));
    many.script[0].push_back(t);
  }
  Watcher m(many, {0}, kNever);
  for (size_t i = 0; i < 10; ++i) {
    many.tick = i;
    m.sampleNow();
  }
  const auto errors = m.summary(0).read_errors;
  ASSERT_EQ(errors.size(), 8u);
  EXPECT_EQ(errors.front(), "temperature: error 0");
  EXPECT_EQ(errors.back(), "temperature: error 7");
}

// Xid events land on their GPU with the step running when they were polled; other GPUs' are
// dropped.
TEST(Watcher, XidsAreAttributedToTheStepAndGpu) {
  ScriptedNvml n;
  n.script[0] = {Tick{}};
  n.script[1] = {Tick{}};
  Watcher w(n, {0, 1}, kNever);
  w.beginStep("memtest");
  n.next_xids = {{1, 79}, {5, 13}};
  w.endStep();
  n.next_xids = {{0, 48}};
  w.beginStep("gemm_burn");
  w.endStep();
  EXPECT_EQ(w.summary(1).xids, (std::vector<std::pair<std::string, uint64_t>>{{"memtest", 79}}));
  EXPECT_EQ(w.summary(0).xids, (std::vector<std::pair<std::string, uint64_t>>{{"gemm_burn", 48}}));
}

// Before the first sample a live display must show "--", not a 0 C reading.
TEST(Watcher, AGpuNotYetSampledHasNoCurrentTemperature) {
  ScriptedNvml n;
  Watcher w(n, {0}, kNever);
  const WatchSummary s = w.summary(0);
  EXPECT_EQ(s.samples, 0);
  EXPECT_FALSE(s.cur_temp_known);
  EXPECT_LT(s.cur_power_w, 0);
}

// A GPU that stops answering NVML (lost, reset required) is failed, naming the step; the latest
// sample is kept for a live display and says "unknown" once the reads fail.
TEST(Watcher, AGpuThatStopsAnsweringFailsAndTheLatestSampleIsKept) {
  ScriptedNvml n;
  Tick ok, lost;
  ok.temp = 71u;
  ok.power = 612.0;
  ok.clocks = Clocks{1980, 2619};
  lost.temp = Status::Nvml(15, "GPU is lost");
  lost.clocks = Status::Nvml(15, "GPU is lost");
  lost.power = Status::Nvml(15, "GPU is lost");
  n.script[0] = {ok, lost};
  Watcher w(n, {0}, kNever);
  w.beginStep("burn");
  WatchSummary s = w.summary(0);
  EXPECT_TRUE(s.cur_temp_known);
  EXPECT_EQ(s.cur_temp_c, 71u);
  EXPECT_EQ(s.cur_power_w, 612.0);
  EXPECT_EQ(s.cur_sm_mhz, 1980u);
  EXPECT_EQ(s.cur_mem_mhz, 2619u);
  EXPECT_TRUE(s.lost_during.empty());
  n.tick = 1;
  w.endStep();
  s = w.summary(0);
  EXPECT_FALSE(s.cur_temp_known);
  EXPECT_LT(s.cur_power_w, 0);
  EXPECT_EQ(s.cur_sm_mhz, 0u);
  EXPECT_EQ(s.lost_during, "burn");
  EXPECT_EQ(s.lost_error, "GPU is lost");
  const Check c = judgeWatch(0, s, ThresholdTable::builtin().generic());
  EXPECT_EQ(c.verdict, Verdict::Fail);
  ASSERT_FALSE(c.evidence.empty());
  EXPECT_EQ(c.evidence[0], "the GPU stopped answering NVML during burn (GPU is lost)");
}
