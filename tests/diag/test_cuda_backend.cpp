// The production loader of the CUDA part (cuda_backend.cpp) over a stub part (stub_cuda_part.cpp):
// each answer of the "driver" gives its state and reason, and a ready part's calls, errors and
// callbacks reach the caller as they should.
#include <gtest/gtest.h>

#include <cstdlib>

#include "diag/gpu_backend.h"

using namespace gw::diag;

namespace {
struct StubMode {
  explicit StubMode(const char* m) { setenv("GW_STUB_PART", m, 1); }
  ~StubMode() { unsetenv("GW_STUB_PART"); }
};
std::string stateOf(const char* m) {
  StubMode s(m);
  auto b = openCudaBackend(GW_TEST_STUB_PART);
  return std::to_string(static_cast<int>(b->state())) + " " + b->reason();
}
}  // namespace

TEST(CudaBackend, EachDriverAnswerGivesItsStateAndReason) {
  const std::string part = GW_TEST_STUB_PART;
  EXPECT_EQ(stateOf("ready"), "0 ready (" + part + ", 2 device(s))");
  EXPECT_EQ(stateOf("nodriver"), "3 no GPU (NVIDIA driver library not found: cannot open shared object file)");
  EXPECT_EQ(stateOf("nodevice"), "4 no GPU (CUDA sees no device)");
  EXPECT_EQ(stateOf("nodevice100"), "4 no GPU (cudaGetDeviceCount: no CUDA-capable device is detected)");
  EXPECT_EQ(stateOf("stub34"), "4 no GPU (CUDA driver is a stub library)");
  EXPECT_EQ(stateOf("broken"), "5 CUDA cannot initialise: cudaGetDeviceCount: CUDA driver version is insufficient");
  EXPECT_EQ(stateOf("codeonly"), "5 CUDA cannot initialise: error 999");
  EXPECT_EQ(stateOf("abi"), "2 CUDA part " + part + " has ABI version " + std::to_string(GWCUDA_ABI_VERSION + 1) +
                                ", expected " + std::to_string(GWCUDA_ABI_VERSION));
}

TEST(CudaBackend, AReadyPartsCallsAndErrors) {
  StubMode s("ready");
  auto b = openCudaBackend(GW_TEST_STUB_PART);
  ASSERT_EQ(b->state(), BackendState::Ready) << b->reason();
  auto devs = b->devices();
  ASSERT_TRUE(devs.ok()) << devs.error();
  ASSERT_EQ(devs->size(), 2u);
  EXPECT_STREQ((*devs)[0].pci_bus_id, "0000:17:00.0");
  EXPECT_STREQ((*devs)[1].pci_bus_id, "0000:18:00.0");
  EXPECT_EQ(b->vectorAdd(0, 4096)->n, 4096u);
  EXPECT_EQ(b->vectorAdd(1, 16).error(), "cudaMalloc(d_a): out of memory");
  EXPECT_EQ(b->vectorAdd(2, 16).error(), "error 7");
  const auto bw = b->hostBandwidth(1, 1024, 3);
  ASSERT_TRUE(bw.ok());
  EXPECT_EQ(bw->bytes, 1024u);
  EXPECT_EQ(bw->iterations, 3);
  EXPECT_EQ(bw->h2d_gbps, 11.0);
  const auto p2p = b->p2pBandwidth(1, 0, 2048, 5);
  EXPECT_EQ(p2p->src, 1);
  EXPECT_EQ(p2p->dst, 0);
  EXPECT_EQ(p2p->gbps, 2048.0);
  EXPECT_EQ(p2p->avg_gbps, 5.0);
  const auto triad = b->streamTriad(0, 4096, 20);
  EXPECT_EQ(triad->bytes_per_array, 4096u);
  EXPECT_EQ(triad->iterations, 20);
}

// The progress callback stops the part when the caller says so; no callback never stops it. The
// power controller's duty reaches the part; no controller asks full load.
TEST(CudaBackend, CallbacksReachThePart) {
  StubMode s("ready");
  auto b = openCudaBackend(GW_TEST_STUB_PART);
  ASSERT_EQ(b->state(), BackendState::Ready) << b->reason();
  double seen = -1;
  auto m = b->memtest(0, 0.9, GW_MEMTEST_ALL, 6, [&](double f) {
    seen = f;
    return true;
  });
  ASSERT_TRUE(m.ok()) << m.error();
  EXPECT_EQ(seen, 0.5);
  EXPECT_EQ(m->bytes_tested, 900u);
  EXPECT_EQ(m->rounds, GW_MEMTEST_ALL);
  EXPECT_EQ(m->seconds, 6);
  EXPECT_EQ(b->memtest(0, 0.9, 1, 6, [](double) { return false; }).error(), "memtest: cancelled");
  EXPECT_TRUE(b->memtest(0, 0.9, 1, 6, ProgressFn{}).ok());
  const auto g = b->gemmBurn(0, 60, GW_GEMM_BF16, [](double, const GwGemmResult&) { return true; });
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->precision, GW_GEMM_BF16);
  EXPECT_EQ(g->seconds, 60);
  EXPECT_EQ(b->gemmBurn(0, 60, GW_GEMM_BF16, [](double, const GwGemmResult&) { return false; }).error(),
            "gemm: cancelled");
  double asked = -1;
  const auto p = b->targetedPower(1, 12, GW_GEMM_FP16, [&](double f) {
    asked = f;
    return 0.375;
  });
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(asked, 0.25);
  EXPECT_EQ(p->mean_duty, 0.375);
  EXPECT_EQ(p->seconds, 12);
  EXPECT_EQ(b->targetedPower(1, 12, GW_GEMM_FP16, PowerControlFn{})->mean_duty, 1.0);
}

TEST(CudaBackend, ANotReadyPartRefusesEveryCallWithItsReason) {
  StubMode s("nodevice");
  auto b = openCudaBackend(GW_TEST_STUB_PART);
  const std::string why = "no GPU (CUDA sees no device)";
  EXPECT_EQ(b->devices().error(), why);
  EXPECT_EQ(b->vectorAdd(0, 1).error(), why);
  EXPECT_EQ(b->hostBandwidth(0, 1, 1).error(), why);
  EXPECT_EQ(b->p2pBandwidth(0, 1, 1, 1).error(), why);
  EXPECT_EQ(b->streamTriad(0, 1, 1).error(), why);
  EXPECT_EQ(b->gemmBurn(0, 1, 0, GemmProgressFn{}).error(), why);
  EXPECT_EQ(b->targetedPower(0, 1, 0, PowerControlFn{}).error(), why);
  EXPECT_EQ(b->memtest(0, 0.5, 1, 1, ProgressFn{}).error(), why);
}

TEST(CudaBackend, DevicePropertiesThatFailAreTheListsError) {
  StubMode s("badprops");
  auto b = openCudaBackend(GW_TEST_STUB_PART);
  ASSERT_EQ(b->state(), BackendState::Ready) << b->reason();
  EXPECT_EQ(b->devices().error(), "cudaGetDeviceProperties(1): out of memory");
}
