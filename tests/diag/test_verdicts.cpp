#include <gtest/gtest.h>

#include "diag/verdicts.h"

using namespace gw;
using namespace gw::diag;

namespace {
const SkuThresholds& h100() { return ThresholdTable::builtin().lookup("", 0x2330); }
bool mentions(const Check& c, const std::string& s) {
  if (c.summary.find(s) != std::string::npos) return true;
  for (const auto& e : c.evidence)
    if (e.find(s) != std::string::npos) return true;
  return false;
}
}  // namespace

TEST(Verdicts, PcieTheoreticalRates) {
  EXPECT_NEAR(pcieTheoreticalGBps(3, 16), 15.75, 0.01);
  EXPECT_NEAR(pcieTheoreticalGBps(4, 16), 31.5, 0.01);
  EXPECT_NEAR(pcieTheoreticalGBps(5, 16), 63.0, 0.02);
  EXPECT_NEAR(pcieTheoreticalGBps(1, 16), 4.0, 1e-9);
  EXPECT_NEAR(pcieTheoreticalGBps(4, 8), 15.75, 0.01);
  EXPECT_EQ(pcieTheoreticalGBps(0, 16), 0);
  EXPECT_EQ(pcieTheoreticalGBps(7, 16), 0);
}

TEST(Verdicts, HostBandwidthAgainstTheLink) {
  PcieLink gen5{5, 16, 5, 16};
  auto ok = judgeHostBandwidth(0, GwBandwidthResult{1, 1, 55, 53, 0, 0}, gen5, h100());
  EXPECT_EQ(ok.verdict, Verdict::Pass) << ok.summary;
  auto warn = judgeHostBandwidth(0, GwBandwidthResult{1, 1, 42, 53, 0, 0}, gen5, h100());
  EXPECT_EQ(warn.verdict, Verdict::Warn);  // 42/63 = 67 %
  auto fail = judgeHostBandwidth(0, GwBandwidthResult{1, 1, 25, 26, 0, 0}, gen5, h100());
  EXPECT_EQ(fail.verdict, Verdict::Fail);  // a Gen5 card running at Gen4 speed
  PcieLink narrowed{5, 8, 5, 16};
  auto width = judgeHostBandwidth(0, GwBandwidthResult{1, 1, 55, 53, 0, 0}, narrowed, h100());
  EXPECT_EQ(width.verdict, Verdict::Fail);
  EXPECT_TRUE(mentions(width, "x8 of x16"));
  PcieLink low_gen{4, 16, 5, 16};
  EXPECT_EQ(judgeHostBandwidth(0, GwBandwidthResult{1, 1, 55, 53, 0, 0}, low_gen, h100()).verdict, Verdict::Warn);
  auto unknown = judgeHostBandwidth(0, GwBandwidthResult{1, 1, 5, 5, 0, 0}, PcieLink{}, h100());
  EXPECT_EQ(unknown.verdict, Verdict::Pass);
  auto err = judgeHostBandwidth(0, Status::Error("cudaMemcpyAsync: unspecified launch failure"), gen5, h100());
  EXPECT_EQ(err.verdict, Verdict::Fail);
  EXPECT_TRUE(mentions(err, "cudaMemcpyAsync"));
}

TEST(Verdicts, HostBandwidthSummarySaysTheRatesAndTheShareOfTheLink) {
  // 53 GB/s of Gen5 x16's 63.02 GB/s is 84.1 %: the summary rounds it to a whole percent.
  PcieLink gen5{5, 16, 5, 16};
  auto c = judgeHostBandwidth(0, GwBandwidthResult{1, 1, 55, 53, 0, 0}, gen5, h100());
  EXPECT_EQ(c.summary, "H2D 55.0 GB/s, D2H 53.0 GB/s of 63.02 GB/s theoretical (Gen5 x16), 84 %");
  // 31.5 of Gen4 x16's 31.51 GB/s: 99.97 % reads as 100 %, not 101 %.
  PcieLink gen4{4, 16, 4, 16};
  auto full = judgeHostBandwidth(0, GwBandwidthResult{1, 1, 31.5, 31.5, 0, 0}, gen4, h100());
  EXPECT_EQ(full.summary, "H2D 31.5 GB/s, D2H 31.5 GB/s of 31.51 GB/s theoretical (Gen4 x16), 100 %");
}

TEST(Verdicts, MemtestErrorsFailWithEvidence) {
  GwMemtestResult r{};
  r.bytes_tested = size_t(64) << 30;
  r.rounds = 2;
  EXPECT_EQ(judgeMemtest(0, r).verdict, Verdict::Pass);
  r.errors = 3;
  r.errors_by_pattern[1] = 3;
  r.recorded = 1;
  r.first_errors[0] = GwMemError{0x1000, 0xFFFFFFFF00000000ull, 0xFFFFFFFF00000400ull, 2, 0};
  auto c = judgeMemtest(0, r);
  EXPECT_EQ(c.verdict, Verdict::Fail);
  EXPECT_TRUE(mentions(c, "own address: 3 errors"));
  EXPECT_TRUE(mentions(c, "xor 0x0000000000000400"));
  EXPECT_NE(c.action.find("replace"), std::string::npos);
}

TEST(Verdicts, VectorAddMustBeExact) {
  GwVecAddResult r{};
  r.n = 100;
  EXPECT_EQ(judgeVectorAdd(0, r).verdict, Verdict::Pass);
  r.mismatches = 1;
  r.max_abs_error = 1;
  EXPECT_EQ(judgeVectorAdd(0, r).verdict, Verdict::Fail);
  auto e = judgeVectorAdd(0, Status::Error("cudaMalloc(...): out of memory"));
  EXPECT_EQ(e.verdict, Verdict::Fail);
  EXPECT_TRUE(mentions(e, "cudaMalloc"));
}

TEST(Verdicts, PeerComparisonFindsTheStraggler) {
  auto s = comparePeers({100, 100, 100, 80}, 5, 15);
  EXPECT_EQ(s[0].verdict, Verdict::Pass);
  EXPECT_LT(s[0].slower_pct, 0);  // faster than peers that include the straggler
  EXPECT_EQ(s[3].verdict, Verdict::Fail);
  EXPECT_NEAR(s[3].slower_pct, 20, 1e-9);
  auto w = comparePeers({100, 92}, 5, 15);
  EXPECT_EQ(w[1].verdict, Verdict::Warn);
  auto alone = comparePeers({50}, 5, 15);
  EXPECT_FALSE(alone[0].has_peers);
  EXPECT_EQ(alone[0].verdict, Verdict::Pass);
}

namespace {
GemmInput gemmRun(int gpu, double gflops, uint64_t failed = 0, uint64_t checksum = 7) {
  GwGemmResult g{};
  g.precision = GW_GEMM_FP16;
  g.used_cublas = 1;
  g.n = 8192;
  g.iterations = 500;
  g.failed_iterations = failed;
  g.miscompared_elements = failed * 10;
  g.checksum = checksum;
  g.gflops = gflops;
  return GemmInput{gpu, "NVIDIA H100 80GB HBM3", h100(), "fp16", g};
}
}  // namespace

TEST(Verdicts, GemmBurnMiscompareSlownessAndDisagreement) {
  auto cs = judgeGemmBurn({gemmRun(0, 700000), gemmRun(1, 700000, 2), gemmRun(2, 560000), gemmRun(3, 610000)});
  ASSERT_EQ(cs.size(), 4u);
  EXPECT_EQ(cs[0].verdict, Verdict::Pass) << cs[0].summary;
  // 700000 GFLOP/s is 700.0 TFLOPS (not 700.7): the summary is what an operator compares.
  EXPECT_EQ(cs[0].summary, "700.0 TFLOPS fp16 (cuBLAS), 500 GEMMs compared");
  EXPECT_EQ(cs[3].summary.substr(0, 39), "610.0 TFLOPS fp16 (cuBLAS), 500 GEMMs c");
  EXPECT_EQ(cs[1].verdict, Verdict::Fail);
  EXPECT_TRUE(mentions(cs[1], "MISCOMPARED"));
  EXPECT_EQ(cs[2].verdict, Verdict::Fail);  // ~16 % slower than peers' mean
  EXPECT_TRUE(mentions(cs[2], "slower than the mean"));
  EXPECT_EQ(cs[3].verdict, Verdict::Warn);  // ~6.6 % slower

  auto minority = judgeGemmBurn({gemmRun(0, 700000, 0, 1), gemmRun(1, 700000, 0, 1), gemmRun(2, 700000, 0, 9)});
  EXPECT_EQ(minority[0].verdict, Verdict::Pass);
  EXPECT_EQ(minority[2].verdict, Verdict::Fail);
  auto tie = judgeGemmBurn({gemmRun(0, 700000, 0, 1), gemmRun(1, 700000, 0, 2)});
  EXPECT_EQ(tie[0].verdict, Verdict::Warn);
  EXPECT_EQ(tie[1].verdict, Verdict::Warn);

  auto single = judgeGemmBurn({gemmRun(0, 300000)});  // 300 of 700 expected: below 60 %
  EXPECT_EQ(single[0].verdict, Verdict::Warn);
  auto err = judgeGemmBurn({GemmInput{0, "x", h100(), "fp16", Status::Error("Xid")}});
  EXPECT_EQ(err[0].verdict, Verdict::Fail);
}

TEST(Verdicts, GemmGroupsOnlyLikeGpus) {
  auto a = gemmRun(0, 700000);
  auto b = gemmRun(1, 150000);
  b.name = "NVIDIA L40S";
  b.sku = ThresholdTable::builtin().lookup("NVIDIA L40S", 0);
  auto cs = judgeGemmBurn({a, b});
  EXPECT_EQ(cs[0].verdict, Verdict::Pass);
  EXPECT_FALSE(cs[1].measured.contains("peer_mean_gflops"));
}

TEST(Verdicts, TriadAgainstPeak) {
  EXPECT_EQ(judgeTriad(0, GwTriadResult{1, 1, 3000, 2900, 0}, 3350, h100()).verdict, Verdict::Pass);
  EXPECT_EQ(judgeTriad(0, GwTriadResult{1, 1, 2500, 2400, 0}, 3350, h100()).verdict, Verdict::Warn);
  EXPECT_EQ(judgeTriad(0, GwTriadResult{1, 1, 2000, 1900, 0}, 3350, h100()).verdict, Verdict::Fail);
  EXPECT_EQ(judgeTriad(0, GwTriadResult{1, 1, 3000, 2900, 5}, 3350, h100()).verdict, Verdict::Fail);
  EXPECT_EQ(judgeTriad(0, GwTriadResult{1, 1, 10, 10, 0}, 0, h100()).verdict, Verdict::Pass);
}

TEST(Verdicts, P2P) {
  const auto& t = h100();
  EXPECT_EQ(judgeP2P(0, 1, GwP2PResult{0, 1, 1, 380, 370}, true, 360, t).verdict, Verdict::Pass);
  EXPECT_EQ(judgeP2P(0, 1, GwP2PResult{0, 1, 1, 100, 90}, true, 360, t).verdict, Verdict::Fail);
  EXPECT_EQ(judgeP2P(0, 1, GwP2PResult{0, 1, 1, 10, 9}, false, 63, t).verdict, Verdict::Warn);
  EXPECT_EQ(judgeP2P(0, 1, GwP2PResult{0, 1, 0, 0, 0}, false, 63, t).verdict, Verdict::Skip);
  auto nolink = judgeP2P(0, 1, GwP2PResult{0, 1, 0, 0, 0}, true, 360, t);
  EXPECT_EQ(nolink.verdict, Verdict::Fail);
  EXPECT_EQ(nolink.gpus_involved, (std::vector<int>{0, 1}));
}

TEST(Verdicts, TargetedPower) {
  const auto& t = h100();
  GwPowerResult r{};
  r.iterations = 10;
  r.mean_duty = 0.7;
  PowerRun ok{700, 595, 590, 610, 20, ""};
  EXPECT_EQ(judgeTargetedPower(0, r, ok, t).verdict, Verdict::Pass);
  PowerRun low{700, 595, 540, 560, 20, ""};
  EXPECT_EQ(judgeTargetedPower(0, r, low, t).verdict, Verdict::Warn);
  PowerRun very_low{700, 595, 300, 320, 20, ""};
  auto f = judgeTargetedPower(0, r, very_low, t);
  EXPECT_EQ(f.verdict, Verdict::Fail);
  EXPECT_NE(f.action.find("power cable"), std::string::npos);
  PowerRun unread{700, 595, 0, 0, 0, "power draw: not supported"};
  EXPECT_EQ(judgeTargetedPower(0, r, unread, t).verdict, Verdict::Warn);
  r.failed_iterations = 1;
  EXPECT_EQ(judgeTargetedPower(0, r, ok, t).verdict, Verdict::Fail);
}

TEST(Verdicts, WatcherFindings) {
  const auto& t = h100();
  WatchSummary w;
  w.samples = 3;
  w.temp_known = true;
  w.max_temp_c = 70;
  EXPECT_EQ(judgeWatch(0, w, t).verdict, Verdict::Pass);
  WatchSummary hot = w;
  hot.max_temp_c = 91;
  hot.hottest_during = "gemm_burn";
  auto h = judgeWatch(0, hot, t);
  EXPECT_EQ(h.verdict, Verdict::Fail);
  EXPECT_TRUE(mentions(h, "91 C during gemm_burn"));
  WatchSummary x = w;
  x.xids = {{"memtest", 79}};
  auto xc = judgeWatch(0, x, t);
  EXPECT_EQ(xc.verdict, Verdict::Fail);
  EXPECT_TRUE(mentions(xc, "new Xid 79 (GPU has fallen off the bus) during memtest"));
  WatchSummary dbe = w;
  dbe.dbe_known = true;
  dbe.dbe_start = 0;
  dbe.dbe_end = 2;
  EXPECT_EQ(judgeWatch(0, dbe, t).verdict, Verdict::Fail);
  WatchSummary slow = w;
  slow.reasons_seen = 0x40 | 0x4;
  auto sc = judgeWatch(0, slow, t);
  EXPECT_EQ(sc.verdict, Verdict::Warn);
  EXPECT_TRUE(mentions(sc, "HW thermal slowdown"));
  WatchSummary capped = w;
  capped.reasons_seen = 0x4;
  EXPECT_EQ(judgeWatch(0, capped, t).verdict, Verdict::Pass);
}

TEST(Verdicts, NvmlStateChecks) {
  const auto& t = h100();
  Status unsupported = Status::Nvml(kNvmlNotSupported, "Not Supported");
  EXPECT_EQ(judgeRetiredPages(0, unsupported, t).verdict, Verdict::Skip);
  EXPECT_EQ(judgeRetiredPages(0, RetiredPages{2, 1, false}, t).verdict, Verdict::Pass);
  EXPECT_EQ(judgeRetiredPages(0, RetiredPages{2, 1, true}, t).verdict, Verdict::Warn);
  EXPECT_EQ(judgeRetiredPages(0, RetiredPages{40, 30, false}, t).verdict, Verdict::Fail);
  // A GPU that stopped answering fails; any other read error only warns.
  EXPECT_EQ(judgeRetiredPages(0, Status::Nvml(15, "GPU is lost"), t).verdict, Verdict::Fail);
  EXPECT_EQ(judgeRetiredPages(0, Status::Nvml(16, "reset required"), t).verdict, Verdict::Fail);
  EXPECT_EQ(judgeRetiredPages(0, Status::Nvml(999, "unknown error"), t).verdict, Verdict::Warn);
  EXPECT_EQ(judgeRowRemap(0, RowRemap{1, 0, false, false}).verdict, Verdict::Pass);
  EXPECT_EQ(judgeRowRemap(0, RowRemap{0, 1, true, false}).verdict, Verdict::Warn);
  EXPECT_EQ(judgeRowRemap(0, RowRemap{0, 1, false, true}).verdict, Verdict::Fail);
  EXPECT_EQ(judgeEcc(0, EccCounts{0, 3}).verdict, Verdict::Pass);
  EXPECT_EQ(judgeEcc(0, EccCounts{1, 3}).verdict, Verdict::Warn);
  EXPECT_EQ(judgeProcesses(0, std::vector<GpuProcess>{}).verdict, Verdict::Pass);
  auto p = judgeProcesses(0, std::vector<GpuProcess>{{1234, "python", 2u << 30}});
  EXPECT_EQ(p.verdict, Verdict::Warn);
  EXPECT_TRUE(mentions(p, "pid 1234 (python) holds 2048 MiB"));
  EXPECT_EQ(judgePersistence(0, false).verdict, Verdict::Warn);
  EXPECT_EQ(judgeInforom(0, false).verdict, Verdict::Fail);
  EXPECT_EQ(judgeInforom(0, Status::Nvml(14, "Corrupted infoROM")).verdict, Verdict::Fail);
  EXPECT_EQ(judgePcieLink(0, PcieLink{1, 16, 5, 16}, t).verdict, Verdict::Pass);  // idle
  EXPECT_EQ(judgePcieLink(0, PcieLink{5, 8, 5, 16}, t).verdict, Verdict::Warn);
  EXPECT_EQ(judgePcieLink(0, PcieLink{4, 16, 4, 16}, t).verdict, Verdict::Warn);  // Gen5 card
}

// The evidence names the band the rate fell in, from the thresholds (70 % warns, 50 % fails).
TEST(Verdicts, P2PEvidenceNamesTheBandItFellIn) {
  const auto& t = h100();
  const auto warn = judgeP2P(0, 1, GwP2PResult{0, 1, 1, 40, 38}, false, 63, t);  // 63 % of 63 GB/s
  EXPECT_EQ(warn.verdict, Verdict::Warn);
  EXPECT_EQ(warn.evidence, (std::vector<std::string>{"below 70 % of the expected rate"}));
  const auto slow = judgeP2P(0, 1, GwP2PResult{0, 1, 1, 20, 19}, false, 63, t);  // 32 %
  EXPECT_EQ(slow.verdict, Verdict::Warn) << "over PCIe the path decides as much as the card";
  EXPECT_EQ(slow.evidence, (std::vector<std::string>{"below 50 % of the expected rate"}));
  EXPECT_EQ(judgeP2P(0, 1, GwP2PResult{0, 1, 1, 20, 19}, true, 63, t).verdict, Verdict::Fail);
}

// NVML gives power limits in milliwatts: a 312.5 W cap is said as such, not rounded to 313 W.
TEST(Verdicts, TargetedPowerSummarySaysTheLimitWithItsFraction) {
  GwPowerResult r{};
  r.iterations = 10;
  r.mean_duty = 0.7;
  PowerRun p{312.5, 265.6, 262, 270, 20, ""};
  const auto c = judgeTargetedPower(0, r, p, h100());
  EXPECT_EQ(c.verdict, Verdict::Pass) << c.summary;
  EXPECT_EQ(c.summary, "262 W mean of 266 W target (85 % of the 312.5 W limit), 99 %");
}

namespace gw::diag {
namespace {

// The watch check's measured reasons are what the watcher saw: nothing seen is 0, and the
// evidence names a slowdown by the one table of reason names (knowledge/clock_events.h).
TEST(Verdicts, WatchReasonsAreWhatWasSeen) {
  WatchSummary quiet;
  quiet.samples = 10;
  EXPECT_EQ(judgeWatch(0, quiet, ThresholdTable::builtin().generic()).measured["clock_event_reasons"], 0);
  WatchSummary slowed = quiet;
  slowed.reasons_seen = 0x4 | 0x40;
  const Check c = judgeWatch(0, slowed, ThresholdTable::builtin().generic());
  EXPECT_EQ(c.measured["clock_event_reasons"], 0x44);
  EXPECT_EQ(c.verdict, Verdict::Warn);
  EXPECT_EQ(c.evidence, (std::vector<std::string>{"clock event reasons seen: HW thermal slowdown",
                                                  "SW power cap reached (normal at full load)"}));
}

}  // namespace
}  // namespace gw::diag
