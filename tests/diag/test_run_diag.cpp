#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "diag/verdicts.h"
#include "fakes.h"

using namespace gw;
using namespace gw::diag;
using namespace gw::diag::test;

namespace {

DiagOptions opts(int level) {
  DiagOptions o;
  o.level = level;
  o.watch_interval_seconds = 0.01;
  return o;
}

const Check* find(const DiagReport& r, const std::string& test, int gpu) {
  for (const auto& c : r.checks)
    if (c.test == test && c.gpu == gpu) return &c;
  return nullptr;
}

int count(const DiagReport& r, const std::string& test) {
  return static_cast<int>(
      std::count_if(r.checks.begin(), r.checks.end(), [&](const Check& c) { return c.test == test; }));
}

// A backend that is never ready (as on a simulator host).
class Unavailable : public RecordedBackend {
 public:
  Unavailable(const FakeNvml& n, BackendState s, std::string w) : RecordedBackend(n) {
    st = s;
    why = std::move(w);
  }
  Result<std::vector<GwDeviceProps>> devices() override {
    ADD_FAILURE() << "devices() called on an unavailable backend";
    return Status::Error("x");
  }
};

}  // namespace

// Every GPU test skipped: nothing failed, but nothing was accepted either - "incomplete", exit 4.
TEST(RunDiag, R1OnASimulatorSkipsCudaAndIsIncomplete) {
  FakeNvml nvml = fleet(2);
  Unavailable b(nvml, BackendState::NoDriver, "no GPU (libcuda.so.1: cannot open shared object)");
  NullProgress p;
  auto r = runDiag(opts(1), nvml, &b, p);
  EXPECT_EQ(r.exitCode(), 4) << renderText(r);
  EXPECT_EQ(r.overall, Verdict::Incomplete);
  for (const auto& g : r.gpus) {
    EXPECT_EQ(g.verdict, Verdict::Incomplete) << g.gpu;
    EXPECT_EQ(g.reasons, (std::vector<std::string>{"incomplete: no GPU test ran (skipped: no GPU (libcuda.so.1: "
                                                   "cannot open shared object))"}));
  }
  const Check* cd = find(r, "cuda_deploy", 1);
  ASSERT_NE(cd, nullptr);
  EXPECT_EQ(cd->verdict, Verdict::Skip);
  EXPECT_EQ(cd->summary.rfind("skipped: no GPU", 0), 0u) << cd->summary;
  EXPECT_EQ(count(r, "watch"), 0);
  EXPECT_EQ(count(r, "persistence"), 2);
  EXPECT_EQ(find(r, "deployment", -1)->verdict, Verdict::Skip);
  EXPECT_NE(r.cuda_status.find("skipped: no GPU"), std::string::npos);
}

TEST(RunDiag, BuiltWithoutCudaAndBrokenCuda) {
  FakeNvml nvml = fleet(1);
  Unavailable none(nvml, BackendState::BuiltWithoutCuda, "built without CUDA");
  NullProgress p;
  auto r = runDiag(opts(2), nvml, &none, p);
  EXPECT_EQ(r.exitCode(), 4);
  EXPECT_EQ(r.gpus[0].verdict, Verdict::Incomplete);
  EXPECT_EQ(find(r, "memtest", 0)->summary, "skipped: built without CUDA");
  EXPECT_EQ(find(r, "p2p_bandwidth", -1)->verdict, Verdict::Skip);

  Unavailable broken(
      nvml, BackendState::CudaBroken,
      "CUDA cannot initialise: cudaGetDeviceCount: system has unsupported display driver / cuda driver combination");
  auto rb = runDiag(opts(2), nvml, &broken, p);
  EXPECT_EQ(rb.exitCode(), 1);  // broken CUDA is a failure, which outranks incomplete
  EXPECT_EQ(rb.gpus[0].verdict, Verdict::Fail);
  EXPECT_EQ(find(rb, "cuda_deploy", 0)->verdict, Verdict::Fail);
  EXPECT_EQ(find(rb, "memtest", 0)->verdict, Verdict::Skip);
}

TEST(RunDiag, DeploymentHookResultsAreMerged) {
  FakeNvml nvml = fleet(1);
  RecordedBackend b(nvml);
  DiagOptions o = opts(1);
  o.deployment_checks = [] {
    Check c;
    c.title = "kernel module";
    c.verdict = Verdict::Fail;
    c.summary = "nvidia.ko not built for the running kernel";
    return std::vector<Check>{c};
  };
  NullProgress p;
  auto r = runDiag(o, nvml, &b, p);
  const Check* d = find(r, "deployment", -1);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->verdict, Verdict::Fail);
  EXPECT_EQ(r.exitCode(), 1);
  EXPECT_EQ(r.gpus[0].verdict, Verdict::Pass);  // node-wide, not the GPU's fault
}

TEST(RunDiag, R3HealthyFleetPassesAndMapsByBusId) {
  FakeNvml nvml = fleet(4);
  RecordedBackend b(nvml);
  NullProgress p;
  auto r = runDiag(opts(3), nvml, &b, p);
  EXPECT_EQ(r.exitCode(), 0) << renderText(r);
  for (int g = 0; g < 4; ++g) {
    EXPECT_EQ(r.gpus[g].verdict, Verdict::Pass) << g;
    EXPECT_EQ(r.gpus[g].sku, "h100-sxm5-80gb");
    ASSERT_NE(find(r, "watch", g), nullptr);
  }
  EXPECT_EQ(count(r, "p2p_bandwidth"), 12);
  EXPECT_EQ(count(r, "gemm_burn"), 4);
  // The recorded backend saw NVML GPU 2 as CUDA device 1 (reversed order); the check is GPU 2's.
  EXPECT_NE(std::find(b.calls.begin(), b.calls.end(), "triad2"), b.calls.end());
  EXPECT_GT(find(r, "targeted_power", 0)->measured["mean_w"].get<double>(), 0);
}

// A copy between a GPU with NVLink and one without goes over PCIe, and is judged against PCIe's
// rate: NVLink only when both ends have active links.
TEST(RunDiag, P2PIsNvlinkOnlyWhenBothEndsHaveActiveLinks) {
  FakeNvml nvml = fleet(3);
  nvml.gpus[2].nvlinks = 0;
  RecordedBackend b(nvml);
  NullProgress p;
  auto r = runDiag(opts(3), nvml, &b, p);
  int checked = 0;
  for (const auto& c : r.checks) {
    if (c.test != "p2p_bandwidth" || !c.measured.contains("src")) continue;
    const int src = c.measured["src"].get<int>(), dst = c.measured["dst"].get<int>();
    const bool both = src != 2 && dst != 2;
    EXPECT_EQ(c.measured["nvlink"].get<bool>(), both) << src << " -> " << dst;
    if (both)
      EXPECT_EQ(c.measured["expected_gbps"].get<double>(), 360.0) << src;  // the H100 SKU's NVLink rate
    else
      EXPECT_LT(c.measured["expected_gbps"].get<double>(), 100.0) << src << " -> " << dst;  // PCIe's rate
    ++checked;
  }
  EXPECT_EQ(checked, 6);
}

// The mean power of targeted power counts only the samples after the ramp (load >= 0.5): a GPU
// that draws 100 W while ramping and 600 W after it means 600 W.
TEST(RunDiag, TargetedPowerMeanLeavesTheRampOut) {
  FakeNvml nvml = fleet(1);
  nvml.gpus[0].power_draw = 600;
  nvml.gpus[0].ramp_power_draw = 100;
  RecordedBackend b(nvml);
  b.live = &nvml;
  NullProgress p;
  auto r = runDiag(opts(3), nvml, &b, p);
  const Check* c = find(r, "targeted_power", 0);
  ASSERT_NE(c, nullptr) << renderText(r);
  EXPECT_EQ(c->measured["mean_w"].get<double>(), 600) << renderText(r);
  EXPECT_EQ(c->measured["max_w"].get<double>(), 600);
}

// The watcher's clock range is what the GPU ran at (1980 MHz throughout), not 0 to it, and a
// GPU whose clocks were never read shows no range.
TEST(RunDiag, WatchSummaryClockRangeIsWhatTheGpuRanAt) {
  FakeNvml nvml = fleet(1);
  RecordedBackend b(nvml);
  NullProgress p;
  auto r = runDiag(opts(3), nvml, &b, p);
  const Check* w = find(r, "watch", 0);
  ASSERT_NE(w, nullptr) << renderText(r);
  EXPECT_EQ(w->measured["min_sm_mhz"].get<unsigned>(), 1980u);
  EXPECT_EQ(w->measured["max_sm_mhz"].get<unsigned>(), 1980u);
  EXPECT_NE(w->summary.find("SM 1980-1980 MHz"), std::string::npos) << w->summary;
  EXPECT_EQ(judgeWatch(0, WatchSummary{}, ThresholdTable::builtin().generic()).summary.find("SM "), std::string::npos);
}

TEST(RunDiag, SelectedGpusOnly) {
  FakeNvml nvml = fleet(4);
  RecordedBackend b(nvml);
  DiagOptions o = opts(1);
  o.gpus = {2};
  NullProgress p;
  auto r = runDiag(o, nvml, &b, p);
  ASSERT_EQ(r.gpus.size(), 1u);
  EXPECT_EQ(r.gpus[0].gpu, 2);
  EXPECT_EQ(b.calls, (std::vector<std::string>{"vecadd2"}));
  o.gpus = {7};
  auto bad = runDiag(o, nvml, &b, p);
  EXPECT_EQ(bad.exitCode(), 2);
  EXPECT_NE(bad.error.find("no GPU with index 7"), std::string::npos);
}

TEST(RunDiag, BadOptionsExitTwo) {
  FakeNvml nvml = fleet(1);
  RecordedBackend b(nvml);
  NullProgress p;
  DiagOptions o = opts(4);
  EXPECT_EQ(runDiag(o, nvml, &b, p).exitCode(), 2);
  o = opts(1);
  o.thresholds_path = "/nonexistent.yaml";
  EXPECT_EQ(runDiag(o, nvml, &b, p).exitCode(), 2);
  o = opts(3);
  o.gemm_precision = "fp8";
  EXPECT_EQ(runDiag(o, nvml, &b, p).exitCode(), 2);
  FakeNvml empty;
  EXPECT_EQ(runDiag(opts(1), empty, &b, p).exitCode(), 2);
}

TEST(RunDiag, MemtestErrorFailsOnlyThatGpu) {
  FakeNvml nvml = fleet(2);
  RecordedBackend b(nvml);
  GwMemtestResult bad{};
  bad.bytes_tested = 1ull << 36;
  bad.errors = 5;
  bad.errors_by_pattern[3] = 5;
  b.mem.insert_or_assign(1, Result<GwMemtestResult>(bad));
  NullProgress p;
  auto r = runDiag(opts(2), nvml, &b, p);
  EXPECT_EQ(r.exitCode(), 1);
  EXPECT_EQ(r.gpus[0].verdict, Verdict::Pass);
  EXPECT_EQ(r.gpus[1].verdict, Verdict::Fail);
  ASSERT_FALSE(r.gpus[1].reasons.empty());
  EXPECT_NE(r.gpus[1].reasons[0].find("memtest"), std::string::npos);
}

TEST(RunDiag, NewXidDuringTestsFailsTheGpu) {
  FakeNvml nvml = fleet(2);
  nvml.gpus[0].xid = 48;
  nvml.gpus[0].polls_before_xid = 1;  // appears on the second poll: during the first GPU step
  RecordedBackend b(nvml);
  NullProgress p;
  auto r = runDiag(opts(1), nvml, &b, p);
  EXPECT_EQ(r.exitCode(), 1) << renderText(r);
  const Check* w = find(r, "watch", 0);
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->verdict, Verdict::Fail);
  EXPECT_NE(w->evidence[0].find("Xid 48"), std::string::npos);
  EXPECT_NE(w->evidence[0].find("cuda_deploy"), std::string::npos);
  EXPECT_EQ(find(r, "watch", 1)->verdict, Verdict::Pass);
}

TEST(RunDiag, DbeAndOverheatDuringTests) {
  FakeNvml nvml = fleet(2);
  nvml.gpus[0].dbe_during_test = 1;
  nvml.gpus[1].temp_during_test = 95;
  RecordedBackend b(nvml);
  NullProgress p;
  auto r = runDiag(opts(2), nvml, &b, p);
  EXPECT_EQ(find(r, "watch", 0)->verdict, Verdict::Fail);
  EXPECT_EQ(find(r, "watch", 1)->verdict, Verdict::Fail);
  EXPECT_EQ(r.exitCode(), 1);
}

TEST(RunDiag, StragglerAndPowerShortfall) {
  FakeNvml nvml = fleet(4);
  nvml.gpus[3].power_draw = 300;  // cannot reach 85 % of 700 W
  RecordedBackend b(nvml);
  GwGemmResult slow{};
  slow.precision = GW_GEMM_FP16;
  slow.used_cublas = 1;
  slow.n = 8192;
  slow.iterations = 800;
  slow.checksum = 42;
  slow.gflops = 500000;
  b.gemm[2] = slow;
  NullProgress p;
  DiagOptions o = opts(3);
  o.duration_seconds = 10;
  auto r = runDiag(o, nvml, &b, p);
  EXPECT_EQ(find(r, "gemm_burn", 2)->verdict, Verdict::Fail);
  EXPECT_EQ(find(r, "gemm_burn", 0)->verdict, Verdict::Pass);
  EXPECT_EQ(find(r, "targeted_power", 3)->verdict, Verdict::Fail);
  EXPECT_GT(find(r, "targeted_power", 3)->measured["mean_duty"].get<double>(), 0.9);  // pushed to full load
  EXPECT_EQ(r.gpus[1].verdict, Verdict::Pass);
}

TEST(RunDiag, CudaErrorMidTestIsAFailureWithTheCall) {
  FakeNvml nvml = fleet(1);
  RecordedBackend b(nvml);
  b.vecadd.insert_or_assign(0, Result<GwVecAddResult>(Status::Error("cudaMalloc(d_a): out of memory")));
  NullProgress p;
  auto r = runDiag(opts(1), nvml, &b, p);
  EXPECT_EQ(r.exitCode(), 1);
  EXPECT_NE(find(r, "cuda_deploy", 0)->summary.find("cudaMalloc(d_a): out of memory"), std::string::npos);
}

TEST(RunDiag, GpuInvisibleToCudaIsSkipped) {
  FakeNvml nvml = fleet(2);
  RecordedBackend b(nvml);
  b.devs.erase(b.devs.begin());  // NVML GPU 1 is not visible to CUDA
  NullProgress p;
  auto r = runDiag(opts(2), nvml, &b, p);
  EXPECT_EQ(find(r, "cuda_deploy", 1)->verdict, Verdict::Skip);
  EXPECT_NE(find(r, "cuda_deploy", 1)->summary.find("not visible to CUDA"), std::string::npos);
  EXPECT_EQ(find(r, "p2p_bandwidth", -1)->verdict, Verdict::Skip);
  // GPU 0 was tested and passes; GPU 1 was not tested at all, so the run accepts only half the
  // node: incomplete.
  EXPECT_EQ(r.gpus[0].verdict, Verdict::Pass);
  EXPECT_EQ(r.gpus[1].verdict, Verdict::Incomplete);
  EXPECT_EQ(r.overall, Verdict::Incomplete);
  EXPECT_EQ(r.exitCode(), 4);
}

// A skip beside GPU tests that ran (here p2p, which needs two GPUs) is a note, not a gap: the
// GPU was tested, and the run passes.
TEST(RunDiag, SkipBesideTestsThatRanStillPasses) {
  FakeNvml nvml = fleet(1);
  RecordedBackend b(nvml);
  NullProgress p;
  auto r = runDiag(opts(2), nvml, &b, p);
  EXPECT_EQ(find(r, "p2p_bandwidth", -1)->verdict, Verdict::Skip);
  EXPECT_EQ(find(r, "memtest", 0)->verdict, Verdict::Pass);
  EXPECT_EQ(r.gpus[0].verdict, Verdict::Pass);
  EXPECT_EQ(r.exitCode(), 0) << renderText(r);
}

// The report records the stack it ran on: driver, the driver's CUDA, the runtime of the CUDA part,
// the gpuwarden version, and each GPU's serial and VBIOS.
TEST(RunDiag, ReportRecordsTheStack) {
  FakeNvml nvml = fleet(2);
  RecordedBackend b(nvml);
  for (auto& d : b.devs) d.runtime_version = 12080;
  DiagOptions o = opts(1);
  o.gpuwarden_version = "9.8.7";
  NullProgress p;
  auto r = runDiag(o, nvml, &b, p);
  EXPECT_EQ(r.stack.driver_version, "550.54.15");
  EXPECT_EQ(r.stack.cuda_driver_version, 12040);
  EXPECT_EQ(r.stack.cuda_runtime_version, 12080);
  EXPECT_EQ(r.stack.gpuwarden_version, "9.8.7");
  ASSERT_EQ(r.gpus.size(), 2u);
  EXPECT_EQ(r.gpus[1].serial, "1652001");
  EXPECT_EQ(r.gpus[1].vbios, "96.00.74.00.01");
  const auto j = toJson(r);
  EXPECT_EQ(j["stack"]["cuda_runtime_version"], "12.8");
  EXPECT_EQ(j["stack"]["cuda_driver_version"], "12.4");
  EXPECT_EQ(j["gpus"][0]["serial"], "1652000");
  // No CUDA part: no runtime to record.
  Unavailable none(nvml, BackendState::NoDriver, "no GPU");
  auto rn = runDiag(o, nvml, &none, p);
  EXPECT_EQ(rn.stack.cuda_runtime_version, 0);
  EXPECT_TRUE(toJson(rn)["stack"]["cuda_runtime_version"].is_null());
}

TEST(RunDiag, ProgressReportsStepsAndMonotonicFraction) {
  struct Rec : ProgressSink {
    std::vector<std::string> steps;
    std::vector<double> fractions;
    int done = 0;
    std::mutex mu;
    void stepStarted(int, int, const std::string& t, double) override { steps.push_back(t); }
    void progress(double f, double, const std::string&) override {
      std::lock_guard<std::mutex> lk(mu);
      fractions.push_back(f);
    }
    void finished(const DiagReport&) override { ++done; }
  } rec;
  FakeNvml nvml = fleet(2);
  RecordedBackend b(nvml);
  auto r = runDiag(opts(2), nvml, &b, rec);
  EXPECT_EQ(rec.steps.size(), buildPlan(2)->steps.size());
  EXPECT_EQ(rec.done, 1);
  ASSERT_FALSE(rec.fractions.empty());
  EXPECT_NEAR(rec.fractions.back(), 1.0, 1e-9);
  EXPECT_TRUE(std::is_sorted(rec.fractions.begin(), rec.fractions.end()));
}

TEST(RunDiag, CancelStopsAndExitsTwo) {
  FakeNvml nvml = fleet(1);
  RecordedBackend b(nvml);
  DiagOptions o = opts(2);
  int polls = 0;
  o.cancelled = [&] { return ++polls > 3; };
  NullProgress p;
  auto r = runDiag(o, nvml, &b, p);
  EXPECT_EQ(r.error, "cancelled");
  EXPECT_EQ(r.exitCode(), 2);
}

// docs/diag.md promises the deployment test adds 4 Mi floats on each GPU: what the backend is asked
// for, and what the report says it checked.
TEST(RunDiag, VectorAddChecksFourMebiElementsOnEachGpu) {
  FakeNvml nvml = fleet(2);
  RecordedBackend b(nvml);
  NullProgress p;
  auto r = runDiag(opts(1), nvml, &b, p);
  for (int gpu : {0, 1}) {
    const Check* c = find(r, "cuda_deploy", gpu);
    ASSERT_NE(c, nullptr) << renderText(r);
    EXPECT_EQ(c->measured.value("n", 0u), 4u * 1024 * 1024) << c->measured.dump();
    EXPECT_EQ(c->summary, "vector add of 4194304 elements, max error 0");
  }
}

// docs/diag.md: while GPU tests run, every GPU is sampled every second. The tests above run the
// watcher faster (opts()); a run from the command line uses the default.
TEST(RunDiag, TheWatcherSamplesEverySecondByDefault) { EXPECT_EQ(DiagOptions{}.watch_interval_seconds, 1.0); }

// docs/diag.md: the triad's three arrays are up to 1 GiB each, and fit in a quarter of the free
// memory each when less is free.
TEST(RunDiag, TriadArraysAreOneGibOrAQuarterOfTheFreeMemory) {
  FakeNvml nvml = fleet(2);
  RecordedBackend b(nvml);
  b.devs[0].free_mem = size_t(2) << 30;  // CUDA device 0 is the last NVML GPU (see fakes.h)
  NullProgress p;
  auto r = runDiag(opts(3), nvml, &b, p);
  const Check* roomy = find(r, "stream_triad", 0);
  const Check* tight = find(r, "stream_triad", 1);
  ASSERT_NE(roomy, nullptr) << renderText(r);
  ASSERT_NE(tight, nullptr) << renderText(r);
  EXPECT_EQ(roomy->measured.value("bytes_per_array", 0ull), 1ull << 30);
  EXPECT_EQ(tight->measured.value("bytes_per_array", 0ull), 512ull << 20);
}
