#include <gtest/gtest.h>

#include <cmath>

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

// ---- The mutation pass over verdicts.cpp: every verdict path, each threshold at its configured
// value and one representable step either side, and the words of each check compared whole.
namespace {

// verdict | summary, then each line of evidence: what an operator reads, whole.
std::string show(const Check& c) {
  std::string s = std::string(verdictName(c.verdict)) + " | " + c.summary;
  for (const auto& e : c.evidence) s += "\n  - " + e;
  return s;
}
const SkuThresholds& generic() { return ThresholdTable::builtin().generic(); }
double below(double v) { return std::nextafter(v, 0.0); }
double above(double v) { return std::nextafter(v, 1e9); }
SkuThresholds parsedSku(const std::string& defaults) {
  auto t = ThresholdTable::parse("version: 1\ndefaults: {" + defaults + "}\n", "t");
  EXPECT_TRUE(t.ok()) << t.error();
  return t.ok() ? t->generic() : SkuThresholds{};
}

}  // namespace

// A query that failed: "not supported" skips, a lost GPU (NVML 15, 16) fails, any other error warns.
TEST(VerdictsExact, UnreadableOfEachKind) {
  const auto link = [](int code) { return show(judgePcieLink(3, Status::Nvml(code, "the message"), generic())); };
  EXPECT_EQ(link(kNvmlNotSupported), "skip | not supported on this GPU");
  EXPECT_EQ(link(15), "fail | GPU does not answer: the message\n  - the message");
  EXPECT_EQ(link(16), "fail | GPU does not answer: the message\n  - the message");
  EXPECT_EQ(link(14), "warn | could not be read: the message");
  EXPECT_EQ(link(17), "warn | could not be read: the message");
  EXPECT_EQ(judgePcieLink(3, Status::Nvml(15, "x"), generic()).gpu, 3);
  EXPECT_FALSE(isNotSupported(Status::Ok()));
  EXPECT_TRUE(isNotSupported(Status::Nvml(kNvmlNotSupported, "n/a")));
  EXPECT_FALSE(isNotSupported(Status::Nvml(2, "invalid argument")));
  EXPECT_EQ(show(judgePersistence(0, Status::Nvml(999, "unknown"))), "warn | could not be read: unknown");
  EXPECT_EQ(show(judgeProcesses(0, Status::Nvml(15, "lost"))), "fail | GPU does not answer: lost\n  - lost");
  EXPECT_EQ(show(judgeEcc(0, Status::Nvml(kNvmlNotSupported, "n/a"))), "skip | ECC not supported or disabled");
  EXPECT_EQ(show(judgeEcc(0, Status::Nvml(15, "lost"))), "fail | GPU does not answer: lost\n  - lost");
  EXPECT_EQ(show(judgeRowRemap(0, Status::Nvml(kNvmlNotSupported, "n/a"))),
            "skip | not supported (before Ampere, or no HBM ECC)");
  EXPECT_EQ(show(judgeRowRemap(0, Status::Nvml(16, "reset"))), "fail | GPU does not answer: reset\n  - reset");
  EXPECT_EQ(show(judgeRetiredPages(0, Status::Nvml(kNvmlNotSupported, "n/a"), generic())),
            "skip | not supported (GPUs since Ampere remap rows instead)");
  EXPECT_EQ(show(judgeRetiredPages(0, Status::Nvml(15, "lost"), generic())),
            "fail | GPU does not answer: lost\n  - lost");
  // The InfoROM's own error (14) is a corrupt InfoROM; other codes are read errors.
  EXPECT_EQ(show(judgeInforom(0, Status::Nvml(14, "Corrupted infoROM"))),
            "fail | InfoROM corrupted\n  - Corrupted infoROM");
  EXPECT_EQ(show(judgeInforom(0, Status::Nvml(13, "function not found"))),
            "warn | could not be read: function not found");
  EXPECT_EQ(show(judgeInforom(0, Status::Nvml(15, "lost"))), "fail | GPU does not answer: lost\n  - lost");
  EXPECT_EQ(show(judgeInforom(0, true)), "pass | valid");
  EXPECT_EQ(show(judgeInforom(0, false)),
            "fail | INVALID\n  - InfoROM checksum validation failed; ECC and retirement records are not trustworthy");
  EXPECT_EQ(show(judgePersistence(0, true)), "pass | enabled");
  EXPECT_EQ(show(judgePersistence(0, false)),
            "warn | disabled\n  - without persistence the driver tears the GPU down between jobs: slow starts, lost "
            "state");
}

TEST(VerdictsExact, PcieTheoreticalRatePerGenerationAndItsEdges) {
  EXPECT_EQ(pcieTheoreticalGBps(1, 1), 0.25);
  EXPECT_EQ(pcieTheoreticalGBps(2, 1), 0.5);
  EXPECT_EQ(pcieTheoreticalGBps(3, 1), 0.984615);
  EXPECT_EQ(pcieTheoreticalGBps(4, 1), 1.969231);
  EXPECT_EQ(pcieTheoreticalGBps(5, 1), 3.938462);
  EXPECT_EQ(pcieTheoreticalGBps(6, 1), 7.876923);
  EXPECT_EQ(pcieTheoreticalGBps(6, 16), 7.876923 * 16);
  EXPECT_EQ(pcieTheoreticalGBps(0, 16), 0);
  EXPECT_EQ(pcieTheoreticalGBps(-1, 16), 0);
  EXPECT_EQ(pcieTheoreticalGBps(7, 16), 0);
  EXPECT_EQ(pcieTheoreticalGBps(7, 0), 0);
  EXPECT_EQ(pcieTheoreticalGBps(5, 0), 0);
  EXPECT_EQ(pcieTheoreticalGBps(5, -4), 0);
}

// The idle link: a narrower link warns, a slot or card below the SKU's generation or width warns,
// unknown (0) values are never judged, and a lower generation at idle is only a note.
TEST(VerdictsExact, PcieLinkEveryPath) {
  const auto& h = h100();  // Gen5 x16
  auto link = [&](PcieLink l, const SkuThresholds& t) { return show(judgePcieLink(0, l, t)); };
  EXPECT_EQ(link({5, 16, 5, 16}, h), "pass | Gen5 x16 (max Gen5 x16)");
  EXPECT_EQ(link({0, 0, 0, 0}, h), "pass | Gen0 x0 (max Gen0 x0)");
  EXPECT_EQ(link({5, 0, 5, 16}, h), "pass | Gen5 x0 (max Gen5 x16)");
  EXPECT_EQ(link({5, 1, 5, 16}, h),
            "warn | Gen5 x1 (max Gen5 x16)\n  - link width x1 below its maximum x16 (a degraded link)");
  EXPECT_EQ(link({1, 16, 5, 16}, h),
            "pass | Gen1 x16 (max Gen5 x16)\n  - generation below maximum at idle is normal power saving");
  EXPECT_EQ(link({0, 16, 5, 16}, h), "pass | Gen0 x16 (max Gen5 x16)");
  EXPECT_EQ(link({1, 16, 1, 16}, h),
            "warn | Gen1 x16 (max Gen1 x16)\n  - slot or card limited to Gen1; H100 SXM5 80GB is a Gen5 card");
  EXPECT_EQ(link({4, 16, 4, 16}, generic()), "pass | Gen4 x16 (max Gen4 x16)");  // generic: no expectation
  EXPECT_EQ(link({5, 1, 5, 1}, h), "warn | Gen5 x1 (max Gen5 x1)\n  - link limited to x1; H100 SXM5 80GB expects x16");
  EXPECT_EQ(link({5, 8, 5, 8}, generic()), "pass | Gen5 x8 (max Gen5 x8)");
  const Check all = judgePcieLink(0, PcieLink{3, 4, 4, 8}, h);
  EXPECT_EQ(show(all),
            "warn | Gen3 x4 (max Gen4 x8)\n  - link width x4 below its maximum x8 (a degraded link)\n"
            "  - slot or card limited to Gen4; H100 SXM5 80GB is a Gen5 card\n"
            "  - link limited to x8; H100 SXM5 80GB expects x16\n"
            "  - generation below maximum at idle is normal power saving");
  EXPECT_EQ(all.measured, nlohmann::json::parse(R"({"cur_gen": 3, "cur_width": 4, "max_gen": 4, "max_width": 8})"));
  // A SKU that expects Gen1 x1 (the least there is) is satisfied by it.
  const SkuThresholds g1 = parsedSku("pcie_gen: 1, pcie_width: 1");
  EXPECT_EQ(link({1, 1, 1, 1}, g1), "pass | Gen1 x1 (max Gen1 x1)");
}

// Retired pages: more than the SKU's limit fails (a limit of 0: not judged), a pending retirement
// warns.
TEST(VerdictsExact, RetiredPagesAtTheLimit) {
  const auto& t = generic();
  ASSERT_EQ(t.max_retired_pages, 60u);
  EXPECT_EQ(show(judgeRetiredPages(0, RetiredPages{50, 10, false}, t)), "pass | 60 retired pages (50 SBE, 10 DBE)");
  EXPECT_EQ(show(judgeRetiredPages(0, RetiredPages{50, 11, false}, t)),
            "fail | 61 retired pages (50 SBE, 11 DBE)\n  - 61 retired pages exceed the limit of 60");
  EXPECT_EQ(show(judgeRetiredPages(0, RetiredPages{1, 0, true}, t)),
            "warn | 1 retired pages (1 SBE, 0 DBE), retirement pending\n"
            "  - a page retirement waits for the next GPU reset");
  EXPECT_EQ(show(judgeRetiredPages(0, RetiredPages{61, 0, true}, t)),
            "fail | 61 retired pages (61 SBE, 0 DBE), retirement pending\n  - 61 retired pages exceed the limit of 60");
  const auto& geforce = ThresholdTable::builtin().lookup("NVIDIA GeForce RTX 4090", 0);
  ASSERT_EQ(geforce.max_retired_pages, 0u);
  EXPECT_EQ(show(judgeRetiredPages(0, RetiredPages{500, 0, false}, geforce)),
            "pass | 500 retired pages (500 SBE, 0 DBE)");
  const SkuThresholds one = parsedSku("max_retired_pages: 1");
  EXPECT_EQ(judgeRetiredPages(0, RetiredPages{1, 0, false}, one).verdict, Verdict::Pass);
  EXPECT_EQ(judgeRetiredPages(0, RetiredPages{1, 1, false}, one).verdict, Verdict::Fail);
  EXPECT_EQ(judgeRetiredPages(0, RetiredPages{2, 3, true}, t).measured,
            nlohmann::json::parse(R"({"sbe": 2, "dbe": 3, "pending": true})"));
}

TEST(VerdictsExact, RowRemapEccAndProcesses) {
  EXPECT_EQ(show(judgeRowRemap(0, RowRemap{2, 1, false, false})),
            "pass | 3 rows remapped (1 for uncorrectable errors)");
  EXPECT_EQ(show(judgeRowRemap(0, RowRemap{0, 1, true, false})),
            "warn | 1 rows remapped (1 for uncorrectable errors), remap pending\n"
            "  - a row remap waits for the next GPU reset (Xid 63/64)");
  EXPECT_EQ(show(judgeRowRemap(0, RowRemap{0, 0, true, true})),
            "fail | 0 rows remapped (0 for uncorrectable errors), remapping FAILED\n"
            "  - row remapping failure: the GPU has no spare row left for a failing one");
  EXPECT_EQ(show(judgeEcc(0, EccCounts{0, 7})), "pass | 0 uncorrectable since driver load, 7 over the card's life");
  EXPECT_EQ(show(judgeEcc(0, EccCounts{1, 7})),
            "warn | 1 uncorrectable since driver load, 7 over the card's life\n"
            "  - uncorrectable (double-bit) ECC errors since the driver loaded");
  EXPECT_EQ(show(judgeProcesses(0, std::vector<GpuProcess>{})), "pass | no compute process");
  // MiB rounded to a whole number (half to even, as printf does): 2.5 -> 2, 3.5 -> 4.
  const auto p = judgeProcesses(0, std::vector<GpuProcess>{{11, "a", 2621440}, {22, "b", 3670016}});
  EXPECT_EQ(show(p), "warn | 2 compute process(es) on the GPU\n  - pid 11 (a) holds 2 MiB\n  - pid 22 (b) holds 4 MiB");
  EXPECT_EQ(p.measured, nlohmann::json::parse(R"([{"pid": 11, "name": "a", "used_bytes": 2621440},
      {"pid": 22, "name": "b", "used_bytes": 3670016}])"));
}

TEST(VerdictsExact, VectorAddEveryPath) {
  GwVecAddResult r{};
  r.n = 100;
  EXPECT_EQ(show(judgeVectorAdd(0, r)), "pass | vector add of 100 elements, max error 0");
  r.max_abs_error = 0.5;  // wrong by half, no element counted: still wrong
  EXPECT_EQ(show(judgeVectorAdd(0, r)),
            "fail | 0 wrong sums of 100, max error 0.500000\n  - a trivial kernel computed wrong results");
  r.max_abs_error = 0;
  r.mismatches = 1;
  EXPECT_EQ(show(judgeVectorAdd(0, r)),
            "fail | 1 wrong sums of 100, max error 0.000000\n  - a trivial kernel computed wrong results");
  r.mismatches = 2;
  r.max_abs_error = 1.0000004;
  EXPECT_EQ(judgeVectorAdd(0, r).summary, "2 wrong sums of 100, max error 1.000000");
  EXPECT_EQ(show(judgeVectorAdd(0, Status::Error("cudaMalloc: oom"))),
            "fail | CUDA error: cudaMalloc: oom\n  - cudaMalloc: oom");
}

TEST(VerdictsExact, MemtestEveryPatternAndRecord) {
  GwMemtestResult r{};
  r.bytes_tested = size_t(1) << 28;  // 0.25 GiB: one decimal, half to even
  r.rounds = 3;
  EXPECT_EQ(show(judgeMemtest(0, r)), "pass | 0 errors in 0.2 GiB, 3 round(s)");
  r.bytes_tested = size_t(3) << 28;
  EXPECT_EQ(show(judgeMemtest(0, r)), "pass | 0 errors in 0.8 GiB, 3 round(s)");
  r.errors = 1;
  r.errors_by_pattern[0] = 1;
  EXPECT_EQ(show(judgeMemtest(0, r)), "fail | 1 memory errors in 0.8 GiB\n  - walking ones/zeros: 1 errors");
  r.errors = 10;
  r.errors_by_pattern[1] = 2;
  r.errors_by_pattern[2] = 3;
  r.errors_by_pattern[3] = 4;
  r.recorded = 2;
  r.first_errors[0] = GwMemError{0x10, 0xFF, 0x0F, 1, 0};
  r.first_errors[1] = GwMemError{0x20, 0x1, 0x3, 8, 0};
  r.first_errors[2] = GwMemError{0x30, 0x7, 0x7, 8, 0};  // beyond `recorded`: not evidence
  const Check c = judgeMemtest(0, r);
  EXPECT_EQ(show(c),
            "fail | 10 memory errors in 0.8 GiB\n"
            "  - walking ones/zeros: 1 errors\n  - own address: 2 errors\n  - moving inversions: 3 errors\n"
            "  - random: 4 errors\n"
            "  - offset 0x0000000000000010: expected 0x00000000000000ff read 0x000000000000000f (xor "
            "0x00000000000000f0)\n"
            "  - offset 0x0000000000000020: expected 0x0000000000000001 read 0x0000000000000003 (xor "
            "0x0000000000000002)");
  EXPECT_EQ(
      c.measured["errors_by_pattern"],
      nlohmann::json::parse(R"({"walking ones/zeros": 1, "own address": 2, "moving inversions": 3, "random": 4})"));
  // A part that says it recorded more than it can hold: only what the array holds is read.
  r.recorded = 1000;
  EXPECT_EQ(judgeMemtest(0, r).evidence.size(), 4u + GW_MEMTEST_MAX_RECORDED);
}

// Host<->device bandwidth against the link: Gen1 x4 is exactly 1 GB/s, so the slower direction
// is the fraction itself; each band at the configured value and one step either side.
TEST(VerdictsExact, HostBandwidthBandsAtTheirEdges) {
  const auto& t = generic();
  const PcieLink gen1x4{1, 4, 1, 4};
  ASSERT_EQ(pcieTheoreticalGBps(1, 4), 1.0);
  auto at = [&](double worst) { return judgeHostBandwidth(0, GwBandwidthResult{1, 1, 5, worst, 0, 0}, gen1x4, t); };
  EXPECT_EQ(at(t.pcie_warn_fraction).verdict, Verdict::Pass);
  EXPECT_EQ(at(above(t.pcie_warn_fraction)).verdict, Verdict::Pass);
  EXPECT_EQ(at(below(t.pcie_warn_fraction)).verdict, Verdict::Warn);
  EXPECT_EQ(at(t.pcie_min_fraction).verdict, Verdict::Warn);
  EXPECT_EQ(at(above(t.pcie_min_fraction)).verdict, Verdict::Warn);
  EXPECT_EQ(at(below(t.pcie_min_fraction)).verdict, Verdict::Fail);
  // The documented defaults, written out: 70 % warns, 60 % fails.
  EXPECT_EQ(show(at(0.69)),
            "warn | H2D 5.0 GB/s, D2H 0.7 GB/s of 1.00 GB/s theoretical (Gen1 x4), 69 %\n"
            "  - 0.7 GB/s is below 70 % of the link's theoretical rate");
  EXPECT_EQ(show(at(0.59)),
            "fail | H2D 5.0 GB/s, D2H 0.6 GB/s of 1.00 GB/s theoretical (Gen1 x4), 59 %\n"
            "  - 0.6 GB/s is below 60 % of the link's theoretical rate");
  EXPECT_EQ(show(judgeHostBandwidth(0, GwBandwidthResult{1, 1, 0.2, 0.9, 0, 0}, PcieLink{1, 1, 1, 1}, t)),
            "pass | H2D 0.2 GB/s, D2H 0.9 GB/s of 0.25 GB/s theoretical (Gen1 x1), 80 %");
  EXPECT_EQ(show(judgeHostBandwidth(0, GwBandwidthResult{1, 1, 5, 5, 0, 0}, PcieLink{}, t)),
            "pass | H2D 5.0 GB/s, D2H 5.0 GB/s (link rate unknown, not judged)");
}

// The link seen under load: narrower than its maximum fails, a lower generation warns (and does
// not lower a failure), unknown (0) is not judged.
TEST(VerdictsExact, HostBandwidthLinkUnderLoad) {
  const auto& t = generic();
  auto at = [&](PcieLink l, double worst) {
    return judgeHostBandwidth(0, GwBandwidthResult{1, 1, 100, worst, 0, 0}, l, t);
  };
  const double full = pcieTheoreticalGBps(5, 16);
  EXPECT_EQ(at({0, 0, 5, 16}, full).verdict, Verdict::Pass);
  const Check narrow = at({5, 1, 5, 16}, full);
  EXPECT_EQ(narrow.verdict, Verdict::Fail);
  EXPECT_EQ(narrow.evidence, (std::vector<std::string>{"under load the link ran at x1 of x16"}));
  EXPECT_EQ(narrow.action, "a degraded PCIe link: reseat the card, check the riser; replace if it persists");
  const Check gen = at({1, 16, 5, 16}, full);
  EXPECT_EQ(gen.verdict, Verdict::Warn);
  EXPECT_EQ(gen.evidence, (std::vector<std::string>{"under load the link ran at Gen1 of Gen5"}));
  EXPECT_EQ(gen.action, "check the slot, riser and BIOS PCIe settings");
  const Check slowAndGen = at({4, 16, 5, 16}, full * 0.5);
  EXPECT_EQ(slowAndGen.verdict, Verdict::Fail);
  EXPECT_EQ(slowAndGen.evidence.size(), 2u);
  EXPECT_EQ(slowAndGen.action, "reseat the card, check riser/cable and the slot's lane wiring; then retest");
  const Check both = at({4, 8, 5, 16}, full);  // the width decides; the generation is not added
  EXPECT_EQ(both.evidence, (std::vector<std::string>{"under load the link ran at x8 of x16"}));
  EXPECT_EQ(at({5, 16, 5, 16}, full).evidence, std::vector<std::string>{});
  EXPECT_EQ(at({5, 16, 5, 16}, full).measured,
            nlohmann::json::parse(R"({"h2d_gbps": 100.0, "d2h_gbps": 63.015392, "h2d_avg_gbps": 0.0,
                "d2h_avg_gbps": 0.0, "theoretical_gbps": 63.015392, "max_gen": 5, "max_width": 16,
                "seen_gen": 5, "seen_width": 16})"));
}

// Peer copies: 1 GB/s expected makes the rate its own fraction. Over NVLink a slow pair fails,
// over PCIe it warns; no peer access fails over NVLink and skips over PCIe; no expectation is
// not judged.
TEST(VerdictsExact, P2PEveryPathAndBand) {
  const auto& t = generic();
  auto at = [&](double gbps, bool nvlink) { return judgeP2P(2, 5, GwP2PResult{0, 1, 1, gbps, 0}, nvlink, 1.0, t); };
  for (bool nvlink : {true, false}) {
    EXPECT_EQ(at(t.p2p_warn_fraction, nvlink).verdict, Verdict::Pass) << nvlink;
    EXPECT_EQ(at(below(t.p2p_warn_fraction), nvlink).verdict, Verdict::Warn) << nvlink;
    EXPECT_EQ(at(t.p2p_min_fraction, nvlink).verdict, Verdict::Warn) << nvlink;
    EXPECT_EQ(at(above(t.p2p_min_fraction), nvlink).verdict, Verdict::Warn) << nvlink;
    EXPECT_EQ(at(below(t.p2p_min_fraction), nvlink).verdict, nvlink ? Verdict::Fail : Verdict::Warn) << nvlink;
  }
  EXPECT_EQ(show(at(0.69, true)),
            "warn | GPU2->GPU5 0.7 GB/s over NVLink, 69 % of 1.0 GB/s expected\n  - below 70 % of the expected rate");
  const Check slowNv = at(0.49, true);
  EXPECT_EQ(show(slowNv),
            "fail | GPU2->GPU5 0.5 GB/s over NVLink, 49 % of 1.0 GB/s expected\n  - below 50 % of the expected rate");
  EXPECT_EQ(
      slowNv.action,
      "check NVLink errors and link state (nvidia-smi nvlink -e); replace the card or baseboard if links are down");
  const Check slowPcie = at(0.49, false);
  EXPECT_EQ(show(slowPcie),
            "warn | GPU2->GPU5 0.5 GB/s over PCIe, 49 % of 1.0 GB/s expected\n  - below 50 % of the expected rate");
  EXPECT_EQ(slowPcie.action, "peer traffic may cross the CPU (see gpuwarden topo); check ACS settings");
  EXPECT_EQ(slowPcie.gpu, -1);
  EXPECT_EQ(slowPcie.gpus_involved, (std::vector<int>{2, 5}));
  EXPECT_EQ(slowPcie.measured, nlohmann::json::parse(R"({"src": 2, "dst": 5, "peer_access": true, "gbps": 0.49,
      "avg_gbps": 0.0, "nvlink": false, "expected_gbps": 1.0})"));
  EXPECT_EQ(show(judgeP2P(2, 5, GwP2PResult{0, 1, 1, 20, 0}, false, 0, t)), "pass | GPU2->GPU5 20.0 GB/s over PCIe");
  EXPECT_EQ(show(judgeP2P(2, 5, GwP2PResult{0, 1, 0, 0, 0}, true, 360, t)),
            "fail | GPU2->GPU5: no peer access although both GPUs have active NVLink");
  const Check noPeer = judgeP2P(5, 2, GwP2PResult{0, 1, 0, 0, 0}, false, 63, t);
  EXPECT_EQ(show(noPeer), "skip | GPU5->GPU2: peer access not supported (traffic goes through host memory)");
  EXPECT_EQ(noPeer.measured["peer_access"], false);
  const Check err = judgeP2P(1, 0, Status::Error("cudaMemcpyPeer: peer mapping"), true, 360, t);
  EXPECT_EQ(show(err), "fail | GPU1->GPU0: CUDA error: cudaMemcpyPeer: peer mapping\n  - cudaMemcpyPeer: peer mapping");
  EXPECT_EQ(err.gpu, -1);
  EXPECT_EQ(err.gpus_involved, (std::vector<int>{1, 0}));
}

// STREAM triad against the peak: 1000 GB/s peak makes the rate per mille of it.
TEST(VerdictsExact, TriadBandsAtTheirEdges) {
  const auto& t = generic();
  auto at = [&](double best, double peak = 1000) { return judgeTriad(0, GwTriadResult{1, 1, best, 0, 0}, peak, t); };
  EXPECT_EQ(at(t.membw_warn_fraction * 1000).verdict, Verdict::Pass);
  EXPECT_EQ(at(below(t.membw_warn_fraction * 1000)).verdict, Verdict::Warn);
  EXPECT_EQ(at(t.membw_min_fraction * 1000).verdict, Verdict::Warn);
  EXPECT_EQ(at(below(t.membw_min_fraction * 1000)).verdict, Verdict::Fail);
  EXPECT_EQ(show(at(799)), "warn | 799 GB/s of 1000 GB/s peak, 80 %\n  - below 80 % of the peak");
  EXPECT_EQ(show(at(694)), "fail | 694 GB/s of 1000 GB/s peak, 69 %\n  - below 70 % of the peak");
  EXPECT_EQ(show(at(850)), "pass | 850 GB/s of 1000 GB/s peak, 85 %");
  EXPECT_EQ(show(at(0.75, 1)), "warn | 1 GB/s of 1 GB/s peak, 75 %\n  - below 80 % of the peak");
  EXPECT_EQ(show(at(0.5, 0)), "pass | 0 GB/s (peak unknown, not judged)");
  EXPECT_EQ(show(judgeTriad(0, GwTriadResult{1, 1, 3000, 0, 5}, 1000, t)),
            "fail | 3000 GB/s, 5 WRONG results\n"
            "  - a[i] = b[i] + 3*c[i] gave wrong values: memory or compute corruption");
}

// A straggler is judged against the mean of its peers, strictly beyond each percentage.
TEST(VerdictsExact, PeerStandingAtTheConfiguredPercentages) {
  const auto& t = generic();
  ASSERT_EQ(t.peer_slow_warn_pct, 5);
  ASSERT_EQ(t.peer_slow_fail_pct, 15);
  auto verdictOf = [&](double v) {
    return comparePeers({100, v}, t.peer_slow_warn_pct, t.peer_slow_fail_pct)[1].verdict;
  };
  EXPECT_EQ(verdictOf(95), Verdict::Pass);  // exactly 5 % slower
  EXPECT_EQ(verdictOf(below(95)), Verdict::Warn);
  EXPECT_EQ(verdictOf(85), Verdict::Warn);  // exactly 15 % slower
  EXPECT_EQ(verdictOf(below(85)), Verdict::Fail);
  const auto s = comparePeers({100, 100, 100, 80}, 5, 15);
  EXPECT_EQ(s[3].peer_mean, 100);
  EXPECT_EQ(s[3].slower_pct, 20);
  EXPECT_EQ(s[0].peer_mean, 280.0 / 3);
  EXPECT_TRUE(s[0].has_peers);
  // Peers that measured nothing: no percentage, no verdict.
  const auto zero = comparePeers({0, 0}, 5, 15);
  EXPECT_EQ(zero[0].slower_pct, 0);
  EXPECT_EQ(zero[0].verdict, Verdict::Pass);
  const auto small = comparePeers({1, 0.5}, 5, 15);
  EXPECT_EQ(small[1].peer_mean, 1);
  EXPECT_EQ(small[1].slower_pct, 50);
  EXPECT_EQ(small[1].verdict, Verdict::Fail);
  EXPECT_TRUE(comparePeers({}, 5, 15).empty());
}

namespace {
GemmInput gemmOf(int gpu, double gflops, uint64_t checksum = 7) {
  GemmInput in = gemmRun(gpu, gflops, 0, checksum);
  return in;
}
}  // namespace

// GEMM: nothing completed fails; any miscompare fails; below the SKU's fraction of its expected
// TFLOPS warns (cuBLAS only: the built-in kernel has no expectation).
TEST(VerdictsExact, GemmEachRuleAlone) {
  const auto& h = h100();
  ASSERT_EQ(h.expectedTflops("fp16"), 700);
  ASSERT_EQ(h.gemm_min_fraction, 0.60);
  const double edge = h.gemm_min_fraction * 700 * 1000;  // GFLOP/s
  EXPECT_EQ(judgeGemmBurn({gemmOf(0, edge)})[0].verdict, Verdict::Pass);
  EXPECT_EQ(judgeGemmBurn({gemmOf(0, below(edge))})[0].verdict, Verdict::Warn);
  EXPECT_EQ(judgeGemmBurn({gemmOf(0, edge + 1)})[0].verdict, Verdict::Pass);
  EXPECT_EQ(judgeGemmBurn({gemmOf(0, edge - 1)})[0].verdict, Verdict::Warn);
  const Check slow = judgeGemmBurn({gemmOf(0, 300000)})[0];
  EXPECT_EQ(show(slow),
            "warn | 300.0 TFLOPS fp16 (cuBLAS), 500 GEMMs compared\n"
            "  - 300.0 TFLOPS is 43 % of the 700 TFLOPS expected of H100 SXM5 80GB");
  EXPECT_EQ(slow.measured["expected_tflops"], 700.0);
  EXPECT_EQ(slow.action, "check clocks, power cap and throttle reasons");

  GemmInput builtin = gemmOf(0, 3000);
  builtin.result->used_cublas = 0;
  builtin.result->precision = GW_GEMM_FP32;
  const Check b = judgeGemmBurn({builtin})[0];
  EXPECT_EQ(show(b), "pass | 3.0 TFLOPS fp32 (built-in kernel), 500 GEMMs compared");
  EXPECT_FALSE(b.measured.contains("expected_tflops"));
  EXPECT_EQ(b.measured["engine"], "builtin");

  GemmInput none = gemmOf(0, 0);
  none.result->iterations = 0;
  // Its rate (0) is still set against the expectation.
  EXPECT_EQ(show(judgeGemmBurn({none})[0]),
            "fail | no GEMM completed\n  - 0.0 TFLOPS is 0 % of the 700 TFLOPS expected of H100 SXM5 80GB");
  GemmInput one = gemmOf(0, 700000);
  one.result->iterations = 1;
  EXPECT_EQ(show(judgeGemmBurn({one})[0]), "pass | 700.0 TFLOPS fp16 (cuBLAS), 1 GEMMs compared");

  GemmInput elements = gemmOf(0, 700000);
  elements.result->miscompared_elements = 1;
  EXPECT_EQ(show(judgeGemmBurn({elements})[0]),
            "fail | 700.0 TFLOPS fp16 (cuBLAS), 500 GEMMs compared, 0 MISCOMPARED\n"
            "  - 0 of 500 results differed from the first (1 elements)");
  GemmInput iters = gemmOf(0, 700000);
  iters.result->failed_iterations = 1;
  EXPECT_EQ(judgeGemmBurn({iters})[0].verdict, Verdict::Fail);

  // A SKU that expects 1 TFLOPS still judges against it.
  GemmInput tiny = gemmOf(0, 500);
  tiny.sku = parsedSku("gemm_tflops: {fp16: 1}");
  EXPECT_EQ(judgeGemmBurn({tiny})[0].verdict, Verdict::Warn);
  tiny.result->gflops = 700;
  EXPECT_EQ(judgeGemmBurn({tiny})[0].verdict, Verdict::Pass);
  // Precision names of what ran.
  for (auto [p, name] : std::vector<std::pair<int, std::string>>{
           {GW_GEMM_FP32, "fp32"}, {GW_GEMM_TF32, "tf32"}, {GW_GEMM_FP16, "fp16"}, {GW_GEMM_BF16, "bf16"}}) {
    GemmInput in = gemmOf(0, 1);
    in.result->precision = p;
    EXPECT_EQ(judgeGemmBurn({in})[0].measured["precision"], name);
  }
}

// Stragglers among like GPUs, whichever position the slow one has, with the evidence whole.
TEST(VerdictsExact, GemmStragglerEvidenceAndPosition) {
  const auto cs = judgeGemmBurn({gemmOf(0, 560000), gemmOf(1, 700000), gemmOf(2, 700000), gemmOf(3, 700000)});
  EXPECT_EQ(show(cs[0]),
            "fail | 560.0 TFLOPS fp16 (cuBLAS), 500 GEMMs compared\n"
            "  - 20.0 % slower than the mean of its 3 peer(s) (700.0 TFLOPS)");
  EXPECT_EQ(cs[0].measured["peer_mean_gflops"], 700000.0);
  EXPECT_EQ(cs[0].measured["slower_than_peers_pct"], 20.0);
  EXPECT_EQ(cs[0].action,
            "a straggler: check its clocks, temperature, power cap and PCIe link; a card that stays slow must be "
            "replaced");
  EXPECT_EQ(show(cs[1]), "pass | 700.0 TFLOPS fp16 (cuBLAS), 500 GEMMs compared");
  EXPECT_FALSE(cs[1].measured.contains("input_index"));
  // Configured percentages, exactly at them and one step beyond.
  auto second = [](double v) { return judgeGemmBurn({gemmOf(0, 700000), gemmOf(1, v)})[1].verdict; };
  EXPECT_EQ(second(665000), Verdict::Pass);  // 5 % slower
  EXPECT_EQ(second(below(665000)), Verdict::Warn);
  EXPECT_EQ(second(595000), Verdict::Warn);  // 15 % slower
  EXPECT_EQ(second(below(595000)), Verdict::Fail);
}

// Identical inputs give identical bits: with three or more GPUs a minority checksum fails; a
// split without a majority warns every side.
TEST(VerdictsExact, GemmChecksumVotes) {
  auto verdicts = [](std::vector<uint64_t> sums) {
    std::vector<GemmInput> in;
    for (size_t i = 0; i < sums.size(); ++i) in.push_back(gemmOf(static_cast<int>(i), 700000, sums[i]));
    std::string v;
    for (const auto& c : judgeGemmBurn(in)) v += std::string(verdictName(c.verdict)) + " ";
    return v;
  };
  EXPECT_EQ(verdicts({1, 1, 1}), "pass pass pass ");
  EXPECT_EQ(verdicts({9, 1, 1}), "fail pass pass ");
  EXPECT_EQ(verdicts({1, 2}), "warn warn ");
  EXPECT_EQ(verdicts({1, 1, 2, 2}), "warn warn warn warn ");
  EXPECT_EQ(verdicts({1, 1, 1, 2}), "pass pass pass fail ");
  EXPECT_EQ(verdicts({1, 2, 3}), "fail fail fail ");
  const auto cs = judgeGemmBurn({gemmOf(0, 700000, 1), gemmOf(1, 700000, 1), gemmOf(2, 700000, 2)});
  EXPECT_EQ(cs[2].evidence, (std::vector<std::string>{"its result differs from the majority of identical GPUs"}));
  EXPECT_EQ(cs[2].measured["checksum"], "0x0000000000000002");
  const auto tie = judgeGemmBurn({gemmOf(0, 700000, 1), gemmOf(1, 700000, 2)});
  EXPECT_EQ(
      tie[0].evidence,
      (std::vector<std::string>{
          "its result differs from other GPUs of the same model; with no majority the wrong one cannot be named"}));
  EXPECT_EQ(tie[0].measured.value("checksum_disputed", false), true);
  EXPECT_EQ(tie[1].measured.value("checksum_disputed", false), true);
  EXPECT_FALSE(cs[2].measured.contains("checksum_disputed"));
  EXPECT_FALSE(cs[0].measured.contains("checksum_disputed"));
}

// Targeted power: miscompares fail; an unjudgeable draw warns; the mean against the target at
// each configured fraction and one step either side (a 100 W target makes the watts the percent).
TEST(VerdictsExact, TargetedPowerEveryPath) {
  const auto& t = generic();
  GwPowerResult r{};
  r.iterations = 10;
  r.mean_duty = 0.9;
  auto at = [&](double mean) { return judgeTargetedPower(0, r, PowerRun{120, 100, mean, 110, 10, ""}, t); };
  EXPECT_EQ(at(t.power_warn_fraction * 100).verdict, Verdict::Pass);
  EXPECT_EQ(at(below(t.power_warn_fraction * 100)).verdict, Verdict::Warn);
  EXPECT_EQ(at(t.power_min_fraction * 100).verdict, Verdict::Warn);
  EXPECT_EQ(at(below(t.power_min_fraction * 100)).verdict, Verdict::Fail);
  EXPECT_EQ(show(at(94)),
            "warn | 94 W mean of 100 W target (85 % of the 120.0 W limit), 94 %\n"
            "  - could not reach the target power at duty 90 %");
  EXPECT_EQ(show(at(79)),
            "fail | 79 W mean of 100 W target (85 % of the 120.0 W limit), 79 %\n"
            "  - could not reach the target power at duty 90 %");
  EXPECT_EQ(show(judgeTargetedPower(0, r, PowerRun{1.2, 1, 1, 1, 1, ""}, t)),
            "pass | 1 W mean of 1 W target (85 % of the 1.2 W limit), 100 %");
  EXPECT_EQ(show(judgeTargetedPower(0, r, PowerRun{120, 100, 0, 0, 0, ""}, t)),
            "warn | load ran, but the power draw could not be judged");
  EXPECT_EQ(show(judgeTargetedPower(0, r, PowerRun{0, 0, 50, 60, 10, ""}, t)),
            "warn | load ran, but the power draw could not be judged");
  EXPECT_EQ(show(judgeTargetedPower(0, r, PowerRun{120, 100, 99, 110, 10, "power draw: lost"}, t)),
            "warn | load ran, but the power draw could not be judged\n  - power draw: lost");
  r.failed_iterations = 1;
  EXPECT_EQ(show(at(99)), "fail | 1 load results MISCOMPARED under power");
  EXPECT_EQ(show(judgeTargetedPower(0, Status::Error("cublasGemmEx: failed"), PowerRun{}, t)),
            "fail | CUDA error: cublasGemmEx: failed\n  - cublasGemmEx: failed");
}

// The watch: each finding alone, at its edge.
TEST(VerdictsExact, WatchEachFindingAtItsEdge) {
  const auto& h = h100();
  ASSERT_EQ(h.max_temp_c, 87);
  WatchSummary w;
  w.samples = 4;
  EXPECT_EQ(show(judgeWatch(1, w, h)), "pass | temperature unknown");
  w.max_power_w = 1;
  EXPECT_EQ(show(judgeWatch(1, w, h)), "pass | temperature unknown, max 1 W");
  w.max_power_w = 0;
  w.temp_known = true;
  w.max_temp_c = 87;
  w.hottest_during = "gemm_burn";
  w.min_sm_mhz = 1400;
  w.max_sm_mhz = 1980;
  EXPECT_EQ(show(judgeWatch(1, w, h)), "pass | max 87 C, SM 1400-1980 MHz");
  w.max_temp_c = 88;
  EXPECT_EQ(
      show(judgeWatch(1, w, h)),
      "fail | max 88 C, SM 1400-1980 MHz\n  - reached 88 C during gemm_burn, above the 87 C allowed for H100 SXM5 "
      "80GB");
  WatchSummary unknownTemp;
  unknownTemp.max_temp_c = 120;  // not read: not judged
  EXPECT_EQ(judgeWatch(1, unknownTemp, h).verdict, Verdict::Pass);
  WatchSummary dbe;
  dbe.dbe_known = true;
  dbe.dbe_start = dbe.dbe_end = 2;
  EXPECT_EQ(judgeWatch(1, dbe, h).verdict, Verdict::Pass);
  dbe.dbe_end = 4;
  dbe.dbe_during = "memtest";
  EXPECT_EQ(show(judgeWatch(1, dbe, h)),
            "fail | temperature unknown\n  - 2 new uncorrectable (double-bit) ECC error(s) during memtest");
  dbe.dbe_known = false;  // counts that were never read are not news
  EXPECT_EQ(judgeWatch(1, dbe, h).verdict, Verdict::Pass);
  WatchSummary x;
  x.xids = {{"memtest", 79}, {"gemm_burn", 999999}};
  const Check xc = judgeWatch(1, x, h);
  EXPECT_EQ(show(xc),
            "fail | temperature unknown\n  - new Xid 79 (GPU has fallen off the bus) during memtest\n"
            "  - new Xid 999999 during gemm_burn");
  EXPECT_EQ(xc.measured["xids"],
            nlohmann::json::parse(R"([{"step": "memtest", "xid": 79}, {"step": "gemm_burn", "xid": 999999}])"));
  EXPECT_EQ(xidMeaning(79), "GPU has fallen off the bus");
  EXPECT_EQ(xidMeaning(uint64_t(1) << 40), "");
}

// Each clock-event reason bit alone: the three hardware slowdowns and SW thermal slowdown warn,
// each by its name; the SW power cap is noted (normal at full load) and passes; idle, application
// clocks, sync boost and display clocks say nothing.
TEST(VerdictsExact, WatchEachClockReasonBitAlone) {
  const auto& h = h100();
  WatchSummary w;
  w.samples = 4;
  const std::string warn = "warn | temperature unknown\n  - clock event reasons seen: ";
  for (const auto& [bit, name] : std::vector<std::pair<std::uint64_t, std::string>>{{0x8, "HW slowdown"},
                                                                                    {0x20, "SW thermal slowdown"},
                                                                                    {0x40, "HW thermal slowdown"},
                                                                                    {0x80, "HW power brake"}}) {
    w.reasons_seen = bit;
    EXPECT_EQ(show(judgeWatch(1, w, h)), warn + name) << bit;
  }
  w.reasons_seen = 0x4;
  EXPECT_EQ(show(judgeWatch(1, w, h)), "pass | temperature unknown\n  - SW power cap reached (normal at full load)");
  for (const std::uint64_t bit : {0x1u, 0x2u, 0x10u, 0x100u}) {
    w.reasons_seen = bit;
    EXPECT_EQ(show(judgeWatch(1, w, h)), "pass | temperature unknown") << bit;
  }
}
