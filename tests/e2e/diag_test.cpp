// gpuwarden diag against the simulator: the NVML checks run, the CUDA tests are skipped with a
// reason (the simulated GPUs are not visible to CUDA), so the run is incomplete (exit 4), and a
// lost GPU fails the run.
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
  ASSERT_EQ(r.code, 4) << describe(r);
  auto j = r.json();
  EXPECT_EQ(j["level"], 1);
  EXPECT_EQ(j["exit_code"], 4);
  EXPECT_EQ(j["overall"], "incomplete");
  ASSERT_EQ(j["gpus"].size(), 8u) << r.out;
  for (const auto& g : j["gpus"]) {
    ASSERT_TRUE(g.contains("verdict"));
    EXPECT_EQ(g["verdict"], "incomplete") << g.dump();
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
  ASSERT_EQ(r.code, 4) << describe(r);
  EXPECT_NE(r.out.find("Verdict"), std::string::npos) << r.out;
  for (int gpu = 0; gpu < 8; ++gpu)
    EXPECT_NE(r.out.find("  GPU " + std::to_string(gpu) + ": "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("overall: "), std::string::npos) << r.out;
}

// Issue 11: an acceptance run in which every GPU test was skipped must not end "WARN, exit 0".
// Under the simulator no GPU is visible to CUDA, so at every level each GPU test is skipped; the
// NVML checks still run and warn (the training jobs are stray processes to diag).
TEST(DiagE2E, EveryGpuTestSkippedIsIncompleteNotAPass) {
  for (const char* level : {"1", "2"}) {
    SCOPED_TRACE(std::string("-r ") + level);
    auto r = runGw({"--simulate", "dgx-h100", "diag", "-r", level, "--duration", "1", "--data-dir", "/nonexistent"});
    EXPECT_EQ(r.code, 4) << describe(r);
    EXPECT_NE(r.out.find("  GPU 0: INCOMPLETE\n"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("      warn processes: "), std::string::npos) << r.out;  // the warnings are kept
    EXPECT_NE(r.out.find("      incomplete: no GPU test ran (skipped: "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("  overall: INCOMPLETE (exit 4)\n"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("overall: WARN"), std::string::npos) << r.out;
  }
  // A failure still outranks it: a lost GPU fails the run (LostGpuFails).
  auto help = runGw({"diag", "--help"});
  EXPECT_EQ(help.code, 0) << describe(help);
  EXPECT_NE(help.out.find("  4  incomplete: "), std::string::npos) << help.out;
}

// The report says what it ran on: the simulator's driver and CUDA version, each GPU's serial
// and VBIOS, and this gpuwarden's version (the one --version prints).
TEST(DiagE2E, ReportRecordsDriverCudaVbiosSerialsAndVersion) {
  auto inv = runGw({"--simulate", "dgx-h100", "--json", "discovery"});
  ASSERT_EQ(inv.code, 0) << describe(inv);
  const auto ij = inv.json();
  auto ver = runGw({"--version"});
  ASSERT_EQ(ver.out.rfind("gpuwarden ", 0), 0u) << describe(ver);
  const std::string version = ver.out.substr(10, ver.out.find('\n') - 10);

  auto r = runGw({"--simulate", "dgx-h100", "diag", "-r", "1", "--json", "--data-dir", "/nonexistent"});
  const auto j = r.json();
  EXPECT_EQ(j["stack"]["gpuwarden_version"], version);
  EXPECT_EQ(j["stack"]["driver_version"], ij["driver_version"]) << j["stack"].dump() << ij.dump();
  EXPECT_EQ(j["stack"]["cuda_driver_version"], ij["cuda_driver_version"]) << j["stack"].dump();
  EXPECT_EQ(j["stack"]["driver_version"], "550.54.15");
  EXPECT_TRUE(j["stack"]["cuda_runtime_version"].is_null());  // no GPU test ran
  ASSERT_EQ(j["gpus"].size(), ij["gpus"].size());
  for (std::size_t i = 0; i < j["gpus"].size(); ++i) {
    EXPECT_EQ(j["gpus"][i]["serial"], ij["gpus"][i]["serial"]) << i;
    EXPECT_EQ(j["gpus"][i]["vbios_version"], ij["gpus"][i]["vbios_version"]) << i;
    EXPECT_FALSE(j["gpus"][i]["serial"].get<std::string>().empty());
    EXPECT_FALSE(j["gpus"][i]["vbios_version"].get<std::string>().empty());
  }
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

// fault-hang: from t=10 s every NVML call on GPU 5 blocks for 30 s. Before each call ran under
// the deadline, the first read of GPU 5 held the whole diagnostic up (every call goes through one
// mutex). Now GPU 5 fails every check it was asked for, and the other GPUs are judged as usual.
TEST(DiagE2E, AHungGpuFailsEveryCheckAndTheOthersAreStillJudged) {
  auto r = runGw({"--simulate", "fault-hang", "diag", "-r", "1", "--json", "--data-dir", "/nonexistent"},
                 {{"GPUWARDEN_SIM_START", "15"}});
  EXPECT_EQ(r.code, 1) << describe(r);
  auto j = r.json();
  ASSERT_EQ(j["gpus"].size(), 8u) << r.out;
  for (const auto& g : j["gpus"]) {
    const int index = g["index"].get<int>();
    SCOPED_TRACE(index);
    EXPECT_EQ(g["verdict"], index == 5 ? "fail" : "incomplete") << g.dump();
  }
  int hung_checks = 0;
  for (const auto& c : j["checks"]) {
    if (c.value("gpu", -1) != 5) continue;
    // The CUDA tests are skipped on every GPU here (no CUDA); every NVML check fails.
    if (c["verdict"] == "skip") continue;
    ++hung_checks;
    EXPECT_EQ(c["verdict"], "fail") << c.dump();
    EXPECT_EQ(c["summary"], "GPU does not answer: GPU 5 stalled: no answer from NVML within 2000 ms") << c.dump();
  }
  // pcie_link, retired_pages, row_remap, ecc, processes, persistence, inforom.
  EXPECT_EQ(hung_checks, 7) << r.out;
}

}  // namespace
}  // namespace gw::test
