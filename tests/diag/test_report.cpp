#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
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
