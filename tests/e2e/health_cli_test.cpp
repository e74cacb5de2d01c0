// `gpuwarden health` standalone on the simulator: exit codes as Nagios and Slurm health checks
// expect (0 healthy, 1 warning, 2 critical/fatal, 3 unknown).
#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "gw_run.h"

namespace gw::test {
namespace {

using namespace std::chrono_literals;

TEST(HealthCli, HealthyFleetExitsZero) {
  auto r = runGw({"health", "--standalone", "--simulate", "dgx-h100", "--seconds", "2"}, {}, 20000ms);
  EXPECT_EQ(r.code, 0) << describe(r);
  EXPECT_NE(r.out.find("status: healthy"), std::string::npos) << describe(r);
}

TEST(HealthCli, EccDoubleBitExitsTwoAndNamesIt) {
  auto r = runGw({"--json", "health", "--standalone", "--simulate", "fault-ecc-dbe", "--seconds", "2"},
                 {{"GPUWARDEN_SIM_START", "35"}}, 20000ms);
  EXPECT_EQ(r.code, 2) << describe(r);
  EXPECT_NE(r.out.find("ecc_dbe"), std::string::npos) << describe(r);
  auto j = r.json();
  EXPECT_EQ(j["exit_code"], 2);
  EXPECT_EQ(j["gpus"][4]["state"], "critical") << j.dump(2);
}

// A node without a driver is told so at once: the check does not sit out its 600 s (the longest
// --seconds) waiting for an NVML it will not try again.
TEST(HealthCli, NoNvmlExitsThreeWithoutWaitingOutTheCheck) {
  auto r = runGw({"health", "--nvml-lib", "/nonexistent", "--seconds", "600"}, {}, 60000ms);
  EXPECT_EQ(r.code, 3) << describe(r);
  EXPECT_NE(r.out.find("status: unknown (cannot load the NVML library /nonexistent"), std::string::npos) << describe(r);
}

// A driver that does not match its library is the finding, at once; the source says how long the
// check watched, not the --seconds it was given.
TEST(HealthCli, DriverMismatchIsCriticalAtOnce) {
  auto r = runGw({"health", "--simulate", "driver-mismatch", "--seconds", "600"}, {}, 60000ms);
  EXPECT_EQ(r.code, 2) << describe(r);
  EXPECT_NE(r.out.find("node [critical] driver_mismatch: "), std::string::npos) << describe(r);
  EXPECT_NE(r.out.find("status: critical (NVML is not available: "), std::string::npos) << describe(r);
  EXPECT_EQ(r.out.find("[standalone, 600.0 s]"), std::string::npos) << describe(r);
  EXPECT_NE(r.out.find("[standalone, "), std::string::npos) << describe(r);
}

// Without --seconds a standalone check watches 3 s (the help says so), `health` and `slurm
// healthcheck` alike; the source names the time watched. The scontrol that is not there leaves
// the node's state unread: exit 3 with the JSON still written.
TEST(HealthCli, AStandaloneCheckWatchesThreeSecondsByDefault) {
  TempDir dir;
  const std::map<std::string, std::string> env{{"GPUWARDEN_SIM_STATE", dir.path() + "/sim-state"}};
  auto h = runGw({"--json", "health", "--simulate", "dgx-h100"}, env, 60000ms);
  EXPECT_EQ(h.code, 0) << describe(h);
  EXPECT_EQ(h.json()["source"], "standalone, 3.0 s") << describe(h);
  auto s =
      runGw({"--json", "slurm", "healthcheck", "--simulate", "dgx-h100", "--scontrol", "/nonexistent", "--node", "n1"},
            env, 60000ms);
  EXPECT_EQ(s.code, 3) << describe(s);
  EXPECT_EQ(s.json()["source"], "standalone, 3.0 s") << describe(s);
  EXPECT_EQ(s.json()["health"], 0) << describe(s);
}

// slurm healthcheck drains with the first critical finding, not the first finding: GPU 1's pending
// row remap (a warning) comes before GPU 4's double-bit ECC errors in the verdict. A dry run
// against a scontrol that only shows an idle node changes nothing.
TEST(HealthCli, TheDrainReasonIsTheFirstCriticalFindingNotAWarningBeforeIt) {
  TempDir dir;
  const std::string scenario = scenarioWithFaults(
      dir, "dgx-h100",
      {"{type: row_remap, gpu: 1, at: 1, correctable: 2, pending: true}", "{type: ecc_dbe, gpu: 4, at: 1, count: 2}"});
  const std::string scontrol = dir.write("scontrol", "#!/bin/sh\necho 'NodeName=gwnode1 Arch=x86_64 State=IDLE'\n");
  std::filesystem::permissions(scontrol, std::filesystem::perms::owner_all);
  const std::map<std::string, std::string> env{{"GPUWARDEN_SIM_STATE", dir.path() + "/sim-state"},
                                               {"GPUWARDEN_SIM_START", "5"}};
  auto h = runGw({"--json", "health", "--simulate", scenario, "--seconds", "1"}, env, 60000ms);
  ASSERT_EQ(h.code, 2) << describe(h);
  ASSERT_EQ(h.json()["gpus"][1]["findings"][0]["severity"], "warning") << describe(h);
  auto s = runGw({"--json", "slurm", "healthcheck", "--simulate", scenario, "--seconds", "1", "--scontrol", scontrol,
                  "--node", "gwnode1", "--dry-run"},
                 env, 60000ms);
  EXPECT_EQ(s.code, 2) << describe(s);
  EXPECT_EQ(s.json()["action"], "drain") << describe(s);
  EXPECT_EQ(s.json()["why"],
            "critical: draining (gpuwarden: GPU 4 ecc_dbe: GPU 4 reported uncorrectable (double-bit) ECC errors.)")
      << describe(s);
}

// A GPU already lost when the check starts (it fell off the bus at t=30 s): it has no UUID to be
// known by, and must still be judged, by its index — not crash the check, not read as "unknown".
TEST(HealthCli, GpuLostBeforeTheCheckStartsIsFatal) {
  auto r = runGw({"--json", "health", "--standalone", "--simulate", "fault-gpu-lost", "--seconds", "1"},
                 {{"GPUWARDEN_SIM_START", "40"}}, 20000ms);
  EXPECT_EQ(r.code, 2) << describe(r);
  auto j = r.json();
  EXPECT_EQ(j["status"], "fatal") << j.dump(2);
  const auto& g3 = j["gpus"][3];
  EXPECT_EQ(g3["index"], 3);
  EXPECT_EQ(g3["gpu_state"], "lost");
  EXPECT_EQ(g3["state"], "fatal") << g3.dump(2);
  ASSERT_FALSE(g3["findings"].empty()) << g3.dump(2);
  EXPECT_EQ(g3["findings"][0]["rule"], "gpu_lost");
  EXPECT_TRUE(j["node_findings"].empty()) << "the lost GPU's finding belongs to GPU 3, not the node";
  for (int i : {0, 1, 2, 4, 5, 6, 7}) EXPECT_EQ(j["gpus"][i]["state"], "healthy") << i;
}

// Cooling lost at t=30 s: GPU 0 reached its 92 °C shutdown at t=51 s and fell off the bus. A check
// started after that finds a lost GPU, judged fatal by its index, and the rest healthy.
TEST(HealthCli, ThermalShutdownLeavesALostGpu) {
  auto r = runGw({"--json", "health", "--standalone", "--simulate", "fault-thermal-runaway", "--seconds", "1"},
                 {{"GPUWARDEN_SIM_START", "60"}}, 20000ms);
  EXPECT_EQ(r.code, 2) << describe(r);
  auto j = r.json();
  EXPECT_EQ(j["status"], "fatal") << j.dump(2);
  const auto& g0 = j["gpus"][0];
  EXPECT_EQ(g0["gpu_state"], "lost");
  ASSERT_FALSE(g0["findings"].empty()) << g0.dump(2);
  EXPECT_EQ(g0["findings"][0]["rule"], "gpu_lost");
  for (int i = 1; i < 8; ++i) EXPECT_EQ(j["gpus"][i]["state"], "healthy") << i;
}

// Every call on GPU 5 blocks for 30 s (t=10..70 s): the check still answers within seconds, with
// GPU 5 unknown (stalled) and the others judged.
TEST(HealthCli, HungGpuDoesNotHoldUpTheCheck) {
  auto r = runGw({"--json", "health", "--standalone", "--simulate", "fault-hang", "--seconds", "1"},
                 {{"GPUWARDEN_SIM_START", "25"}}, 20000ms);
  EXPECT_EQ(r.code, 3) << describe(r);  // unknown: one GPU could not be judged
  auto j = r.json();
  EXPECT_EQ(j["gpus"][5]["gpu_state"], "stalled") << j.dump(2);
  EXPECT_EQ(j["gpus"][5]["state"], "unknown");
  EXPECT_EQ(j["gpus"][0]["state"], "healthy");
  // The text says why GPU 5 is unknown; a GPU that answers has no such note.
  auto t = runGw({"health", "--standalone", "--simulate", "fault-hang", "--seconds", "1"},
                 {{"GPUWARDEN_SIM_START", "25"}}, 20000ms);
  EXPECT_EQ(t.code, 3) << describe(t);
  EXPECT_NE(t.out.find("GPU 5      unknown  (NVML: stalled)\n"), std::string::npos) << t.out;
  EXPECT_EQ(t.out.find("healthy  (NVML"), std::string::npos) << t.out;
}

// nvidia-fabricmanager down is what a node check after a reboot is for: the rule's one-minute hold
// (which rides out a boot in the agent) cannot hide it from a one-second check. Before the fault the
// same board is healthy.
TEST(HealthCli, StandaloneSeesTheFabricNotRegisteredAtOnce) {
  auto r = runGw({"--json", "health", "--standalone", "--simulate", "fault-fabric-manager", "--seconds", "1"},
                 {{"GPUWARDEN_SIM_START", "40"}}, 20000ms);
  EXPECT_EQ(r.code, 2) << describe(r);
  auto j = r.json();
  ASSERT_EQ(j["gpus"].size(), 8u) << j.dump(2);
  for (const auto& g : j["gpus"]) {
    ASSERT_EQ(g["findings"].size(), 1u) << g.dump(2);
    EXPECT_EQ(g["findings"][0]["rule"], "fabric");
    EXPECT_EQ(g["findings"][0]["severity"], "critical");
    EXPECT_EQ(g["findings"][0]["evidence"], "fabric_status=1 (not started)");
  }
  r = runGw({"health", "--standalone", "--simulate", "fault-fabric-manager", "--seconds", "1"},
            {{"GPUWARDEN_SIM_START", "26"}}, 20000ms);
  EXPECT_EQ(r.code, 0) << describe(r);
}

// A scheduler's health program with the agent's configuration: eight GPUs on a node said to have
// nine is critical at once (no hold); the same file with the rule off is healthy; a bad file is
// "unknown", naming the file, the line and the key.
TEST(HealthCli, StandaloneJudgesWithTheConfigurationsHealthSection) {
  TempDir dir("gw-health-cli");
  const std::string nine = dir.write(
      "nine.yaml", "listen: 127.0.0.1:0\nhealth:\n  expected_gpus: 9\n");  // its 30 s hold: too long for a check
  auto r = runGw({"--json", "health", "--standalone", "--simulate", "dgx-h100", "--seconds", "1", "--config", nine}, {},
                 20000ms);
  EXPECT_EQ(r.code, 2) << describe(r);
  auto j = r.json();
  ASSERT_EQ(j["node_findings"].size(), 1u) << j.dump(2);
  EXPECT_EQ(j["node_findings"][0]["rule"], "gpu_count");
  EXPECT_EQ(j["node_findings"][0]["severity"], "critical");
  EXPECT_EQ(j["node_findings"][0]["evidence"], "visible=8 expected=9");

  const std::string off = dir.write("off.yaml", "health:\n  expected_gpus: 9\n  disabled: [gpu_count]\n");
  r = runGw({"health", "--standalone", "--simulate", "dgx-h100", "--seconds", "1", "--config", off}, {}, 20000ms);
  EXPECT_EQ(r.code, 0) << describe(r);

  const std::string bad = dir.write("bad.yaml", "health:\n  expected_gpus: nine\n");
  r = runGw({"health", "--standalone", "--simulate", "dgx-h100", "--seconds", "1", "--config", bad}, {}, 20000ms);
  EXPECT_EQ(r.code, 3) << describe(r);
  EXPECT_NE(r.err.find(bad + ":2: health.expected_gpus: expected a whole number, got 'nine'"), std::string::npos)
      << describe(r);
}

}  // namespace
}  // namespace gw::test
