// GPM (profiling metrics) in the simulator: two samples an interval apart give the workload's
// activity over exactly that interval, coherent with what the other NVML calls report for the same
// steps (utilisation, PCIe throughput, NVLink counters), per MIG instance through the parent, and
// absent on pre-Hopper GPUs.
#include <cmath>
#include <vector>

#include "sim_harness.h"

namespace simtest {
namespace {

class Gpm : public SimTest {
 protected:
  nvmlGpmSample_t Alloc() {
    nvmlGpmSample_t s = nullptr;
    EXPECT_EQ(nv.nvmlGpmSampleAlloc(&s), NVML_SUCCESS);
    samples_.push_back(s);
    return s;
  }
  void TearDown() override {
    for (nvmlGpmSample_t s : samples_) nv.nvmlGpmSampleFree(s);
    SimTest::TearDown();
  }

  // Every metric we read over [a, b], in request order; NAN where the metric's own result is not
  // success.
  std::vector<double> Metrics(nvmlGpmSample_t a, nvmlGpmSample_t b, nvmlReturn_t* rc = nullptr) {
    nvmlGpmMetricsGet_t g{};
    g.version = NVML_GPM_METRICS_GET_VERSION;
    g.sample1 = a;
    g.sample2 = b;
    for (unsigned id : kIds) g.metrics[g.numMetrics++].metricId = id;
    const nvmlReturn_t r = nv.nvmlGpmMetricsGet(&g);
    if (rc) *rc = r;
    std::vector<double> out;
    for (unsigned i = 0; i < g.numMetrics; ++i)
      out.push_back(g.metrics[i].nvmlReturn == NVML_SUCCESS ? g.metrics[i].value : NAN);
    return out;
  }

  static constexpr unsigned kIds[] = {NVML_GPM_METRIC_GRAPHICS_UTIL,
                                      NVML_GPM_METRIC_SM_UTIL,
                                      NVML_GPM_METRIC_SM_OCCUPANCY,
                                      NVML_GPM_METRIC_ANY_TENSOR_UTIL,
                                      NVML_GPM_METRIC_DRAM_BW_UTIL,
                                      NVML_GPM_METRIC_FP64_UTIL,
                                      NVML_GPM_METRIC_FP32_UTIL,
                                      NVML_GPM_METRIC_FP16_UTIL,
                                      NVML_GPM_METRIC_PCIE_TX_PER_SEC,
                                      NVML_GPM_METRIC_PCIE_RX_PER_SEC,
                                      NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC,
                                      NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC};
  enum { kGr, kSm, kOcc, kTensor, kDram, kFp64, kFp32, kFp16, kPcieTx, kPcieRx, kNvlTx, kNvlRx };

  unsigned long long NvlinkTotal(nvmlDevice_t d, unsigned field) {
    nvmlFieldValue_t v[NVML_NVLINK_MAX_LINKS]{};
    for (unsigned l = 0; l < NVML_NVLINK_MAX_LINKS; ++l) {
      v[l].fieldId = field;
      v[l].scopeId = l;
    }
    EXPECT_EQ(nv.nvmlDeviceGetFieldValues(d, NVML_NVLINK_MAX_LINKS, v), NVML_SUCCESS);
    unsigned long long sum = 0;
    for (const auto& x : v)
      if (x.nvmlReturn == NVML_SUCCESS) sum += x.value.ullVal;
    return sum;
  }

 private:
  std::vector<nvmlGpmSample_t> samples_;
};

TEST_F(Gpm, HopperSaysSupportedAmpereDoesNot) {
  Start(FreshShipped("dgx-h100"));
  nvmlGpmSupport_t s{};
  s.version = NVML_GPM_SUPPORT_VERSION;
  ASSERT_EQ(nv.nvmlGpmQueryDeviceSupport(Gpu(0), &s), NVML_SUCCESS);
  EXPECT_EQ(s.isSupportedDevice, 1u);
  s.version = 2;
  EXPECT_EQ(nv.nvmlGpmQueryDeviceSupport(Gpu(0), &s), NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
  nv.nvmlShutdown();

  Start(FreshShipped("mig-a100"));
  s = {};
  s.version = NVML_GPM_SUPPORT_VERSION;
  ASSERT_EQ(nv.nvmlGpmQueryDeviceSupport(Gpu(1), &s), NVML_SUCCESS);
  EXPECT_EQ(s.isSupportedDevice, 0u);
  nvmlGpmSample_t a = Alloc();
  EXPECT_EQ(nv.nvmlGpmSampleGet(Gpu(1), a), NVML_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(nv.nvmlGpmMigSampleGet(Gpu(0), 1, a), NVML_ERROR_NOT_SUPPORTED);
}

// Over one whole step the metrics are that step's activity: graphics activity is the utilisation
// nvmlDeviceGetUtilizationRates rounds, the pipes are the training mix of it (src/sim/workload.cpp),
// PCIe is nvmlDeviceGetPcieThroughput's KB/s in MiB/s, NVLink the change of the throughput counters.
TEST_F(Gpm, TrainingMetricsFollowTheOtherReadingsOfTheSameStep) {
  Start(FreshShipped("dgx-h100"));
  nvmlDevice_t d = Gpu(2);
  nvmlGpmSample_t a = Alloc(), b = Alloc();
  for (int step = 20; step < 30; ++step) {
    SCOPED_TRACE(step);
    At(step);
    ASSERT_EQ(nv.nvmlGpmSampleGet(d, a), NVML_SUCCESS);
    const unsigned long long tx0 = NvlinkTotal(d, NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX);
    At(step + 0.5);
    nvmlUtilization_t u{};
    ASSERT_EQ(nv.nvmlDeviceGetUtilizationRates(d, &u), NVML_SUCCESS);
    unsigned pcie_tx = 0, pcie_rx = 0;
    ASSERT_EQ(nv.nvmlDeviceGetPcieThroughput(d, NVML_PCIE_UTIL_TX_BYTES, &pcie_tx), NVML_SUCCESS);
    ASSERT_EQ(nv.nvmlDeviceGetPcieThroughput(d, NVML_PCIE_UTIL_RX_BYTES, &pcie_rx), NVML_SUCCESS);
    At(step + 1);
    ASSERT_EQ(nv.nvmlGpmSampleGet(d, b), NVML_SUCCESS);
    const unsigned long long tx1 = NvlinkTotal(d, NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX);
    nvmlReturn_t rc = NVML_ERROR_UNKNOWN;
    const auto m = Metrics(a, b, &rc);
    ASSERT_EQ(rc, NVML_SUCCESS);
    // Training: 95 % +- 2.5 (workload.cpp), no checkpoint dip before step 600.
    EXPECT_GE(m[kGr], 92.5);
    EXPECT_LE(m[kGr], 97.5);
    EXPECT_NEAR(m[kGr], u.gpu, 0.5);
    EXPECT_NEAR(m[kSm], 0.93 * m[kGr], 1e-9);
    EXPECT_NEAR(m[kOcc], 0.55 * 0.93 * m[kGr], 1e-9);
    EXPECT_NEAR(m[kTensor], 0.62 * m[kGr], 1e-9);
    EXPECT_EQ(m[kFp64], 0.0);
    EXPECT_NEAR(m[kFp32], 0.18 * m[kGr], 1e-9);
    EXPECT_NEAR(m[kFp16], 0.12 * m[kGr], 1e-9);
    EXPECT_NEAR(m[kDram], u.memory, 0.5);
    // nvmlDeviceGetPcieThroughput truncates to whole KB/s.
    EXPECT_NEAR(m[kPcieTx] * 1024, pcie_tx, 1.0);
    EXPECT_NEAR(m[kPcieRx] * 1024, pcie_rx, 1.0);
    // The per-link counters are whole KiB: 18 links, each up to 1 KiB short.
    EXPECT_NEAR(m[kNvlTx] * 1024, static_cast<double>(tx1 - tx0), 18.0);
    EXPECT_NEAR(m[kNvlRx], 0.97 * m[kNvlTx], 1e-6 * m[kNvlTx]);
  }
}

// An interval across several steps is their time-weighted mean: [10.25, 13.75] holds 3/4 of step
// 10, steps 11 and 12, and 3/4 of step 13.
TEST_F(Gpm, LongerIntervalIsTheMeanOfItsSteps) {
  Start(FreshShipped("dgx-h100"));
  nvmlDevice_t d = Gpu(0);
  // Simulated time only moves forward: every sample is taken in order, each in its own buffer.
  const double times[] = {10, 10.25, 11, 12, 13, 13.75, 14};
  std::vector<nvmlGpmSample_t> at;
  for (double t : times) {
    At(t);
    at.push_back(Alloc());
    ASSERT_EQ(nv.nvmlGpmSampleGet(d, at.back()), NVML_SUCCESS);
  }
  const double step10 = Metrics(at[0], at[2])[kGr], step11 = Metrics(at[2], at[3])[kGr],
               step12 = Metrics(at[3], at[4])[kGr], step13 = Metrics(at[4], at[6])[kGr];
  const double expected = (0.75 * step10 + step11 + step12 + 0.75 * step13) / 3.5;
  EXPECT_NEAR(Metrics(at[1], at[5])[kGr], expected, 1e-9);
  EXPECT_GE(expected, 92.5);
}

TEST_F(Gpm, IdleGpuIsNearZero) {
  StartYaml(
      "gpus:\n"
      "  - {profile: H100-SXM5-80GB, bus_id: \"0000:18:00.0\", workload: idle}\n");
  nvmlDevice_t d = Gpu(0);
  nvmlGpmSample_t a = Alloc(), b = Alloc();
  At(5);
  ASSERT_EQ(nv.nvmlGpmSampleGet(d, a), NVML_SUCCESS);
  At(65);
  ASSERT_EQ(nv.nvmlGpmSampleGet(d, b), NVML_SUCCESS);
  const auto m = Metrics(a, b);
  // Idle: 0 % plus 1 % on the seconds its noise is above 0.8 (workload.cpp).
  EXPECT_GE(m[kGr], 0.0);
  EXPECT_LE(m[kGr], 1.0);
  EXPECT_LE(m[kTensor], 0.3);
  EXPECT_LE(m[kSm], 0.85);
}

// MIG: each GPU instance reports on its own SMs; the whole GPU is their sum weighted by their
// share of the 132 SMs (3g.40gb 60, 2g.20gb 32, 1g.10gb 16). PCIe and NVLink are the GPU's only.
TEST_F(Gpm, MigInstancesAddUpToTheirParent) {
  Start(FreshShipped("mig-h100"));
  nvmlDevice_t d = Gpu(0);
  const unsigned gis[] = {2, 3, 9};
  const double sms[] = {60, 32, 16};
  nvmlGpmSample_t whole_a = Alloc(), whole_b = Alloc();
  std::vector<nvmlGpmSample_t> inst_a, inst_b;
  for (int i = 0; i < 3; ++i) {
    inst_a.push_back(Alloc());
    inst_b.push_back(Alloc());
  }
  At(30);
  ASSERT_EQ(nv.nvmlGpmSampleGet(d, whole_a), NVML_SUCCESS);
  for (int i = 0; i < 3; ++i) ASSERT_EQ(nv.nvmlGpmMigSampleGet(d, gis[i], inst_a[i]), NVML_SUCCESS);
  At(40);
  ASSERT_EQ(nv.nvmlGpmSampleGet(d, whole_b), NVML_SUCCESS);
  for (int i = 0; i < 3; ++i) ASSERT_EQ(nv.nvmlGpmMigSampleGet(d, gis[i], inst_b[i]), NVML_SUCCESS);
  const auto whole = Metrics(whole_a, whole_b);
  std::vector<std::vector<double>> inst;
  for (int i = 0; i < 3; ++i) inst.push_back(Metrics(inst_a[i], inst_b[i]));
  // The two training instances run the GPU's training load; the empty one nothing.
  EXPECT_GE(inst[0][kGr], 92.5);
  EXPECT_LE(inst[0][kGr], 97.5);
  EXPECT_DOUBLE_EQ(inst[1][kGr], inst[0][kGr]);
  EXPECT_EQ(inst[2][kGr], 0.0);
  EXPECT_EQ(inst[2][kTensor], 0.0);
  for (int k : {kGr, kSm, kTensor, kDram}) {
    SCOPED_TRACE(k);
    double sum = 0;
    for (int i = 0; i < 3; ++i) sum += sms[i] / 132 * inst[i][k];
    EXPECT_NEAR(whole[k], sum, 1e-9);
  }
  EXPECT_GT(whole[kPcieTx], 0.0);
  EXPECT_TRUE(std::isnan(inst[0][kPcieTx]));
  EXPECT_TRUE(std::isnan(inst[0][kNvlRx]));
  nvmlGpmSample_t x = Alloc();
  EXPECT_EQ(nv.nvmlGpmMigSampleGet(d, 7, x), NVML_ERROR_NOT_FOUND);
  EXPECT_EQ(nv.nvmlGpmMigSampleGet(Gpu(1), 2, x), NVML_ERROR_NOT_SUPPORTED);  // GPU1 is not in MIG mode
}

TEST_F(Gpm, BadRequestsAreRefused) {
  Start(FreshShipped("dgx-h100"));
  nvmlDevice_t d0 = Gpu(0), d1 = Gpu(1);
  nvmlGpmSample_t a = Alloc(), b = Alloc(), empty = Alloc();
  At(3);
  ASSERT_EQ(nv.nvmlGpmSampleGet(d0, a), NVML_SUCCESS);
  At(4);
  ASSERT_EQ(nv.nvmlGpmSampleGet(d0, b), NVML_SUCCESS);
  nvmlReturn_t rc = NVML_SUCCESS;
  Metrics(b, a, &rc);  // swapped: a negative interval
  EXPECT_EQ(rc, NVML_ERROR_INVALID_ARGUMENT);
  Metrics(a, a, &rc);
  EXPECT_EQ(rc, NVML_ERROR_INVALID_ARGUMENT);
  Metrics(a, empty, &rc);  // never filled
  EXPECT_EQ(rc, NVML_ERROR_INVALID_ARGUMENT);
  Metrics(a, reinterpret_cast<nvmlGpmSample_t>(&rc), &rc);  // not a sample
  EXPECT_EQ(rc, NVML_ERROR_INVALID_ARGUMENT);
  At(5);
  ASSERT_EQ(nv.nvmlGpmSampleGet(d1, b), NVML_SUCCESS);
  Metrics(a, b, &rc);  // samples of two GPUs
  EXPECT_EQ(rc, NVML_ERROR_INVALID_ARGUMENT);

  nvmlGpmMetricsGet_t g{};
  g.version = 2;
  g.sample1 = a;
  g.sample2 = b;
  EXPECT_EQ(nv.nvmlGpmMetricsGet(&g), NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
  g.version = NVML_GPM_METRICS_GET_VERSION;
  g.numMetrics = NVML_GPM_METRIC_MAX + 1;
  EXPECT_EQ(nv.nvmlGpmMetricsGet(&g), NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(nv.nvmlGpmMetricsGet(nullptr), NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(nv.nvmlGpmSampleAlloc(nullptr), NVML_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(nv.nvmlGpmSampleFree(nullptr), NVML_ERROR_INVALID_ARGUMENT);
  // An id the simulator does not model answers NOT_SUPPORTED in its own entry, not for the call.
  At(6);
  ASSERT_EQ(nv.nvmlGpmSampleGet(d0, b), NVML_SUCCESS);
  g = {};
  g.version = NVML_GPM_METRICS_GET_VERSION;
  g.sample1 = a;
  g.sample2 = b;
  g.numMetrics = 2;
  g.metrics[0].metricId = NVML_GPM_METRIC_SM_UTIL;
  g.metrics[1].metricId = 30;  // NVDEC 0
  ASSERT_EQ(nv.nvmlGpmMetricsGet(&g), NVML_SUCCESS);
  EXPECT_EQ(g.metrics[0].nvmlReturn, NVML_SUCCESS);
  EXPECT_EQ(g.metrics[1].nvmlReturn, NVML_ERROR_NOT_SUPPORTED);
}

}  // namespace
}  // namespace simtest
