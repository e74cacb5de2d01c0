// runBurn over the production loader and a scripted stub part (stub_cuda_part.cpp), with an
// in-memory NVML for what the watcher reads; and the live display's two forms.
#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>

#include "diag/burn.h"
#include "fakes.h"

using namespace gw;
using namespace gw::diag;
using namespace gw::diag::test;

namespace {

struct Env {
  Env(const char* name, const char* value) : name_(name) { setenv(name, value, 1); }
  ~Env() { unsetenv(name_); }
  const char* name_;
};

BurnOptions quick() {
  BurnOptions o;
  o.seconds = 1;
  o.precision = "fp64";
  o.interval_seconds = 0.25;
  return o;
}

std::string all(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += x + "\n";
  return s;
}

}  // namespace

TEST(Burn, LiveLineShowsTheCountsAndSensors) {
  BurnLive l;
  l.gpu = 3;
  l.fraction = 0.42;
  l.so_far.gflops = 51234.5;
  l.so_far.iterations = 1234;
  l.so_far.failed_iterations = 2;
  l.temp_known = true;
  l.temp_c = 71;
  l.power_w = 612.4;
  l.sm_mhz = 1980;
  l.mem_mhz = 2619;
  EXPECT_EQ(formatLiveLine(l),
            "GPU 3   42%     51234.5 GFLOP/s      1234 GEMMs  2 errors  71 C  612 W  SM 1980 MHz  MEM 2619 MHz");
  BurnLive unknown;
  unknown.gpu = 0;
  unknown.error = "cudaMalloc: out of memory";
  EXPECT_EQ(formatLiveLine(unknown),
            "GPU 0    0%         0.0 GFLOP/s         0 GEMMs  0 errors  -- C  -- W  SM -- MHz  MEM -- MHz  ERROR: "
            "cudaMalloc: out of memory");
}

TEST(Burn, ATerminalIsRedrawnInPlaceAPipeGetsPlainLines) {
  std::vector<BurnLive> gpus(2);
  gpus[0].gpu = 0;
  gpus[1].gpu = 1;
  std::ostringstream tty, pipe;
  TextBurnSink t(tty, true), p(pipe, false);
  for (int i = 0; i < 2; ++i) {
    t.tick(i, gpus);
    p.tick(i, gpus);
  }
  const std::string line0 = formatLiveLine(gpus[0]), line1 = formatLiveLine(gpus[1]);
  const std::string block = "\r\x1b[2K" + line0 + "\n\r\x1b[2K" + line1 + "\n";
  EXPECT_EQ(tty.str(), block + "\x1b[2A" + block);
  EXPECT_EQ(pipe.str(), line0 + "\n" + line1 + "\n" + line0 + "\n" + line1 + "\n");
}

TEST(Burn, OptionsAreCheckedBeforeAnythingRuns) {
  BurnOptions o = quick();
  EXPECT_EQ(validateBurnOptions(o), "");
  o.seconds = 0;
  EXPECT_EQ(validateBurnOptions(o), "-d: the duration must be between 1 and 604800 seconds (one week), not 0.000");
  o = quick();
  o.precision = "FP64";
  EXPECT_EQ(validateBurnOptions(o),
            "--precision: unknown precision 'FP64' (valid: fp16, bf16, tf32, fp32, fp64, tensor)");
  FakeNvml nvml = fleet(2);
  BurnSink sink;
  BurnReport r = runBurn(o, nvml, nullptr, sink);
  EXPECT_EQ(r.exitCode(), kBurnExitUsage);
  EXPECT_TRUE(r.gpus.empty());
}

// What `gpuwarden burn` does without options (docs/burn.md, --help): 60 s of fp16 with a line a
// second; -d takes 1 s to one week (604800 s) inclusive; the refresh interval must be positive.
TEST(Burn, DefaultsAndTheDurationsEdges) {
  const BurnOptions d;
  EXPECT_EQ(d.seconds, 60);
  EXPECT_EQ(d.precision, "fp16");
  EXPECT_EQ(d.interval_seconds, 1.0);
  EXPECT_EQ(validateBurnOptions(d), "");
  for (const double ok : {1.0, 604800.0}) {
    BurnOptions o;
    o.seconds = ok;
    EXPECT_EQ(validateBurnOptions(o), "") << ok;
  }
  for (const double bad : {0.999, 604800.001}) {
    BurnOptions o;
    o.seconds = bad;
    EXPECT_NE(validateBurnOptions(o).find("between 1 and 604800 seconds"), std::string::npos) << bad;
  }
  BurnOptions o;
  o.interval_seconds = 0;
  EXPECT_EQ(validateBurnOptions(o), "the refresh interval must be positive");
  o.interval_seconds = 0.001;
  EXPECT_EQ(validateBurnOptions(o), "");
}

// Every listed precision is accepted; fp32's code is 0, so a "known" test that is off by one at
// zero would refuse it.
TEST(Burn, EveryListedPrecisionIsAccepted) {
  for (const char* p : {"fp16", "bf16", "tf32", "fp32", "fp64", "tensor"}) {
    BurnOptions o = quick();
    o.precision = p;
    EXPECT_EQ(validateBurnOptions(o), "") << p;
  }
}

// An Xid during the burn makes that GPU FAULTY through the diag watcher and judgeWatch; the live
// ticks carry the stub's numbers and the NVML sensors.
TEST(Burn, AnXidDuringTheBurnIsFaultyTheOthersOk) {
  Env part("GW_STUB_BUS_IDS", "0000:17:00.0,0000:18:00.0,0000:19:00.0");
  Env gemm("GW_STUB_GEMM", "ok,ok,ok");
  FakeNvml nvml = fleet(3);
  nvml.gpus[2].xid = 79;
  nvml.gpus[2].polls_before_xid = 2;
  auto backend = openCudaBackend(GW_TEST_STUB_PART);
  ASSERT_EQ(backend->state(), BackendState::Ready) << backend->reason();
  struct Recorder : BurnSink {
    std::vector<std::vector<BurnLive>> ticks;
    void tick(double, const std::vector<BurnLive>& g) override { ticks.push_back(g); }
  } rec;
  BurnReport r = runBurn(quick(), nvml, backend.get(), rec);
  ASSERT_EQ(r.exitCode(), kBurnExitFaulty) << renderBurnText(r);
  ASSERT_GE(rec.ticks.size(), 2u);
  const auto& last = rec.ticks.back();
  ASSERT_EQ(last.size(), 3u);
  for (const auto& l : last) {
    EXPECT_TRUE(l.finished);
    EXPECT_EQ(l.so_far.gflops, 50000.0);
    EXPECT_EQ(l.temp_c, 60u);
    EXPECT_EQ(l.power_w, 650.0);
    EXPECT_EQ(l.sm_mhz, 1980u);
  }
  ASSERT_EQ(r.gpus.size(), 3u);
  EXPECT_FALSE(r.gpus[0].faulty) << all(r.gpus[0].reasons);
  EXPECT_FALSE(r.gpus[1].faulty) << all(r.gpus[1].reasons);
  EXPECT_TRUE(r.gpus[2].faulty);
  EXPECT_NE(all(r.gpus[2].reasons).find("health during the tests: new Xid 79"), std::string::npos)
      << all(r.gpus[2].reasons);
  const auto j = burnToJson(r);
  EXPECT_FALSE(j.contains("error")) << j.dump();  // it ran: no run-level error to report
  EXPECT_FALSE(j.contains("cannot_run")) << j.dump();
  EXPECT_EQ(j["gpus"][2]["verdict"], "faulty");
  EXPECT_EQ(j["gpus"][0]["verdict"], "ok");
  // The report's "gemm" is the GEMM step's own measurement, not another check's.
  ASSERT_TRUE(j["gpus"][0].contains("gemm"));
  EXPECT_EQ(j["gpus"][0]["gemm"].value("gflops", 0.0), 50000.0);
}

// The watcher samples once more as the burn ends, so an Xid logged during its last period is
// judged even when that period is long: here the period outlasts the burn, and the Xid is read
// only by that closing sample (the first read is the watcher's start).
TEST(Burn, TheClosingSampleIsJudged) {
  Env part("GW_STUB_BUS_IDS", "0000:17:00.0,0000:18:00.0");
  Env gemm("GW_STUB_GEMM", "ok,ok");
  FakeNvml nvml = fleet(2);
  nvml.gpus[1].xid = 79;
  nvml.gpus[1].polls_before_xid = 1;
  auto backend = openCudaBackend(GW_TEST_STUB_PART);
  ASSERT_EQ(backend->state(), BackendState::Ready) << backend->reason();
  BurnOptions o = quick();
  o.interval_seconds = 1000;
  BurnSink sink;
  BurnReport r = runBurn(o, nvml, backend.get(), sink);
  ASSERT_EQ(r.gpus.size(), 2u);
  EXPECT_FALSE(r.gpus[0].faulty) << all(r.gpus[0].reasons);
  EXPECT_TRUE(r.gpus[1].faulty) << all(r.gpus[1].reasons);
  EXPECT_EQ(r.exitCode(), kBurnExitFaulty) << renderBurnText(r);
}

// Interrupted: what ran is judged, but no GPU is called OK and the run does not pass.
TEST(Burn, AnInterruptedBurnIsNeverOk) {
  Env gemm("GW_STUB_GEMM", "ok,ok");
  FakeNvml nvml = fleet(2);
  auto backend = openCudaBackend(GW_TEST_STUB_PART);
  BurnOptions o = quick();
  o.seconds = 30;
  int polls = 0;
  o.cancelled = [&] { return ++polls > 3; };
  BurnSink sink;
  BurnReport r = runBurn(o, nvml, backend.get(), sink);
  EXPECT_TRUE(r.cancelled);
  EXPECT_LT(r.seconds, 10);
  EXPECT_EQ(r.exitCode(), kBurnExitCannotRun);
  const std::string text = renderBurnText(r);
  EXPECT_NE(text.find("INTERRUPTED"), std::string::npos) << text;
  EXPECT_EQ(text.find(" OK "), std::string::npos) << text;
}

TEST(Burn, APartThatCannotRunSaysWhyForEveryGpu) {
  Env mode("GW_STUB_PART", "nodriver");
  FakeNvml nvml = fleet(2);
  auto backend = openCudaBackend(GW_TEST_STUB_PART);
  BurnSink sink;
  BurnOptions o = quick();
  o.simulated = true;
  BurnReport r = runBurn(o, nvml, backend.get(), sink);
  EXPECT_EQ(r.exitCode(), kBurnExitCannotRun);
  EXPECT_EQ(r.cannot_run,
            "no GPU (NVIDIA driver library not found: cannot open shared object file); the simulator's GPUs are "
            "NVML only, CUDA cannot run on them");
  ASSERT_EQ(r.gpus.size(), 2u);
  for (const auto& g : r.gpus) {
    EXPECT_FALSE(g.ran);
    EXPECT_FALSE(g.not_run.empty());
  }
}

// The result line counts each SUSPECT GPU once, and a GPU both faulty and suspect only as FAULTY.
TEST(Burn, TheResultLineCountsFaultyAndSuspectGpus) {
  BurnReport r;
  r.precision = "fp64";
  for (int i = 0; i < 3; ++i) {
    BurnGpu g;
    g.gpu = i;
    g.ran = true;
    g.suspect = true;
    g.faulty = i == 2;
    r.gpus.push_back(g);
  }
  EXPECT_EQ(r.exitCode(), kBurnExitFaulty);
  const std::string text = renderBurnText(r);
  EXPECT_NE(text.find("\n  result: 1 GPU(s) FAULTY, 2 GPU(s) SUSPECT (results disagree and no majority names the "
                      "wrong one: burn them beside a known-good GPU of the same model) (exit 1)\n"),
            std::string::npos)
      << text;
}
