#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <mutex>
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

// ---- The mutation pass over run_diag.cpp: whole reports, progress sequences, every setup and
// skip path. A watch interval of an hour leaves only the samples the runner asks for itself (at
// each GPU step's start and end, and after each host-bandwidth run), so runs are deterministic.
namespace {

DiagOptions still(int level) {
  DiagOptions o;
  o.level = level;
  o.watch_interval_seconds = 3600;
  return o;
}

// Three H100s; GPU 2 has no NVLink, GPU 1 a stray process, GPU 0 persistence off.
FakeNvml mixedFleet() {
  FakeNvml n = fleet(3);
  n.gpus[2].nvlinks = 0;
  n.gpus[1].procs = {{4242, "python", 3u << 30}};
  n.gpus[0].persistence = false;
  return n;
}

}  // namespace

namespace {

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Recorder : ProgressSink {
  std::mutex mu;
  std::vector<std::string> steps;
  std::vector<std::pair<double, double>> points;  // (fraction, eta)
  std::vector<std::string> activities;
  int checks = 0;
  void stepStarted(int index, int count, const std::string& title, double estimate) override {
    char b[160];
    std::snprintf(b, sizeof b, "%d/%d %s ~%g", index, count, title.c_str(), estimate);
    steps.push_back(b);
  }
  void progress(double f, double eta, const std::string& activity) override {
    std::lock_guard<std::mutex> lk(mu);
    points.push_back({f, eta});
    activities.push_back(activity);
  }
  void checkDone(const Check&) override { ++checks; }
};

// The progress a run reports, as the estimated seconds done at each call: checked against the
// plan's total, the fraction and the time left.
void expectProgress(const Recorder& rec, const std::vector<double>& done, double total) {
  ASSERT_EQ(rec.points.size(), done.size());
  for (size_t i = 0; i < done.size(); ++i) {
    EXPECT_NEAR(rec.points[i].first, done[i] / total, 1e-9) << i;
    EXPECT_NEAR(rec.points[i].second, total - done[i], 1e-9) << i;
  }
}

}  // namespace

// A whole -r 3 report of three GPUs (one without NVLink, one with a stray process, one without
// persistence), against the stored text; each GPU's watch saw every sample the runner asked for.
TEST(RunDiagExact, R3ReportOfAMixedFleet) {
  FakeNvml nvml = mixedFleet();
  RecordedBackend b(nvml);
  Recorder rec;
  auto r = runDiag(still(3), nvml, &b, rec);
  r.seconds = 0;
  EXPECT_EQ(renderText(r), readFile(std::string(GW_TEST_SOURCE_DIR) + "/tests/diag/fixtures/r3-mixed-fleet.txt"));
  EXPECT_EQ(r.cuda_status, "ready (recorded)");
  EXPECT_EQ(rec.checks, static_cast<int>(r.checks.size()));
  EXPECT_EQ(r.checks.size(), 1u + 3 * 7 + 3 * 6 + 6 + 3);
  // Each check carries its step's duration; the watch, judged after all steps, has none.
  for (const auto& c : r.checks) {
    if (c.test == "watch")
      EXPECT_EQ(c.seconds, 0) << c.gpu;
    else
      EXPECT_GT(c.seconds, 0) << c.test << " " << c.gpu;
  }
  for (int g = 0; g < 3; ++g) {
    // 2 samples at each of the 7 GPU steps' start and end, 3 more after the host transfers.
    EXPECT_EQ(find(r, "watch", g)->measured["samples"], 17) << g;
    // 650 W drawn against 595 W: the controller takes half the relative excess off the duty
    // (from 0.5) at each of its 11 calls.
    EXPECT_DOUBLE_EQ(find(r, "targeted_power", g)->measured["mean_duty"].get<double>(), 0.2291061879297173);
  }
}

// Every progress call of a -r 2 run on two GPUs: each step from where the last ended, memtest
// by the mean of its GPUs (each reports half), P2P by pairs done.
TEST(RunDiagExact, ProgressOfR2OnTwoGpus) {
  FakeNvml nvml = fleet(2);
  RecordedBackend b(nvml);
  Recorder rec;
  auto r = runDiag(still(2), nvml, &b, rec);
  ASSERT_EQ(r.exitCode(), 0) << renderText(r);
  EXPECT_EQ(rec.steps, (std::vector<std::string>{
                           "1/12 deployment checks (doctor) ~1", "2/12 PCIe link state ~0.1",
                           "3/12 page retirement ~0.1", "4/12 row remapping ~0.1", "5/12 ECC error counters ~0.1",
                           "6/12 stray compute processes ~0.1", "7/12 persistence mode ~0.1", "8/12 InfoROM ~0.1",
                           "9/12 CUDA deployment test (vector add) ~3", "10/12 device memory test ~60",
                           "11/12 host<->device bandwidth ~4", "12/12 peer-to-peer bandwidth ~1"}));
  expectProgress(rec, {0,   1,   1,   1.1, 1.1, 1.2,  1.2,  1.3,  1.3,  1.4,  1.4,  1.5,  1.5,  1.6,
                       1.6, 1.7, 1.7, 4.7, 4.7, 19.7, 34.7, 64.7, 64.7, 68.7, 68.7, 69.2, 69.7, 69.7},
                 69.7);
  EXPECT_EQ(rec.activities.front(), "deployment checks (doctor)");
  EXPECT_EQ(rec.activities.back(), "peer-to-peer bandwidth");
  EXPECT_EQ(rec.checks, static_cast<int>(r.checks.size()));
}

// -r 3 on one GPU: GEMM reports its whole step, targeted power each tenth of it.
TEST(RunDiagExact, ProgressOfR3OnOneGpu) {
  FakeNvml nvml = fleet(1);
  RecordedBackend b(nvml);
  Recorder rec;
  auto r = runDiag(still(3), nvml, &b, rec);
  ASSERT_EQ(r.exitCode(), 0) << renderText(r);
  std::vector<double> done = {0, 1};
  double at = 1;
  for (int i = 0; i < 7; ++i, at += 0.05) done.insert(done.end(), {at, at + 0.05});
  at = 1.35;
  done.insert(done.end(), {at, at + 1.5, at + 1.5, at + 1.5 + 30, at + 1.5 + 60});  // cuda_deploy, memtest
  at += 61.5;
  done.insert(done.end(), {at, at + 2, at + 2, at + 2});  // pcie_bandwidth; p2p (no pairs: skipped)
  at += 2;
  done.insert(done.end(), {at, at + 600, at + 600, at + 600, at + 603});  // gemm_burn, stream_triad
  at += 603;
  done.push_back(at);
  for (int i = 0; i <= 10; ++i) done.push_back(at + i / 10.0 * 120);
  done.push_back(at + 120);
  expectProgress(rec, done, 787.85);
}

TEST(RunDiagExact, GemmPrecisionNamesAndPciBusIds) {
  EXPECT_EQ(gemmPrecisionFromName("fp32"), GW_GEMM_FP32);
  EXPECT_EQ(gemmPrecisionFromName("tf32"), GW_GEMM_TF32);
  EXPECT_EQ(gemmPrecisionFromName("fp16"), GW_GEMM_FP16);
  EXPECT_EQ(gemmPrecisionFromName("bf16"), GW_GEMM_BF16);
  EXPECT_EQ(gemmPrecisionFromName("fp64"), GW_GEMM_FP64);
  EXPECT_EQ(gemmPrecisionFromName("tensor"), GW_GEMM_TENSOR);
  EXPECT_STREQ(gemmPrecisionName(GW_GEMM_TENSOR), "tensor");
  EXPECT_EQ(gemmPrecisionFromName("fp8"), -1);
  EXPECT_EQ(gemmPrecisionFromName("FP16"), -1);
  EXPECT_EQ(normalizePciBusId("00000000:17:00.0"), "0000:17:00.0");
  EXPECT_EQ(normalizePciBusId("0000:AB:1F.7"), "0000:ab:1f.7");
  EXPECT_EQ(normalizePciBusId("1:2:3.4"), "0001:02:03.4");
  EXPECT_EQ(normalizePciBusId("0000:17:00"), "");
  EXPECT_EQ(normalizePciBusId("junk"), "");
  // FP32 is precision 0: a run that asks for it runs.
  FakeNvml nvml = fleet(1);
  RecordedBackend b(nvml);
  NullProgress p;
  DiagOptions o = still(1);
  o.gemm_precision = "fp32";
  EXPECT_EQ(runDiag(o, nvml, &b, p).exitCode(), 0);
  o.gemm_precision = "fp8";
  EXPECT_EQ(runDiag(o, nvml, &b, p).error, "unknown GEMM precision 'fp8' (fp16, bf16, tf32, fp32, fp64, tensor)");
  o = still(4);
  EXPECT_EQ(runDiag(o, nvml, &b, p).error,
            "invalid level or duration: -r takes 1, 2 or 3 and --duration a number of seconds above 0 and at most "
            "604800 (a week)");
}

// -i: indices from 0 to count-1, each GPU once.
TEST(RunDiagExact, GpuSelectionAtItsEdges) {
  FakeNvml nvml = fleet(4);
  RecordedBackend b(nvml);
  NullProgress p;
  DiagOptions o = still(1);
  auto gpusOf = [&](std::vector<int> sel) {
    o.gpus = std::move(sel);
    auto r = runDiag(o, nvml, &b, p);
    if (!r.error.empty()) return r.error;
    std::string s;
    for (const auto& g : r.gpus) s += std::to_string(g.gpu) + " ";
    return s;
  };
  EXPECT_EQ(gpusOf({}), "0 1 2 3 ");
  EXPECT_EQ(gpusOf({0}), "0 ");
  EXPECT_EQ(gpusOf({3}), "3 ");
  EXPECT_EQ(gpusOf({1, 1, 0}), "1 0 ");
  EXPECT_EQ(gpusOf({4}), "no GPU with index 4 (4 GPU(s) present)");
  EXPECT_EQ(gpusOf({-1}), "no GPU with index -1 (4 GPU(s) present)");
  EXPECT_EQ(gpusOf({0, 9}), "no GPU with index 9 (4 GPU(s) present)");
}

namespace {
// NVML that fails what a test names.
class FailingNvml : public FakeNvml {
 public:
  bool count_fails = false, stack_fails = false, nvlink_fails = false, limit_fails = false, draw_fails = false;
  int link_fails_for = -1;
  Result<int> gpuCount() override {
    if (count_fails) return Status::Nvml(999, "Unknown Error");
    return FakeNvml::gpuCount();
  }
  Result<std::string> driverVersion() override {
    if (stack_fails) return Status::Nvml(999, "x");
    return FakeNvml::driverVersion();
  }
  Result<int> cudaDriverVersion() override {
    if (stack_fails) return Status::Nvml(999, "x");
    return FakeNvml::cudaDriverVersion();
  }
  Result<int> nvlinkActiveLinks(int g) override {
    if (nvlink_fails) return Status::Nvml(999, "x");
    return FakeNvml::nvlinkActiveLinks(g);
  }
  Result<PcieLink> pcieLink(int g) override {
    if (g == link_fails_for) return Status::Nvml(999, "link unreadable");
    return FakeNvml::pcieLink(g);
  }
  Result<double> powerLimitW(int g) override {
    if (limit_fails) return Status::Nvml(999, "no limit");
    return FakeNvml::powerLimitW(g);
  }
  Result<double> powerDrawW(int g) override {
    if (draw_fails) return Status::Nvml(999, "no draw");
    return FakeNvml::powerDrawW(g);
  }
};

FailingNvml failingFleet(int n) {
  FailingNvml f;
  f.gpus = fleet(n).gpus;
  return f;
}

}  // namespace

TEST(RunDiagExact, NvmlThatCannotListOrNameTheStack) {
  FailingNvml nvml = failingFleet(1);
  RecordedBackend b(nvml);
  NullProgress p;
  nvml.count_fails = true;
  auto r = runDiag(still(1), nvml, &b, p);
  EXPECT_EQ(r.error, "cannot list GPUs: Unknown Error");
  EXPECT_EQ(r.exitCode(), 2);
  EXPECT_TRUE(r.gpus.empty());
  nvml.count_fails = false;
  nvml.stack_fails = true;
  r = runDiag(still(1), nvml, &b, p);
  EXPECT_EQ(r.stack.driver_version, "");
  EXPECT_EQ(r.stack.cuda_driver_version, 0);
  EXPECT_EQ(r.exitCode(), 0);
}

// A thresholds file given with --thresholds is the one the GPUs are judged by.
TEST(RunDiagExact, AThresholdsFileIsUsed) {
  const std::string path = ::testing::TempDir() + "/gw-diag-thresholds.yaml";
  std::ofstream(path) << "version: 1\nskus:\n  - key: mine\n    pci_device_ids: [0x2330]\n    max_temp_c: 50\n";
  FakeNvml nvml = fleet(1);
  RecordedBackend b(nvml);
  NullProgress p;
  DiagOptions o = still(1);
  o.thresholds_path = path;
  auto r = runDiag(o, nvml, &b, p);
  EXPECT_EQ(r.gpus[0].sku, "mine");
  EXPECT_EQ(find(r, "watch", 0)->verdict, Verdict::Fail);  // 60 C is above this file's 50 C
  o.thresholds_path = GW_DIAG_THRESHOLDS_FILE;
  EXPECT_EQ(runDiag(o, nvml, &b, p).gpus[0].sku, "h100-sxm5-80gb");
  std::ofstream(path) << "version: 2\n";
  o.thresholds_path = path;
  EXPECT_EQ(runDiag(o, nvml, &b, p).error, path + ": 'version: 1' expected");
  std::remove(path.c_str());
}

namespace {
class NoDevices : public RecordedBackend {
 public:
  using RecordedBackend::RecordedBackend;
  Result<std::vector<GwDeviceProps>> devices() override { return Status::Error("cudaGetDeviceCount: error 999"); }
};
}  // namespace

// A CUDA part that is ready but cannot list its devices: the deployment test fails with why, the
// later GPU tests skip with it.
TEST(RunDiagExact, DevicesThatCannotBeListed) {
  FakeNvml nvml = fleet(2);
  NoDevices b(nvml);
  NullProgress p;
  auto r = runDiag(still(2), nvml, &b, p);
  EXPECT_EQ(find(r, "cuda_deploy", 0)->verdict, Verdict::Fail);
  EXPECT_EQ(find(r, "cuda_deploy", 0)->summary, "cannot list CUDA devices: cudaGetDeviceCount: error 999");
  EXPECT_EQ(find(r, "cuda_deploy", 0)->action,
            "fix the CUDA stack first (gpuwarden doctor): driver and runtime must agree");
  EXPECT_EQ(find(r, "memtest", 1)->verdict, Verdict::Skip);
  EXPECT_EQ(find(r, "memtest", 1)->summary, "skipped: cannot list CUDA devices: cudaGetDeviceCount: error 999");
  EXPECT_EQ(find(r, "p2p_bandwidth", -1)->summary, "skipped: cannot list CUDA devices: cudaGetDeviceCount: error 999");
  EXPECT_EQ(r.exitCode(), 1);
}

// Why P2P did not run, for each reason.
TEST(RunDiagExact, P2PSkipReasons) {
  NullProgress p;
  FakeNvml one = fleet(1);
  RecordedBackend b1(one);
  EXPECT_EQ(find(runDiag(still(2), one, &b1, p), "p2p_bandwidth", -1)->summary, "skipped: needs two GPUs");
  FakeNvml two = fleet(2);
  RecordedBackend b2(two);
  b2.devs.erase(b2.devs.begin());  // NVML GPU 1 not visible
  const auto r = runDiag(still(2), two, &b2, p);
  const Check* c = find(r, "p2p_bandwidth", -1);
  EXPECT_EQ(c->summary, "skipped: fewer than two GPUs visible to CUDA");
  EXPECT_EQ(c->verdict, Verdict::Skip);
  EXPECT_TRUE(c->gpus_involved.empty());
  Unavailable none(two, BackendState::NoDriver, "no GPU (libcuda.so.1)");
  EXPECT_EQ(find(runDiag(still(2), two, &none, p), "p2p_bandwidth", -1)->summary, "skipped: no GPU (libcuda.so.1)");
  Unavailable broken(two, BackendState::CudaBroken, "CUDA cannot initialise");
  EXPECT_EQ(find(runDiag(still(2), two, &broken, p), "p2p_bandwidth", -1)->summary, "skipped: CUDA cannot initialise");
  EXPECT_EQ(find(runDiag(still(2), two, &broken, p), "cuda_deploy", 1)->summary, "CUDA cannot initialise");
}

// NVLink takes an active link at both ends (one is enough); a count NVML cannot read is none; a
// PCIe pair whose link cannot be read has no expectation.
TEST(RunDiagExact, P2PPathAndExpectation) {
  NullProgress p;
  FailingNvml nvml = failingFleet(2);
  nvml.gpus[0].nvlinks = 1;
  nvml.gpus[1].nvlinks = 1;
  RecordedBackend b(nvml);
  auto r = runDiag(still(2), nvml, &b, p);
  for (const auto& c : r.checks)
    if (c.test == "p2p_bandwidth") {
      EXPECT_EQ(c.measured["nvlink"], true) << c.summary;
    }
  nvml.nvlink_fails = true;
  r = runDiag(still(2), nvml, &b, p);
  for (const auto& c : r.checks)
    if (c.test == "p2p_bandwidth") {
      EXPECT_EQ(c.measured["nvlink"], false) << c.summary;
      EXPECT_EQ(c.measured["expected_gbps"], pcieTheoreticalGBps(5, 16)) << c.summary;
    }
  nvml.link_fails_for = 1;
  r = runDiag(still(2), nvml, &b, p);
  EXPECT_EQ(count(r, "p2p_bandwidth"), 2);
  for (const auto& c : r.checks)
    if (c.test == "p2p_bandwidth") {
      EXPECT_EQ(c.measured["expected_gbps"], 0.0) << c.summary;
      EXPECT_EQ(c.summary.find("expected"), std::string::npos) << c.summary;
    }
}

// The CUDA runtime recorded is that of a GPU CUDA sees and that says one.
TEST(RunDiagExact, RuntimeVersionFromAVisibleGpuThatSaysOne) {
  NullProgress p;
  FakeNvml one = fleet(1);
  RecordedBackend b1(one);
  b1.devs[0].runtime_version = 12080;  // CUDA device 0
  EXPECT_EQ(runDiag(still(1), one, &b1, p).stack.cuda_runtime_version, 12080);
  FakeNvml two = fleet(2);
  RecordedBackend b2(two);
  b2.devs[1].runtime_version = 12080;  // NVML GPU 0
  b2.devs[0].runtime_version = 0;      // NVML GPU 1: says none
  EXPECT_EQ(runDiag(still(1), two, &b2, p).stack.cuda_runtime_version, 12080);
}

// The triad's peak: the SKU's when it has one, else what the CUDA part computed; free memory
// unknown (0) leaves the 1 GiB arrays.
TEST(RunDiagExact, TriadPeakAndSizeFallbacks) {
  NullProgress p;
  FakeNvml nvml = fleet(1);
  nvml.gpus[0].name = "Tesla T4";
  nvml.gpus[0].pci_device_id = 0x1EB810DE;
  RecordedBackend b(nvml);
  b.devs[0].free_mem = 0;
  auto r = runDiag(still(3), nvml, &b, p);
  const Check* t = find(r, "stream_triad", 0);
  ASSERT_NE(t, nullptr) << renderText(r);
  EXPECT_EQ(t->summary, "3000 GB/s of 3352 GB/s peak, 89 %");
  EXPECT_EQ(t->measured["bytes_per_array"], 1ull << 30);
  EXPECT_EQ(r.gpus[0].sku, "generic");
}

namespace {
// Draws 100 W plus 100 W per unit of the load targeted power asks (one GPU: the load is set and
// read on the backend's thread).
class LoadFollowingNvml : public FakeNvml {
 public:
  Result<double> powerDrawW(int g) override {
    auto it = ramp.find(g);
    return 100.0 + 100.0 * (it == ramp.end() ? 0.0 : it->second);
  }
};
}  // namespace

// The power controller: the mean counts samples from half the run on; a draw above the target
// lowers the duty by half the relative excess each call (floored at 0.05); a draw that cannot be
// read asks full load; no limit, no target: the duty stays.
TEST(RunDiagExact, PowerControllerSamplesAndDuty) {
  NullProgress p;
  LoadFollowingNvml follow;
  follow.gpus = fleet(1).gpus;
  RecordedBackend bf(follow);
  bf.live = &follow;
  auto r = runDiag(still(3), follow, &bf, p);
  const Check* c = find(r, "targeted_power", 0);
  ASSERT_NE(c, nullptr);
  EXPECT_DOUBLE_EQ(c->measured["mean_w"].get<double>(), 175);  // 150, 160, ... 200
  EXPECT_EQ(c->measured["max_w"].get<double>(), 200);

  FakeNvml over = fleet(1);
  over.gpus[0].power_draw = 714;  // 120 % of the 595 W target: 0.4, 0.3, 0.2, 0.1, then 0.05
  RecordedBackend bo(over);
  r = runDiag(still(3), over, &bo, p);
  EXPECT_NEAR(find(r, "targeted_power", 0)->measured["mean_duty"].get<double>(), 1.35 / 11, 1e-12);

  FailingNvml failing = failingFleet(1);
  failing.draw_fails = true;
  RecordedBackend bd(failing);
  r = runDiag(still(3), failing, &bd, p);
  c = find(r, "targeted_power", 0);
  EXPECT_EQ(c->measured["mean_duty"], 1.0);
  EXPECT_EQ(c->measured["mean_w"], 0.0);
  EXPECT_EQ(c->verdict, Verdict::Warn);
  EXPECT_EQ(c->evidence, (std::vector<std::string>{"power draw: no draw"}));

  failing.draw_fails = false;
  failing.limit_fails = true;
  RecordedBackend bl(failing);
  r = runDiag(still(3), failing, &bl, p);
  c = find(r, "targeted_power", 0);
  EXPECT_EQ(c->measured["mean_duty"], 0.5);
  EXPECT_EQ(c->measured["target_w"], 0.0);
  EXPECT_EQ(c->evidence, (std::vector<std::string>{"power limit: no limit"}));
}

// The watcher lives for the whole run: an Xid during the deployment test is still reported after
// the P2P step, and one that arrives at P2P's last sample is P2P's.
TEST(RunDiagExact, XidsKeepTheirStepAcrossTheRun) {
  NullProgress p;
  FakeNvml early = fleet(2);
  early.gpus[1].xid = 48;
  early.gpus[1].polls_before_xid = 1;
  RecordedBackend be(early);
  auto r = runDiag(still(2), early, &be, p);
  EXPECT_EQ(
      find(r, "watch", 1)->evidence,
      (std::vector<std::string>{"new Xid 48 (Double-bit (uncorrectable) ECC error in GPU memory) during cuda_deploy"}));
  // Polls: deploy 2, memtest 2, host bandwidth 2 + one per GPU, P2P 2: the tenth is P2P's end.
  FakeNvml late = fleet(2);
  late.gpus[0].xid = 79;
  late.gpus[0].polls_before_xid = 9;
  RecordedBackend bl(late);
  r = runDiag(still(2), late, &bl, p);
  EXPECT_EQ(late.polls, 10);
  EXPECT_EQ(find(r, "watch", 0)->evidence,
            (std::vector<std::string>{"new Xid 79 (GPU has fallen off the bus) during p2p_bandwidth"}));
}

// Deployment checks from the hook: a test name is kept (empty: "deployment"), and a duration the
// check measured itself is not overwritten by the step's.
TEST(RunDiagExact, DeploymentHookNamesAndDurations) {
  FakeNvml nvml = fleet(1);
  RecordedBackend b(nvml);
  NullProgress p;
  DiagOptions o = still(1);
  o.deployment_checks = [] {
    Check a;
    a.test = "kernel_module";
    a.seconds = 0.25;
    Check d;
    d.title = "driver";
    return std::vector<Check>{a, d};
  };
  auto r = runDiag(o, nvml, &b, p);
  ASSERT_GE(r.checks.size(), 2u);
  EXPECT_EQ(r.checks[0].test, "kernel_module");
  EXPECT_EQ(r.checks[0].seconds, 0.25);
  EXPECT_EQ(r.checks[1].test, "deployment");
  EXPECT_GT(r.checks[1].seconds, 0);
  EXPECT_EQ(r.checks[1].gpu, -1);
}

// ---- What a value-initialised struct of the diag API means: the headers' defaults are part of
// the contract (-1 is node-wide or unknown, 0 is unknown or none), and the run's sizes are what
// docs/diag.md states.
namespace {
class ArgsBackend : public RecordedBackend {
 public:
  using RecordedBackend::RecordedBackend;
  std::vector<std::string> args;
  void note(const std::string& s) {
    std::lock_guard<std::mutex> lk(mu);
    args.push_back(s);
  }
  static std::string g(double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%g", v);
    return b;
  }
  Result<GwMemtestResult> memtest(int dev, double fraction, unsigned patterns, double min_seconds,
                                  const ProgressFn& pf) override {
    note("memtest " + g(fraction) + " " + std::to_string(patterns) + " " + g(min_seconds));
    return RecordedBackend::memtest(dev, fraction, patterns, min_seconds, pf);
  }
  Result<GwBandwidthResult> hostBandwidth(int dev, size_t bytes, int it) override {
    note("bw " + std::to_string(bytes) + " " + std::to_string(it));
    return RecordedBackend::hostBandwidth(dev, bytes, it);
  }
  Result<GwP2PResult> p2pBandwidth(int src, int dst, size_t bytes, int it) override {
    note("p2p " + std::to_string(bytes) + " " + std::to_string(it));
    return RecordedBackend::p2pBandwidth(src, dst, bytes, it);
  }
  Result<GwGemmResult> gemmBurn(int dev, double seconds, int precision, const GemmProgressFn& pf) override {
    note("gemm " + g(seconds) + " " + std::to_string(precision));
    return RecordedBackend::gemmBurn(dev, seconds, precision, pf);
  }
  Result<GwTriadResult> streamTriad(int dev, size_t bytes, int it) override {
    note("triad " + std::to_string(bytes) + " " + std::to_string(it));
    return RecordedBackend::streamTriad(dev, bytes, it);
  }
  Result<GwPowerResult> targetedPower(int dev, double seconds, int precision, const PowerControlFn& c) override {
    note("power " + g(seconds) + " " + std::to_string(precision));
    return RecordedBackend::targetedPower(dev, seconds, precision, c);
  }
};
}  // namespace

// docs/diag.md: host copies of 256 MiB, best of 10; peer copies of 256 MiB, best of 5; triad
// arrays of 1 GiB, best of 20; memtest over memtest_fraction (0.90) of free memory with every
// pattern; each timed step for its plan's seconds, scaled by --duration; GEMM and power in FP16.
TEST(RunDiagExact, TheBackendIsAskedForTheDocumentedSizes) {
  FakeNvml nvml = fleet(2);
  ArgsBackend b(nvml);
  NullProgress p;
  DiagOptions o;
  o.level = 3;
  o.watch_interval_seconds = 3600;
  ASSERT_EQ(runDiag(o, nvml, &b, p).exitCode(), 0);
  EXPECT_EQ(b.args,
            (std::vector<std::string>{"memtest 0.9 15 60", "memtest 0.9 15 60", "bw 268435456 10", "bw 268435456 10",
                                      "p2p 268435456 5", "p2p 268435456 5", "gemm 600 2", "gemm 600 2",
                                      "triad 1073741824 20", "triad 1073741824 20", "power 120 2", "power 120 2"}));
  b.args.clear();
  o.duration_seconds = 78;  // a tenth of the nominal 780 s
  o.gemm_precision = "bf16";
  o.level = 3;
  o.gpus = {1};
  ASSERT_EQ(runDiag(o, nvml, &b, p).exitCode(), 0);
  EXPECT_EQ(b.args, (std::vector<std::string>{"memtest 0.9 15 6", "bw 268435456 10", "gemm 60 3", "triad 1073741824 20",
                                              "power 12 3"}));
}

TEST(DiagDefaults, OptionsAndPlanStep) {
  const DiagOptions o;
  EXPECT_EQ(o.level, 1);
  EXPECT_TRUE(o.gpus.empty());
  EXPECT_FALSE(o.duration_seconds);
  EXPECT_EQ(o.gemm_precision, "fp16");
  EXPECT_EQ(o.vector_add_elements, size_t(4) << 20);
  EXPECT_EQ(o.bandwidth_bytes, size_t(256) << 20);
  EXPECT_EQ(o.bandwidth_iterations, 10);
  EXPECT_EQ(o.p2p_bytes, size_t(256) << 20);
  EXPECT_EQ(o.p2p_iterations, 5);
  EXPECT_EQ(o.triad_max_bytes_per_array, size_t(1) << 30);
  EXPECT_EQ(o.triad_iterations, 20);
  const PlanStep s;
  EXPECT_FALSE(s.needs_cuda);
  EXPECT_FALSE(s.timed);
  EXPECT_EQ(s.seconds, 0);
  EXPECT_EQ(s.kind, StepKind::Node);
  EXPECT_EQ(DiagPlan{}.level, 1);
}

TEST(DiagDefaults, NvmlValuesAreUnknownOrNone) {
  EXPECT_EQ(kNvmlNotSupported, 3);
  const PcieLink l;
  EXPECT_EQ(l.cur_gen + l.cur_width + l.max_gen + l.max_width, 0);
  const Clocks c;
  EXPECT_EQ(c.sm_mhz + c.mem_mhz, 0u);
  const EccCounts e;
  EXPECT_EQ(e.volatile_dbe + e.aggregate_dbe, 0u);
  const RetiredPages rp;
  EXPECT_EQ(rp.sbe + rp.dbe, 0u);
  EXPECT_FALSE(rp.pending);
  const RowRemap rr;
  EXPECT_EQ(rr.correctable + rr.uncorrectable, 0u);
  EXPECT_FALSE(rr.pending);
  EXPECT_FALSE(rr.failure);
  const GpuProcess gp;
  EXPECT_EQ(gp.pid, 0u);
  EXPECT_EQ(gp.used_bytes, 0u);
  const XidEvent x;
  EXPECT_EQ(x.gpu, -1);
  EXPECT_EQ(x.xid, 0u);
}

TEST(DiagDefaults, ReportValues) {
  EXPECT_EQ(static_cast<int>(Verdict::Skip), 0);
  EXPECT_EQ(static_cast<int>(Verdict::Pass), 1);
  EXPECT_EQ(static_cast<int>(Verdict::Warn), 2);
  EXPECT_EQ(static_cast<int>(Verdict::Incomplete), 3);
  EXPECT_EQ(static_cast<int>(Verdict::Fail), 4);
  EXPECT_EQ(kExitPassed, 0);
  EXPECT_EQ(kExitFailed, 1);
  EXPECT_EQ(kExitCouldNotRun, 2);
  EXPECT_EQ(kExitNoDriver, 3);
  EXPECT_EQ(kExitIncomplete, 4);
  const Check c;
  EXPECT_EQ(c.gpu, -1);
  EXPECT_EQ(c.verdict, Verdict::Pass);
  EXPECT_EQ(c.seconds, 0);
  EXPECT_TRUE(c.measured.is_object());
  const GpuSummary g;
  EXPECT_EQ(g.gpu, -1);
  EXPECT_EQ(g.verdict, Verdict::Pass);
  const SoftwareStack st;
  EXPECT_EQ(st.cuda_driver_version + st.cuda_runtime_version, 0);
  const DiagReport r;
  EXPECT_EQ(r.level, 1);
  EXPECT_EQ(r.seconds, 0);
  EXPECT_EQ(r.overall, Verdict::Pass);
}

TEST(DiagDefaults, VerdictInputs) {
  const PeerStanding ps;
  EXPECT_FALSE(ps.has_peers);
  EXPECT_EQ(ps.peer_mean + ps.slower_pct, 0);
  EXPECT_EQ(ps.verdict, Verdict::Pass);
  const GemmInput gi;
  EXPECT_EQ(gi.gpu, -1);
  EXPECT_EQ(gi.sku.key, "generic");
  EXPECT_EQ(gi.sku.max_temp_c, 87);  // the built-in defaults, not a zeroed struct
  EXPECT_FALSE(gi.result.ok());
  const PowerRun pr;
  EXPECT_EQ(pr.limit_w + pr.target_w + pr.mean_w + pr.max_w, 0);
  EXPECT_EQ(pr.samples, 0);
  const WatchSummary w;
  EXPECT_EQ(w.samples, 0);
  EXPECT_FALSE(w.temp_known);
  EXPECT_FALSE(w.dbe_known);
  EXPECT_EQ(w.max_temp_c + w.min_sm_mhz + w.max_sm_mhz, 0u);
  EXPECT_EQ(w.max_power_w, 0);
  EXPECT_EQ(w.reasons_seen + w.dbe_start + w.dbe_end, 0u);
  EXPECT_EQ(w.best_cur_gen + w.best_cur_width, 0);
}
