#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>

#include "diag/progress.h"
#include "diag/report.h"

using namespace gw::diag;

namespace {
DiagReport sample() {
  DiagReport r;
  r.level = 2;
  r.cuda_status = "ready";
  r.gpus = {{0, "NVIDIA H200", "GPU-a", "00000000:17:00.0", "h200", Verdict::Pass, {}, "", ""},
            {1, "NVIDIA H200", "GPU-b", "00000000:18:00.0", "h200", Verdict::Pass, {}, "", ""}};
  Check ok{"memtest", "device memory test", 0, Verdict::Pass, "0 errors", {}, "", {}, 1, {}};
  Check bad{"memtest",
            "device memory test",
            1,
            Verdict::Fail,
            "5 memory errors in 120 GiB",
            {"random: 5 errors"},
            "replace the card",
            {{"errors", 5}},
            1,
            {}};
  Check skip{"p2p_bandwidth", "peer-to-peer bandwidth", -1, Verdict::Skip, "GPU0->GPU1: no peer access", {}, "", {}, 0,
             {0, 1}};
  Check node{"deployment", "kernel module", -1, Verdict::Warn, "nouveau loaded", {}, "", {}, 0, {}};
  r.checks = {ok, bad, skip, node};
  r.finalize();
  return r;
}
}  // namespace

TEST(Report, FinalizeAggregates) {
  auto r = sample();
  EXPECT_EQ(r.overall, Verdict::Fail);
  EXPECT_EQ(r.gpus[0].verdict, Verdict::Pass);
  EXPECT_EQ(r.gpus[1].verdict, Verdict::Fail);
  EXPECT_EQ(r.gpus[1].reasons, (std::vector<std::string>{"fail memtest: 5 memory errors in 120 GiB"}));
  EXPECT_EQ(r.exitCode(), 1);
  DiagReport skips;
  skips.checks = {Check{"x", "x", 0, Verdict::Skip, "skipped", {}, "", {}, 0, {}}};
  skips.finalize();
  EXPECT_EQ(skips.overall, Verdict::Pass);
  EXPECT_EQ(skips.exitCode(), 0);
  DiagReport err;
  err.error = "no GPU found";
  EXPECT_EQ(err.exitCode(), 2);
}

// finalize() runs again when a stored report is loaded or a check is added: the verdicts and their
// reasons are made afresh each time, never appended to.
TEST(Report, FinalizeTwiceGivesTheSameVerdicts) {
  DiagReport r;
  r.level = 1;
  r.gpus = {GpuSummary{}, GpuSummary{}};
  r.gpus[0].gpu = 0;
  r.gpus[1].gpu = 1;
  Check bad;
  bad.test = "pcie_link";
  bad.gpu = 1;
  bad.verdict = Verdict::Fail;
  bad.summary = "PCIe link Gen4 x8, expected Gen5 x16";
  r.checks.push_back(bad);
  r.finalize();
  const auto reasons0 = r.gpus[0].reasons, reasons1 = r.gpus[1].reasons;
  ASSERT_FALSE(reasons1.empty());
  r.finalize();
  EXPECT_EQ(r.gpus[0].reasons, reasons0);
  EXPECT_EQ(r.gpus[1].reasons, reasons1);
  EXPECT_EQ(r.gpus[1].verdict, Verdict::Fail);
}

// A GPU with warnings whose GPU tests were all skipped is incomplete (the warning stays among its
// reasons); a failure anywhere outranks incomplete.
TEST(Report, AllGpuTestsSkippedIsIncomplete) {
  DiagReport r;
  r.level = 1;
  r.gpus = {{0, "NVIDIA H200", "GPU-a", "", "", Verdict::Pass, {}, "", ""}};
  r.checks = {Check{"persistence", "persistence mode", 0, Verdict::Warn, "disabled", {}, "", {}, 0, {}},
              Check{"cuda_deploy", "CUDA", 0, Verdict::Skip, "skipped: built without CUDA", {}, "", {}, 0, {}}};
  r.finalize();
  EXPECT_EQ(r.gpus[0].verdict, Verdict::Incomplete);
  EXPECT_EQ(r.gpus[0].reasons, (std::vector<std::string>{"warn persistence: disabled",
                                                         "incomplete: no GPU test ran (skipped: built without CUDA)"}));
  EXPECT_EQ(r.overall, Verdict::Incomplete);
  EXPECT_EQ(r.exitCode(), 4);
  const std::string t = renderText(r);
  EXPECT_NE(t.find("GPU 0: INCOMPLETE"), std::string::npos) << t;
  EXPECT_NE(t.find("overall: INCOMPLETE (exit 4)"), std::string::npos) << t;
  EXPECT_NE(t.find("this run does not accept them"), std::string::npos) << t;
  EXPECT_EQ(toJson(r)["overall"], "incomplete");
  EXPECT_EQ(toJson(r)["exit_code"], 4);

  r.checks.push_back(Check{"inforom", "InfoROM", 0, Verdict::Fail, "corrupted", {}, "", {}, 0, {}});
  r.finalize();
  EXPECT_EQ(r.gpus[0].verdict, Verdict::Fail);
  EXPECT_EQ(r.exitCode(), 1);

  // The same GPU with its vector add run: complete, and the warning decides.
  r.checks.pop_back();
  r.checks[1].verdict = Verdict::Pass;
  r.finalize();
  EXPECT_EQ(r.gpus[0].verdict, Verdict::Warn);
  EXPECT_EQ(r.exitCode(), 0);
}

TEST(Report, TextNamesVerdictsAndEvidence) {
  std::string t = renderText(sample());
  EXPECT_NE(t.find("gpuwarden diag -r 2"), std::string::npos);
  EXPECT_NE(t.find("GPU 1  NVIDIA H200  00000000:18:00.0  [thresholds: h200]"), std::string::npos) << t;
  EXPECT_NE(t.find("FAIL  device memory test"), std::string::npos);
  EXPECT_NE(t.find("- random: 5 errors"), std::string::npos);
  EXPECT_NE(t.find("-> replace the card"), std::string::npos);
  EXPECT_NE(t.find("GPU pairs"), std::string::npos);
  EXPECT_NE(t.find("Node"), std::string::npos);
  EXPECT_NE(t.find("GPU 1: FAIL"), std::string::npos);
  EXPECT_NE(t.find("overall: FAIL (exit 1)"), std::string::npos);
}

TEST(Report, JsonShape) {
  auto j = toJson(sample());
  EXPECT_EQ(j["level"], 2);
  EXPECT_EQ(j["overall"], "fail");
  EXPECT_EQ(j["exit_code"], 1);
  EXPECT_EQ(j["gpus"][1]["verdict"], "fail");
  EXPECT_EQ(j["checks"][1]["measured"]["errors"], 5);
  EXPECT_EQ(j["checks"][1]["gpu"], 1);
  EXPECT_EQ(j["checks"][2]["gpus"], nlohmann::json::array({0, 1}));
  EXPECT_FALSE(j["checks"][2].contains("gpu"));
  EXPECT_EQ(j["checks"][1]["action"], "replace the card");
}

TEST(Report, JsonRoundTripKeepsTheStack) {
  DiagReport r = sample();
  r.stack = {"0.1.0", "550.54.15", 12040, 12080};
  r.gpus[0].serial = "1654922012345";
  r.gpus[0].vbios = "96.00.74.00.01";
  const auto j = toJson(r);
  EXPECT_EQ(j["stack"], nlohmann::json::parse(R"({"gpuwarden_version": "0.1.0", "driver_version": "550.54.15",
      "cuda_driver_version": "12.4", "cuda_runtime_version": "12.8"})"));
  EXPECT_TRUE(j["gpus"][1]["serial"].is_null());
  auto back = reportFromJson(j);
  ASSERT_TRUE(back.ok()) << back.error();
  EXPECT_EQ(toJson(*back), j);
  EXPECT_EQ(back->stack.cuda_driver_version, 12040);
  EXPECT_EQ(back->gpus[0].vbios, "96.00.74.00.01");
  EXPECT_EQ(back->checks[2].gpus_involved, (std::vector<int>{0, 1}));
}

// A report stored by gpuwarden 0.1.0 before the stack was recorded (`diag -r 1 --json` on the
// mig-a100 scenario at b4669e0) still loads: the new fields are empty, the rest is as stored.
TEST(Report, StoredReportWithoutStackStillLoads) {
  std::ifstream in(std::string(GW_TEST_SOURCE_DIR) + "/tests/diag/fixtures/report-before-stack.json");
  ASSERT_TRUE(in.good());
  const auto stored = nlohmann::json::parse(in);
  ASSERT_FALSE(stored.contains("stack"));
  auto r = reportFromJson(stored);
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r->level, 1);
  EXPECT_EQ(r->overall, Verdict::Warn);
  EXPECT_EQ(r->stack.driver_version, "");
  EXPECT_EQ(r->stack.cuda_driver_version, 0);
  EXPECT_EQ(r->stack.gpuwarden_version, "");
  ASSERT_EQ(r->gpus.size(), 2u);
  EXPECT_EQ(r->gpus[1].serial, "");
  EXPECT_EQ(r->gpus[1].name, stored["gpus"][1]["name"]);
  EXPECT_EQ(r->checks.size(), stored["checks"].size());
  EXPECT_EQ(r->checks[1].test, "pcie_link");
  EXPECT_EQ(r->checks[1].measured["max_gen"], 4);
  const auto again = toJson(*r);
  EXPECT_TRUE(again["stack"]["driver_version"].is_null());
  EXPECT_EQ(again["checks"], stored["checks"]);
}

TEST(Report, MalformedStoredReportNamesTheField) {
  auto j = toJson(sample());
  j["gpus"][1]["verdict"] = "ok";
  EXPECT_EQ(reportFromJson(j).error(), "gpus[1].verdict: unknown verdict 'ok'");
  j = toJson(sample());
  j["stack"] = {{"cuda_driver_version", "twelve"}};
  EXPECT_EQ(reportFromJson(j).error(), "stack.cuda_driver_version: 'twelve' is not a CUDA version (major.minor)");
  j = toJson(sample());
  j.erase("level");
  EXPECT_EQ(reportFromJson(j).error(), "level: missing");
  j = toJson(sample());
  j["checks"][0]["gpu"] = "0";
  EXPECT_EQ(reportFromJson(j).error(), "checks[0].gpu: must be an integer");
  EXPECT_FALSE(reportFromJson(nlohmann::json::array()).ok());
}

// docs/diag.md's exit-code table is rendered from exitCodeMeanings() (as is --help).
// Regenerate: GW_UPDATE_DOCS=1 ctest -R DocsInSync
TEST(DocsInSync, DiagExitCodes) {
  const std::string path = std::string(GW_TEST_SOURCE_DIR) + "/docs/diag.md";
  std::ifstream in(path, std::ios::binary);
  std::stringstream buf;
  buf << in.rdbuf();
  const std::string doc = buf.str();
  const std::string begin = "<!-- exit codes: rendered from exitCodeMeanings() (src/diag/report.cpp) -->\n";
  const std::string end = "<!-- end of exit codes -->";
  const auto b = doc.find(begin);
  ASSERT_NE(b, std::string::npos) << "docs/diag.md lacks the marker " << begin;
  const auto from = b + begin.size();
  const auto e = doc.find(end, from);
  ASSERT_NE(e, std::string::npos) << "docs/diag.md lacks the marker " << end;
  const char* update = std::getenv("GW_UPDATE_DOCS");
  if (update && std::string(update) == "1") {
    std::ofstream(path, std::ios::binary | std::ios::trunc)
        << doc.substr(0, from) + exitCodeTableMarkdown() + doc.substr(e);
    return;
  }
  EXPECT_EQ(doc.substr(from, e - from), exitCodeTableMarkdown())
      << "docs/diag.md's exit codes are out of date; run GW_UPDATE_DOCS=1 ctest -R DocsInSync";
}

TEST(Progress, BarEtaAndQuietLines) {
  EXPECT_EQ(TextProgress::formatEta(83), "1:23");
  EXPECT_EQ(TextProgress::formatEta(3723), "1:02:03");
  EXPECT_EQ(TextProgress::formatEta(-1), "0:00");
  EXPECT_EQ(TextProgress::bar(0.5, 10), "[#####.....]");
  EXPECT_EQ(TextProgress::bar(2, 4), "[####]");

  std::ostringstream quiet;
  TextProgress q(quiet, false);
  q.stepStarted(3, 12, "device memory test", 60);
  q.progress(0.4, 50, "memtest");  // quiet: no bar
  q.checkDone(Check{"memtest", "m", 1, Verdict::Fail, "5 errors", {}, "", {}, 0, {}});
  q.checkDone(Check{"memtest", "m", 0, Verdict::Pass, "0 errors", {}, "", {}, 0, {}});
  EXPECT_EQ(quiet.str(), "diag: step 3/12: device memory test (~1:00)\ndiag: FAIL GPU 1 memtest: 5 errors\n");

  std::ostringstream tty;
  TextProgress t(tty, true);
  t.progress(0.42, 83, "memtest");
  EXPECT_NE(tty.str().find("[############..................]  42%  memtest  ETA 1:23"), std::string::npos) << tty.str();
  t.finished(DiagReport{});
  EXPECT_NE(tty.str().find("\r\033[K"), std::string::npos);
}

namespace {
// An ostream that counts its flushes, so that "the line is out now" can be asserted (a pipe to a
// log collector sees a step's line when it starts, not when the buffer fills).
class FlushCounter : public std::stringbuf {
 public:
  int flushes = 0;

 protected:
  int sync() override {
    ++flushes;
    return std::stringbuf::sync();
  }
};
}  // namespace

TEST(Progress, EtaAtEachFieldsEdge) {
  EXPECT_EQ(TextProgress::formatEta(0), "0:00");
  EXPECT_EQ(TextProgress::formatEta(0.4), "0:00");
  EXPECT_EQ(TextProgress::formatEta(0.6), "0:01");
  EXPECT_EQ(TextProgress::formatEta(1), "0:01");
  EXPECT_EQ(TextProgress::formatEta(59), "0:59");
  EXPECT_EQ(TextProgress::formatEta(60), "1:00");
  EXPECT_EQ(TextProgress::formatEta(3540), "59:00");
  EXPECT_EQ(TextProgress::formatEta(3599), "59:59");
  EXPECT_EQ(TextProgress::formatEta(3600), "1:00:00");
  EXPECT_EQ(TextProgress::formatEta(7200), "2:00:00");
  EXPECT_EQ(TextProgress::formatEta(10797), "2:59:57");
  EXPECT_EQ(TextProgress::formatEta(-3600), "0:00");
  EXPECT_EQ(TextProgress::formatEta(std::numeric_limits<double>::infinity()), "0:00");
  EXPECT_EQ(TextProgress::formatEta(std::numeric_limits<double>::quiet_NaN()), "0:00");
}

TEST(Progress, BarIsClampedAndRoundsDown) {
  EXPECT_EQ(TextProgress::bar(-1, 4), "[....]");
  EXPECT_EQ(TextProgress::bar(0, 4), "[....]");
  EXPECT_EQ(TextProgress::bar(0.3, 10), "[###.......]");
  EXPECT_EQ(TextProgress::bar(0.49, 4), "[#...]");
  EXPECT_EQ(TextProgress::bar(1, 4), "[####]");
}

// Quiet (not a terminal): a line per step and per warn/fail check, flushed at once; passes, skips
// and progress say nothing; a node-wide check has no GPU.
TEST(Progress, QuietLinesExactly) {
  FlushCounter buf;
  std::ostream out(&buf);
  TextProgress q(out, false);
  q.stepStarted(1, 9, "deployment checks (doctor)", 1);
  EXPECT_EQ(buf.flushes, 1);
  q.progress(1.0, 0, "x");
  q.checkDone(Check{"ecc", "e", 0, Verdict::Warn, "1 uncorrectable", {}, "", {}, 0, {}});
  EXPECT_EQ(buf.flushes, 2);
  q.checkDone(Check{"deployment", "d", -1, Verdict::Fail, "nouveau loaded", {}, "", {}, 0, {}});
  q.checkDone(Check{"memtest", "m", 2, Verdict::Skip, "skipped", {}, "", {}, 0, {}});
  q.checkDone(Check{"memtest", "m", 2, Verdict::Incomplete, "?", {}, "", {}, 0, {}});
  q.finished(DiagReport{});
  EXPECT_EQ(buf.str(),
            "diag: step 1/9: deployment checks (doctor) (~0:01)\n"
            "diag: WARN GPU 0 ecc: 1 uncorrectable\n"
            "diag: FAIL deployment: nouveau loaded\n"
            "diag: WARN GPU 2 memtest: ?\n");
}

// On a terminal: the bar is redrawn in place (a final 100 % always), a warn/fail line first clears
// it, and the line is cleared only while something is drawn.
TEST(Progress, TerminalRedrawsExactly) {
  FlushCounter buf;
  std::ostream out(&buf);
  TextProgress t(out, true);
  t.stepStarted(1, 9, "deployment", 1);  // a terminal shows the bar, not step lines
  EXPECT_EQ(buf.str(), "");
  t.checkDone(Check{"ecc", "e", 0, Verdict::Warn, "w", {}, "", {}, 0, {}});  // nothing drawn yet
  EXPECT_EQ(buf.str(), "diag: WARN GPU 0 ecc: w\n");
  buf.str("");
  const int before = buf.flushes;
  t.progress(0.5, 83, "memtest");
  EXPECT_EQ(buf.flushes, before + 1);
  t.progress(1.0, 0, "a step title that is longer than forty characters, cut");
  EXPECT_EQ(buf.str(),
            "\r\033[K[###############...............]  50%  memtest  ETA 1:23"
            "\r\033[K[##############################] 100%  a step title that is longer than forty c  ETA 0:00");
  buf.str("");
  t.checkDone(Check{"memtest", "m", 1, Verdict::Fail, "5 errors", {}, "", {}, 0, {}});
  t.checkDone(Check{"memtest", "m", 0, Verdict::Warn, "slow", {}, "", {}, 0, {}});
  EXPECT_EQ(buf.str(), "\r\033[Kdiag: FAIL GPU 1 memtest: 5 errors\ndiag: WARN GPU 0 memtest: slow\n");
  buf.str("");
  t.progress(1.5, -1, "x");  // clamped to 100 %
  t.finished(DiagReport{});
  EXPECT_EQ(buf.str(), "\r\033[K[##############################] 100%  x  ETA 0:00\r\033[K");
  buf.str("");
  t.finished(DiagReport{});  // nothing drawn: nothing to clear
  EXPECT_EQ(buf.str(), "");
}

namespace {
// Every section of the text report: node checks, two GPUs (one with serial, VBIOS and a SKU, one
// without), checks of each verdict (a pass's evidence stays hidden, a warn's and a fail's show),
// pairs, and the verdicts.
DiagReport everySection() {
  DiagReport r;
  r.level = 3;
  r.seconds = 12.34;
  r.cuda_status = "ready";
  r.stack = {"0.1.0", "550.54.15", 12040, 12080};
  r.gpus = {
      {0, "NVIDIA H100 80GB HBM3", "GPU-a", "00000000:17:00.0", "h100-sxm5-80gb", Verdict::Pass, {}, "1654", "96.00"},
      {1, "Tesla T4", "GPU-b", "00000000:18:00.0", "", Verdict::Pass, {}, "", ""}};
  r.checks = {
      Check{"deployment", "kernel module", -1, Verdict::Pass, "nvidia.ko loaded", {"hidden"}, "", {}, 0, {}},
      Check{"deployment", "nouveau", -1, Verdict::Warn, "nouveau loaded", {"lsmod"}, "blacklist it", {}, 0, {}},
      Check{"cuda_deploy", "CUDA deployment test", 0, Verdict::Pass, "ok", {"not shown"}, "not shown", {}, 0, {}},
      Check{"ecc", "ECC error counters", 0, Verdict::Warn, "1 DBE", {"since load"}, "", {}, 0, {}},
      Check{"cuda_deploy", "CUDA deployment test", 1, Verdict::Fail, "wrong sums", {"e1", "e2"}, "replace", {}, 0, {}},
      Check{"memtest", "device memory test", 1, Verdict::Skip, "skipped: x", {"n"}, "n", {}, 0, {}},
      Check{"p2p_bandwidth", "peer-to-peer bandwidth", -1, Verdict::Pass, "GPU0->GPU1 fine", {}, "", {}, 0, {0, 1}},
      Check{"p2p_bandwidth",
            "peer-to-peer bandwidth",
            -1,
            Verdict::Warn,
            "GPU1->GPU0 slow",
            {},
            "see topo",
            {},
            0,
            {1, 0}},
  };
  for (auto& c : r.checks) c.measured = nlohmann::json::object();  // `{}` above made it null
  r.finalize();
  return r;
}
}  // namespace

TEST(Report, TextOfEverySectionExactly) {
  const DiagReport r = everySection();
  EXPECT_EQ(renderText(r),
            "gpuwarden diag -r 3  (12.3 s)\n"
            "driver 550.54.15, CUDA 12.4 (driver), runtime 12.8, gpuwarden 0.1.0\n"
            "CUDA tests: ready\n"
            "\n"
            "Node\n"
            "  PASS  kernel module                    nvidia.ko loaded\n"
            "  WARN  nouveau                          nouveau loaded\n"
            "          - lsmod\n"
            "          -> blacklist it\n"
            "\n"
            "GPU 0  NVIDIA H100 80GB HBM3  00000000:17:00.0  [thresholds: h100-sxm5-80gb]  serial 1654  VBIOS 96.00\n"
            "  PASS  CUDA deployment test             ok\n"
            "  WARN  ECC error counters               1 DBE\n"
            "          - since load\n"
            "\n"
            "GPU 1  Tesla T4  00000000:18:00.0\n"
            "  FAIL  CUDA deployment test             wrong sums\n"
            "          - e1\n"
            "          - e2\n"
            "          -> replace\n"
            "  SKIP  device memory test               skipped: x\n"
            "\n"
            "GPU pairs\n"
            "  PASS  peer-to-peer bandwidth           GPU0->GPU1 fine\n"
            "  WARN  peer-to-peer bandwidth           GPU1->GPU0 slow\n"
            "          -> see topo\n"
            "\n"
            "Verdict\n"
            "  GPU 0: WARN\n"
            "      warn ecc: 1 DBE\n"
            "      warn p2p_bandwidth: GPU1->GPU0 slow\n"
            "  GPU 1: FAIL\n"
            "      fail cuda_deploy: wrong sums\n"
            "      warn p2p_bandwidth: GPU1->GPU0 slow\n"
            "  overall: FAIL (exit 1)\n");
}

// Without node or pair checks their headings are left out; an unknown stack says so; no CUDA
// status, no line; an incomplete run says why it does not accept its GPUs.
TEST(Report, TextOfAnIncompleteRunExactly) {
  DiagReport r;
  r.level = 1;
  r.gpus = {{0, "NVIDIA H200", "GPU-a", "0000:17:00.0", "", Verdict::Pass, {}, "", ""}};
  r.checks = {Check{"cuda_deploy", "CUDA", 0, Verdict::Skip, "skipped: no GPU", {}, "", {}, 0, {}}};
  r.finalize();
  EXPECT_EQ(renderText(r),
            "gpuwarden diag -r 1  (0.0 s)\n"
            "driver unknown, CUDA unknown (driver), runtime none loaded, gpuwarden unknown\n"
            "\n"
            "GPU 0  NVIDIA H200  0000:17:00.0\n"
            "  SKIP  CUDA                             skipped: no GPU\n"
            "\n"
            "Verdict\n"
            "  GPU 0: INCOMPLETE\n"
            "      incomplete: no GPU test ran (skipped: no GPU)\n"
            "  overall: INCOMPLETE (exit 4)\n"
            "  No GPU test ran on the GPUs marked INCOMPLETE: this run does not accept them. Run it where\n"
            "  CUDA sees them (driver, libgpuwarden-cuda.so, CUDA_VISIBLE_DEVICES).\n");
}

TEST(Report, TextOfARunThatCouldNotRunIsTheErrorAlone) {
  DiagReport r;
  r.level = 2;
  r.seconds = 0.05;
  r.error = "no GPU found";
  r.cuda_status = "not needed";
  EXPECT_EQ(renderText(r), "gpuwarden diag -r 2  (0.1 s)\nerror: no GPU found\n");
  EXPECT_EQ(toJson(r)["error"], "no GPU found");
  EXPECT_EQ(toJson(r)["exit_code"], 2);
}

// finalize(): a node-wide warning counts for the run but no GPU; a pair's verdict is both GPUs';
// a check of a GPU not in the report still counts for the run; a skip changes no verdict; of
// several skipped GPU tests the first one's reason is given.
TEST(Report, FinalizeAttributesEachCheck) {
  DiagReport r;
  r.level = 2;
  r.gpus = {{0, "a", "", "", "", Verdict::Fail, {"stale"}, "", ""}, {1, "b", "", "", "", Verdict::Pass, {}, "", ""}};
  r.checks = {Check{"deployment", "d", -1, Verdict::Warn, "node", {}, "", {}, 0, {}},
              Check{"cuda_deploy", "c", 0, Verdict::Pass, "ok", {}, "", {}, 0, {}},
              Check{"cuda_deploy", "c", 1, Verdict::Pass, "ok", {}, "", {}, 0, {}}};
  r.finalize();
  EXPECT_EQ(r.overall, Verdict::Warn);
  EXPECT_EQ(r.gpus[0].verdict, Verdict::Pass);
  EXPECT_TRUE(r.gpus[0].reasons.empty());
  EXPECT_EQ(r.gpus[1].verdict, Verdict::Pass);
  EXPECT_EQ(r.exitCode(), 0);

  r.checks.push_back(Check{"p2p_bandwidth", "p", -1, Verdict::Fail, "GPU1->GPU0 no peer", {}, "", {}, 0, {1, 0}});
  r.finalize();
  EXPECT_EQ(r.gpus[0].verdict, Verdict::Fail);
  EXPECT_EQ(r.gpus[0].reasons, (std::vector<std::string>{"fail p2p_bandwidth: GPU1->GPU0 no peer"}));
  EXPECT_EQ(r.gpus[1].reasons, r.gpus[0].reasons);
  EXPECT_EQ(r.overall, Verdict::Fail);

  r.checks.pop_back();
  r.checks.push_back(Check{"memtest", "m", 7, Verdict::Fail, "not ours", {}, "", {}, 0, {}});
  r.checks.push_back(Check{"memtest", "m", 1, Verdict::Skip, "skipped", {}, "", {}, 0, {}});
  r.finalize();
  EXPECT_EQ(r.overall, Verdict::Fail);
  EXPECT_EQ(r.gpus[0].verdict, Verdict::Pass);
  EXPECT_EQ(r.gpus[1].verdict, Verdict::Pass);
  EXPECT_TRUE(r.gpus[1].reasons.empty());

  DiagReport skipped;
  skipped.level = 2;
  skipped.gpus = {{0, "a", "", "", "", Verdict::Pass, {}, "", ""}};
  skipped.checks = {Check{"ecc", "e", 0, Verdict::Skip, "not supported", {}, "", {}, 0, {}},
                    Check{"cuda_deploy", "c", 0, Verdict::Skip, "skipped: first", {}, "", {}, 0, {}},
                    Check{"memtest", "m", 0, Verdict::Skip, "skipped: second", {}, "", {}, 0, {}},
                    Check{"p2p_bandwidth", "p", -1, Verdict::Pass, "other pair", {}, "", {}, 0, {1, 2}}};
  skipped.finalize();
  EXPECT_EQ(skipped.gpus[0].verdict, Verdict::Incomplete);
  EXPECT_EQ(skipped.gpus[0].reasons, (std::vector<std::string>{"incomplete: no GPU test ran (skipped: first)"}));
  // A GPU test that ran on the GPU as one end of a pair makes it tested.
  skipped.checks.back().gpus_involved = {0, 2};
  skipped.finalize();
  EXPECT_EQ(skipped.gpus[0].verdict, Verdict::Pass);
  EXPECT_EQ(skipped.overall, Verdict::Pass);
}

// Exit codes of each overall verdict, and an error before all of them.
TEST(Report, ExitCodeOfEachVerdict) {
  DiagReport r;
  const std::pair<Verdict, int> cases[] = {
      {Verdict::Skip, 0}, {Verdict::Pass, 0}, {Verdict::Warn, 0}, {Verdict::Incomplete, 4}, {Verdict::Fail, 1}};
  for (const auto& [v, code] : cases) {
    r.overall = v;
    r.error.clear();
    EXPECT_EQ(r.exitCode(), code) << verdictName(v);
    r.error = "cancelled";
    EXPECT_EQ(r.exitCode(), 2) << verdictName(v);
  }
  for (Verdict v : {Verdict::Skip, Verdict::Pass, Verdict::Warn, Verdict::Incomplete, Verdict::Fail}) {
    Verdict back = Verdict::Pass;
    ASSERT_TRUE(verdictFromName(verdictName(v), back)) << verdictName(v);
    EXPECT_EQ(back, v);
  }
  Verdict untouched = Verdict::Warn;
  EXPECT_FALSE(verdictFromName("PASS", untouched));
  EXPECT_FALSE(verdictFromName("", untouched));
  EXPECT_EQ(untouched, Verdict::Warn);
  EXPECT_EQ(worst(Verdict::Incomplete, Verdict::Warn), Verdict::Incomplete);
  EXPECT_EQ(worst(Verdict::Skip, Verdict::Pass), Verdict::Pass);
}

TEST(Report, CudaVersionText) {
  EXPECT_EQ(cudaVersionText(0), "");
  EXPECT_EQ(cudaVersionText(-1), "");
  EXPECT_EQ(cudaVersionText(12040), "12.4");
  EXPECT_EQ(cudaVersionText(12000), "12.0");
  EXPECT_EQ(cudaVersionText(11080), "11.8");
  EXPECT_EQ(cudaVersionText(10990), "10.99");
}

// The whole JSON document, every field, and back: what a fleet stores is read again unchanged.
TEST(Report, JsonOfEverySectionExactlyAndBack) {
  DiagReport r = everySection();
  r.node = "gpu-17";
  r.checks[4].measured = {{"mismatches", 3}, {"n", 4194304}};
  r.checks[4].seconds = 1.5;
  const auto j = toJson(r);
  const auto expected = nlohmann::json::parse(R"({
    "level": 3, "node": "gpu-17", "seconds": 12.34, "overall": "fail", "exit_code": 1, "cuda": "ready",
    "stack": {"gpuwarden_version": "0.1.0", "driver_version": "550.54.15", "cuda_driver_version": "12.4",
              "cuda_runtime_version": "12.8"},
    "gpus": [
      {"index": 0, "name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-a", "pci_bus_id": "00000000:17:00.0",
       "serial": "1654", "vbios_version": "96.00", "thresholds": "h100-sxm5-80gb", "verdict": "warn",
       "reasons": ["warn ecc: 1 DBE", "warn p2p_bandwidth: GPU1->GPU0 slow"]},
      {"index": 1, "name": "Tesla T4", "uuid": "GPU-b", "pci_bus_id": "00000000:18:00.0", "serial": null,
       "vbios_version": null, "thresholds": "", "verdict": "fail",
       "reasons": ["fail cuda_deploy: wrong sums", "warn p2p_bandwidth: GPU1->GPU0 slow"]}],
    "checks": [
      {"test": "deployment", "title": "kernel module", "verdict": "pass", "summary": "nvidia.ko loaded",
       "evidence": ["hidden"], "measured": {}, "seconds": 0},
      {"test": "deployment", "title": "nouveau", "verdict": "warn", "summary": "nouveau loaded",
       "evidence": ["lsmod"], "measured": {}, "seconds": 0, "action": "blacklist it"},
      {"test": "cuda_deploy", "title": "CUDA deployment test", "verdict": "pass", "summary": "ok",
       "evidence": ["not shown"], "measured": {}, "seconds": 0, "gpu": 0, "action": "not shown"},
      {"test": "ecc", "title": "ECC error counters", "verdict": "warn", "summary": "1 DBE",
       "evidence": ["since load"], "measured": {}, "seconds": 0, "gpu": 0},
      {"test": "cuda_deploy", "title": "CUDA deployment test", "verdict": "fail", "summary": "wrong sums",
       "evidence": ["e1", "e2"], "measured": {"mismatches": 3, "n": 4194304}, "seconds": 1.5, "gpu": 1,
       "action": "replace"},
      {"test": "memtest", "title": "device memory test", "verdict": "skip", "summary": "skipped: x",
       "evidence": ["n"], "measured": {}, "seconds": 0, "gpu": 1, "action": "n"},
      {"test": "p2p_bandwidth", "title": "peer-to-peer bandwidth", "verdict": "pass", "summary": "GPU0->GPU1 fine",
       "evidence": [], "measured": {}, "seconds": 0, "gpus": [0, 1]},
      {"test": "p2p_bandwidth", "title": "peer-to-peer bandwidth", "verdict": "warn", "summary": "GPU1->GPU0 slow",
       "evidence": [], "measured": {}, "seconds": 0, "gpus": [1, 0], "action": "see topo"}]
  })");
  EXPECT_EQ(j, expected) << j.dump(2);
  auto back = reportFromJson(j);
  ASSERT_TRUE(back.ok()) << back.error();
  EXPECT_EQ(toJson(*back), j);
  EXPECT_EQ(renderText(*back), renderText(r));
  EXPECT_EQ(back->node, "gpu-17");
  EXPECT_EQ(back->seconds, 12.34);
  EXPECT_EQ(back->checks[4].seconds, 1.5);
  EXPECT_EQ(back->checks[0].gpu, -1);
  EXPECT_EQ(back->gpus[1].verdict, Verdict::Fail);
  EXPECT_EQ(back->overall, Verdict::Fail);
}

// Older or hand-written reports: an absent or null optional field keeps its default; a present one
// of the wrong type is an error naming it.
TEST(Report, StoredReportsNullsAndWrongTypes) {
  const auto minimal = reportFromJson(nlohmann::json::parse(R"({"level": 2})"));
  ASSERT_TRUE(minimal.ok()) << minimal.error();
  EXPECT_EQ(minimal->level, 2);
  EXPECT_EQ(minimal->overall, Verdict::Pass);
  EXPECT_TRUE(minimal->gpus.empty());
  EXPECT_TRUE(minimal->checks.empty());
  const auto nulls = reportFromJson(nlohmann::json::parse(R"({"level": 1, "seconds": null, "node": null,
      "overall": null, "error": null, "cuda": null, "stack": null, "gpus": [{"index": 0, "name": null,
      "reasons": null, "verdict": null}], "checks": [{"test": "ecc", "gpu": null, "evidence": null,
      "gpus": null, "seconds": null}]})"));
  ASSERT_TRUE(nulls.ok()) << nulls.error();
  EXPECT_EQ(nulls->gpus[0].verdict, Verdict::Pass);
  EXPECT_EQ(nulls->checks[0].gpu, -1);
  EXPECT_EQ(nulls->checks[0].test, "ecc");
  EXPECT_TRUE(nulls->checks[0].measured.is_object());
  const auto noNull = reportFromJson(nlohmann::json::parse(R"({"level": null})"));
  EXPECT_EQ(noNull.error(), "level: missing");

  auto err = [](const char* text) {
    auto r = reportFromJson(nlohmann::json::parse(text));
    return r.ok() ? std::string("ok") : r.error();
  };
  EXPECT_EQ(err(R"({"level": 1, "node": 5})"), "node: must be a string");
  EXPECT_EQ(err(R"({"level": 1.5})"), "level: must be an integer");
  // Past int's range is no integer of ours (get<int>() would have wrapped 2^32+1 to level 1).
  EXPECT_EQ(err(R"({"level": 4294967297})"), "level: must be an integer");
  EXPECT_EQ(err(R"({"level": -4294967295})"), "level: must be an integer");
  EXPECT_EQ(err(R"({"level": 1, "checks": [{"gpu": 2147483648}]})"), "checks[0].gpu: must be an integer");
  EXPECT_EQ(err(R"({"level": 1, "checks": [{"gpus": [4294967296]}]})"),
            "checks[0].gpus: must be an array of GPU indices");
  EXPECT_EQ(err(R"({"level": 1, "checks": [{"gpu": 2147483647, "gpus": [-2147483648]}]})"), "ok");
  EXPECT_EQ(err(R"({"level": 1, "seconds": "5"})"), "seconds: must be a number");
  EXPECT_EQ(err(R"({"level": 1, "stack": "x"})"), "stack: must be an object");
  EXPECT_EQ(err(R"({"level": 1, "gpus": {}})"), "gpus: must be an array");
  EXPECT_EQ(err(R"({"level": 1, "gpus": [5]})"), "gpus[0]: must be an object");
  EXPECT_EQ(err(R"({"level": 1, "gpus": [{"name": "x"}]})"), "gpus[0].index: missing");
  EXPECT_EQ(err(R"({"level": 1, "gpus": [{"index": 0}, {"index": 1, "reasons": "x"}]})"),
            "gpus[1].reasons: must be an array of strings");
  EXPECT_EQ(err(R"({"level": 1, "gpus": [{"index": 0, "reasons": ["a", 1]}]})"),
            "gpus[0].reasons: must be an array of strings");
  EXPECT_EQ(err(R"({"level": 1, "checks": "x"})"), "checks: must be an array");
  EXPECT_EQ(err(R"({"level": 1, "checks": [null]})"), "checks[0]: must be an object");
  EXPECT_EQ(err(R"({"level": 1, "checks": [{}, {"gpus": 3}]})"), "checks[1].gpus: must be an array of GPU indices");
  EXPECT_EQ(err(R"({"level": 1, "checks": [{"gpus": [0, "1"]}]})"), "checks[0].gpus: must be an array of GPU indices");
  EXPECT_EQ(err(R"({"level": 1, "checks": [{"verdict": "bad"}]})"), "checks[0].verdict: unknown verdict 'bad'");
  // The first error is the one named.
  EXPECT_EQ(err(R"({"level": 1, "node": 1, "cuda": 2})"), "node: must be a string");
}

// CUDA versions are "major.minor" with a minor of at most two digits, nothing after.
TEST(Report, StoredCudaVersionsAtTheirEdges) {
  auto version = [](const char* v) {
    nlohmann::json j = {{"level", 1}, {"stack", {{"cuda_driver_version", v}}}};
    auto r = reportFromJson(j);
    return r.ok() ? std::to_string(r->stack.cuda_driver_version) : r.error();
  };
  EXPECT_EQ(version("12.4"), "12040");
  EXPECT_EQ(version("9.2"), "9020");
  EXPECT_EQ(version("12.99"), "12990");
  EXPECT_EQ(version(""), "0");
  EXPECT_EQ(version("12.100"), "stack.cuda_driver_version: '12.100' is not a CUDA version (major.minor)");
  EXPECT_EQ(version("12"), "stack.cuda_driver_version: '12' is not a CUDA version (major.minor)");
  EXPECT_EQ(version("12.4x"), "stack.cuda_driver_version: '12.4x' is not a CUDA version (major.minor)");
  nlohmann::json rt = {{"level", 1}, {"stack", {{"cuda_runtime_version", "11.8"}}}};
  EXPECT_EQ(reportFromJson(rt)->stack.cuda_runtime_version, 11080);
  EXPECT_EQ(reportFromJson(nlohmann::json{{"level", 1}, {"stack", {{"cuda_runtime_version", 5}}}}).error(),
            "stack.cuda_runtime_version: must be a string");
}
