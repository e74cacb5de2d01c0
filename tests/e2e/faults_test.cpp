// End to end: what an operator sees when the driver is missing, mismatched, a scenario is broken,
// or a GPU has fallen off the bus.
#include <gtest/gtest.h>

#include <chrono>

#include <regex>

#include "gw_run.h"

namespace gw::test {
namespace {

TEST(NoDriver, MissingLibraryExitsNonZeroWithOneSentence) {
  for (const char* cmd : {"discovery", "query", "dmon", "pmon", "topo"}) {
    std::vector<std::string> args{"--nvml-lib", "/nonexistent/libnvidia-ml.so.1", cmd};
    if (std::string(cmd) == "query") args.push_back("--query-gpu=index");
    if (std::string(cmd) == "dmon" || std::string(cmd) == "pmon") args.insert(args.end(), {"-c", "1"});
    auto r = runGw(args);
    EXPECT_EQ(r.code, 3) << cmd << "\n" << describe(r);
    EXPECT_TRUE(r.out.empty()) << cmd << ": no invented data\n" << r.out;
    EXPECT_NE(r.err.find("no NVIDIA driver is installed"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one line: " << r.err;
  }
}

TEST(NoDriver, EnvironmentVariableSelectsTheLibrary) {
  auto r = runGw({"discovery"}, {{"GPUWARDEN_NVML_LIB", "/nonexistent/libnvidia-ml-env.so"}});
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.err.find("libnvidia-ml-env.so"), std::string::npos) << r.err;
}

TEST(NoDriver, DriverNotLoaded) {
  auto r = runGw({"--simulate", "no-driver", "discovery"});
  EXPECT_EQ(r.code, 3) << describe(r);
  EXPECT_TRUE(r.out.empty());
  EXPECT_NE(r.err.find("NVIDIA driver is not loaded"), std::string::npos) << r.err;
}

TEST(NoDriver, DriverLibraryMismatchIsNamed) {
  auto r = runGw({"--simulate", "driver-mismatch", "query", "--query-gpu=index"});
  EXPECT_EQ(r.code, 3) << describe(r);
  EXPECT_NE(r.err.find("Driver/library version mismatch"), std::string::npos) << r.err;
}

TEST(OldDriver, MissingSymbolsShowAsNotAvailable) {
  auto r = runGw({"--nvml-lib", GW_MINIMAL_NVML, "query", "--query-gpu=index,name,temperature.gpu,memory.total",
                  "--format=csv,noheader"});
  ASSERT_EQ(r.code, 0) << describe(r);
  EXPECT_EQ(r.out, "0, Tesla V100-SXM2-16GB, [N/A], 16384 MiB\n");
}

TEST(Scenario, MalformedScenarioNamesFileLineAndField) {
  TempDir dir;
  std::string path = dir.write("broken.yaml",
                               "name: broken\n"
                               "gpus:\n"
                               "  - profile: H100-SXM5-80GB\n"
                               "    workload: trainnig\n");
  auto r = runGw({"--simulate", path, "discovery"});
  EXPECT_EQ(r.code, 3) << describe(r);
  EXPECT_NE(r.err.find("broken.yaml:4"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("workload"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("trainnig"), std::string::npos) << r.err;
}

TEST(Scenario, UnknownScenarioNameIsAUsageError) {
  auto r = runGw({"--simulate", "dgx-h900", "discovery"});
  EXPECT_EQ(r.code, 2) << describe(r);
  EXPECT_NE(r.err.find("unknown scenario 'dgx-h900'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("dgx-h100"), std::string::npos) << "lists the known ones: " << r.err;
}

// Every NVML call on GPU 5 blocks for 30 s from t=10 s: each command shows GPU 5 stalled after the
// 2 s call deadline, the other GPUs answer, and the command exits 1 at once instead of waiting
// out the hang (the exit through _Exit leaves the stuck thread inside NVML alone).
TEST(HungGpu, CommandsShowItStalledAndDoNotWaitForIt) {
  std::map<std::string, std::string> during{{"GPUWARDEN_SIM_START", "15"}};
  const auto t0 = std::chrono::steady_clock::now();
  auto q = runGw({"--simulate", "fault-hang", "query", "--query-gpu=index,temperature.gpu", "--format=csv,noheader"},
                 during, std::chrono::milliseconds(25000));
  EXPECT_EQ(q.code, 1) << describe(q);
  auto lines = q.lines();
  ASSERT_EQ(lines.size(), 8u) << q.out;
  EXPECT_EQ(lines[5], "5, [N/A]");
  for (int i : {0, 1, 2, 3, 4, 6, 7})
    EXPECT_TRUE(std::regex_match(lines[i], std::regex(std::to_string(i) + ", [0-9]+"))) << lines[i];
  // A bound from the fault, not a latency target: the first call on GPU 5 began after t0 and hangs
  // 30 s, so a command that waited for it could not end before t0 + 30 s; one that does not wait
  // ends at its 2 s call deadline, a tenth of the bound.
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(20));

  auto d = runGw({"--simulate", "fault-hang", "--json", "discovery"}, during, std::chrono::milliseconds(25000));
  EXPECT_EQ(d.code, 1) << describe(d);
  auto j = d.json();
  EXPECT_EQ(j["gpus"][5]["state"], "stalled") << j["gpus"][5].dump(2);
  EXPECT_EQ(j["gpus"][4]["state"], "ok");
  auto dt = runGw({"--simulate", "fault-hang", "discovery"}, during, std::chrono::milliseconds(25000));
  EXPECT_EQ(dt.code, 1) << describe(dt);
  EXPECT_NE(dt.out.find("GPU 5:  STALLED: no answer from NVML within 2000 ms"), std::string::npos) << dt.out;

  auto dm =
      runGw({"--simulate", "fault-hang", "dmon", "-c", "2", "-d", "0.2"}, during, std::chrono::milliseconds(25000));
  EXPECT_EQ(dm.code, 1) << describe(dm);
  // Piped, the rows stay nvidia-smi's columns; the stalled GPU is told on stderr.
  EXPECT_EQ(dm.out.find("<-"), std::string::npos) << dm.out;
  EXPECT_NE(dm.err.find("gpuwarden: GPU 5 stalled"), std::string::npos) << dm.err;

  auto pm = runGw({"--simulate", "fault-hang", "pmon", "-c", "1"}, during, std::chrono::milliseconds(25000));
  EXPECT_EQ(pm.code, 1) << describe(pm);
  EXPECT_NE(pm.err.find("gpuwarden: GPU 5 stalled"), std::string::npos) << pm.err;
}

TEST(LostGpu, LostGpuShowsAsLostWhileTheOthersAnswer) {
  std::map<std::string, std::string> after_fault{{"GPUWARDEN_SIM_START", "60"}};
  auto r = runGw({"--simulate", "fault-gpu-lost", "discovery", "--json"}, after_fault);
  EXPECT_EQ(r.code, 1) << describe(r);
  auto j = r.json();
  ASSERT_EQ(j["gpus"].size(), 8u);
  for (int i = 0; i < 8; ++i) {
    if (i == 3) {
      EXPECT_EQ(j["gpus"][i]["state"], "lost");
      EXPECT_NE(j["gpus"][i]["error"].get<std::string>().find("GPU is lost"), std::string::npos);
    } else {
      EXPECT_EQ(j["gpus"][i]["state"], "ok") << i;
      EXPECT_EQ(j["gpus"][i]["name"], "NVIDIA H100 80GB HBM3");
    }
  }
  auto q =
      runGw({"--simulate", "fault-gpu-lost", "query", "--query-gpu=index,temperature.gpu", "--format=csv,noheader"},
            after_fault);
  EXPECT_EQ(q.code, 1) << describe(q);
  auto lines = q.lines();
  ASSERT_EQ(lines.size(), 8u) << q.out;
  EXPECT_EQ(lines[3], "3, [GPU is lost]");
  EXPECT_TRUE(std::regex_match(lines[4], std::regex("4, [0-9]+"))) << lines[4];
  // Before the fault the same scenario is healthy.
  auto before = runGw({"--simulate", "fault-gpu-lost", "discovery", "--json"}, {{"GPUWARDEN_SIM_START", "0"}});
  EXPECT_EQ(before.code, 0) << describe(before);
  auto dmon = runGw({"--simulate", "fault-gpu-lost", "dmon", "-c", "1"}, after_fault);
  EXPECT_EQ(dmon.code, 1);
  EXPECT_EQ(dmon.out.find("<-"), std::string::npos) << dmon.out;
  EXPECT_NE(dmon.err.find("gpuwarden: GPU 3 lost"), std::string::npos) << dmon.err;
}

}  // namespace
}  // namespace gw::test
