#include <gtest/gtest.h>

#include <sstream>

#include "diag/progress.h"
#include "diag/report.h"

using namespace gw::diag;

namespace {
DiagReport sample() {
  DiagReport r;
  r.level = 2;
  r.cuda_status = "ready";
  r.gpus = {{0, "NVIDIA H200", "GPU-a", "00000000:17:00.0", "h200", Verdict::Pass, {}},
            {1, "NVIDIA H200", "GPU-b", "00000000:18:00.0", "h200", Verdict::Pass, {}}};
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
