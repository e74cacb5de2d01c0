// gpuwarden diag against the simulator: the NVML checks run, the CUDA tests are skipped with a
// reason (the simulated GPUs are not visible to CUDA), and a lost GPU fails the run.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "gw_run.h"

namespace gw::test {
namespace {

using nlohmann::json;

const json* findCheck(const json& j, const std::string& test, int gpu) {
  for (const auto& c : j["checks"])
    if (c["test"] == test && c.contains("gpu") && c["gpu"] == gpu) return &c;
  return nullptr;
}

TEST(DiagE2E, LevelOneJsonOnSimulatedDgx) {
  auto r = runGw({"--simulate", "dgx-h100", "diag", "-r", "1", "--json"});
  ASSERT_EQ(r.code, 0) << describe(r);
  auto j = r.json();
  EXPECT_EQ(j["level"], 1);
  EXPECT_EQ(j["exit_code"], 0);
  ASSERT_EQ(j["gpus"].size(), 8u) << r.out;
  for (const auto& g : j["gpus"]) {
    ASSERT_TRUE(g.contains("verdict"));
    EXPECT_TRUE(g["verdict"] == "pass" || g["verdict"] == "warn") << g.dump();
  }
  for (int gpu = 0; gpu < 8; ++gpu) {
    SCOPED_TRACE("GPU " + std::to_string(gpu));
    for (const char* test : {"persistence", "inforom"}) {
      const json* c = findCheck(j, test, gpu);
      ASSERT_NE(c, nullptr) << test;
      EXPECT_EQ((*c)["verdict"], "pass") << c->dump();
    }
    // Every GPU of the training scenario runs a job: diag warns, naming the process.
    const json* procs = findCheck(j, "processes", gpu);
    ASSERT_NE(procs, nullptr);
    EXPECT_EQ((*procs)["verdict"], "warn") << procs->dump();
    EXPECT_NE(procs->dump().find("python3"), std::string::npos) << procs->dump();
    // H100 remaps rows instead of retiring pages: one of the two answers, neither fails.
    const json* pages = findCheck(j, "retired_pages", gpu);
    const json* remap = findCheck(j, "row_remap", gpu);
    ASSERT_NE(pages, nullptr);
    ASSERT_NE(remap, nullptr);
    EXPECT_TRUE((*pages)["verdict"] == "pass" || (*remap)["verdict"] == "pass") << pages->dump() << remap->dump();
    EXPECT_NE((*pages)["verdict"], "fail");
    EXPECT_NE((*remap)["verdict"], "fail");
    const json* cuda = findCheck(j, "cuda_deploy", gpu);
    ASSERT_NE(cuda, nullptr);
    EXPECT_EQ((*cuda)["verdict"], "skip") << cuda->dump();
    std::string why = (*cuda)["summary"];
    EXPECT_TRUE(why.find("no GPU") != std::string::npos || why.find("built without CUDA") != std::string::npos ||
                why.find("not visible to CUDA") != std::string::npos)
        << why;
  }
}

TEST(DiagE2E, TextPrintsPerGpuVerdict) {
  auto r = runGw({"--simulate", "dgx-h100", "diag", "-r", "1"});
  ASSERT_EQ(r.code, 0) << describe(r);
  EXPECT_NE(r.out.find("Verdict"), std::string::npos) << r.out;
  for (int gpu = 0; gpu < 8; ++gpu)
    EXPECT_NE(r.out.find("  GPU " + std::to_string(gpu) + ": "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("overall: "), std::string::npos) << r.out;
}

TEST(DiagE2E, BadLevelIsUsageError) {
  auto r = runGw({"--simulate", "dgx-h100", "diag", "-r", "4"});
  EXPECT_EQ(r.code, 2) << describe(r);
  EXPECT_FALSE(r.err.empty());
}

TEST(DiagE2E, LostGpuFails) {
  auto r = runGw({"--simulate", "fault-gpu-lost", "diag", "-r", "1", "--json"}, {{"GPUWARDEN_SIM_START", "60"}});
  EXPECT_NE(r.code, 0) << describe(r);
  auto j = r.json();
  bool sawGpu3 = false;
  for (const auto& g : j["gpus"]) {
    if (g["index"] == 3) {
      sawGpu3 = true;
      EXPECT_EQ(g["verdict"], "fail") << g.dump();
    }
  }
  EXPECT_TRUE(sawGpu3) << r.out;
}

}  // namespace
}  // namespace gw::test
