// gpuwarden smi's MIG commands (issue 15: `smi -mig 0|1`, `smi mig -lgip/-lgipp/-lgi/-cgi/-dgi/
// -lcip/-lci/-cci/-dci`) against the NVML simulator, each command a process of its own as an
// operator runs nvidia-smi: the layout one process makes is the one the next lists (the
// simulator's state file, GPUWARDEN_SIM_STATE), capacity runs out with NVML's
// INSUFFICIENT_RESOURCES, instances in use are refused with IN_USE, MIG off and another user than
// root are clear errors, and every change is recorded (kind "setting", layout before and after).
// No agent answers here (a private runtime folder): smi applies and records alone; the agent's
// route is in tests/server/control_socket_test.cpp (ControlSocketSettings.SmiMig*).
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "gw_run.h"

namespace gw::test {
namespace {

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

struct Node {
  TempDir dir;
  std::string scenario;
  // Two H200s with no process: GPU 0 in MIG mode with no instance, GPU 1 whole.
  Node() {
    std::ofstream(dir.path() + "/mig-empty.yaml") << "description: \"2x H200, GPU 0 in MIG mode, no instances\"\n"
                                                     "seed: 7\n"
                                                     "driver_version: \"550.54.15\"\n"
                                                     "cuda_driver_version: 12040\n"
                                                     "defaults: {profile: H200-SXM-141GB, workload: idle}\n"
                                                     "gpus:\n"
                                                     "  - {bus_id: \"0000:18:00.0\", mig: {enabled: true}}\n"
                                                     "  - {bus_id: \"0000:2A:00.0\"}\n";
    scenario = dir.path() + "/mig-empty.yaml";
  }
  std::map<std::string, std::string> env(const std::string& boot = "0") const {
    return {{"GPUWARDEN_SIM_STATE", dir.path() + "/sim-state"},
            {"GPUWARDEN_SIM_BOOT", boot},
            {"GPUWARDEN_DATA_DIR", dir.path() + "/data"},
            {"GPUWARDEN_RUNTIME_DIR", dir.path() + "/run"}};
  }
  GwResult smi(std::vector<std::string> words, const std::string& boot = "0") const {
    std::vector<std::string> argv{"--simulate", scenario, "smi"};
    argv.insert(argv.end(), words.begin(), words.end());
    return runGw(argv, env(boot));
  }
  nlohmann::json records() const {
    if (!std::filesystem::exists(dir.path() + "/data/records.db")) return nlohmann::json::array();
    auto r = runGw({"--json", "records", "--kind", "setting", "--data-dir", dir.path() + "/data"}, env());
    EXPECT_EQ(r.code, 0) << describe(r);
    return r.code == 0 ? r.json()["records"] : nlohmann::json::array();
  }
};

const std::string kBorder = "+" + std::string(77, '-') + "+\n";

TEST(SmiMig, ListsTheGpuInstanceProfilesOfAnH200) {
  Node n;
  auto r = n.smi({"mig", "-lgip", "-i", "0"});
  ASSERT_EQ(r.code, 0) << describe(r);
  // nvidia-smi's columns (the R550 layout: this scenario's driver is 550), smallest profile
  // first; the H200's profiles as a real one reported them (src/sim/profiles.cpp).
  const std::string rows[] = {
      "|   0  MIG 1g.18gb       19         7/7     16.00     No    16     1     0    |\n"
      "|                                                            1     1     0    |\n",
      "|   0  MIG 1g.18gb+me    20         1/1     16.00     No    16     1     0    |\n"
      "|                                                            1     1     1    |\n",
      "|   0  MIG 1g.35gb       15         4/4     32.50     No    26     1     0    |\n"
      "|                                                            1     1     0    |\n",
      "|   0  MIG 2g.35gb       14         3/3     32.50     No    32     2     0    |\n"
      "|                                                            2     2     0    |\n",
      "|   0  MIG 3g.71gb        9         2/2     69.75     No    60     3     0    |\n"
      "|                                                            3     3     0    |\n",
      "|   0  MIG 4g.71gb        5         1/1     69.75     No    64     4     0    |\n"
      "|                                                            4     4     0    |\n",
      "|   0  MIG 7g.141gb       0         1/1    140.00     No   132     7     0    |\n"
      "|                                                            8     7     1    |\n",
  };
  std::size_t at = 0;
  for (const auto& row : rows) {
    const std::size_t found = r.out.find(row + kBorder, at);
    EXPECT_NE(found, std::string::npos) << "missing, or out of order:\n" << row << "in\n" << r.out;
    if (found != std::string::npos) at = found;
  }
  EXPECT_TRUE(r.out.starts_with(kBorder + "| GPU instance profiles:")) << r.out;
  EXPECT_TRUE(r.err.empty()) << r.err;

  auto places = n.smi({"mig", "-lgipp", "-i", "0"});
  ASSERT_EQ(places.code, 0) << describe(places);
  EXPECT_TRUE(has(places.out, "GPU  0 Profile ID 19 Placements: {0,1,2,3,4,5,6}:1\n")) << places.out;
  EXPECT_TRUE(has(places.out, "GPU  0 Profile ID  9 Placements: {0,4}:4\n")) << places.out;
  EXPECT_TRUE(has(places.out, "GPU  0 Profile ID  0 Placement : {0}:8\n")) << places.out;
}

TEST(SmiMig, OneSliceInstancesUntilNoneIsLeftThenInsufficientResources) {
  Node n;
  auto r = n.smi({"mig", "-cgi", "19,19,19,19,19,19,19", "-i", "0"});
  ASSERT_EQ(r.code, 0) << describe(r);
  for (unsigned id = 7; id <= 13; ++id)
    EXPECT_TRUE(has(r.out, "Successfully created GPU instance ID " + std::string(id < 10 ? " " : "") +
                               std::to_string(id) + " on GPU  0 using profile MIG 1g.18gb (ID 19)\n"))
        << r.out;
  auto full = n.smi({"mig", "-cgi", "1g.18gb", "-i", "0"});
  EXPECT_EQ(full.code, 23) << describe(full);
  EXPECT_EQ(full.out, "Unable to create a GPU instance on GPU  0 using profile 19: Insufficient Resources\n");
  EXPECT_TRUE(has(full.err, "gpuwarden: no room is left on GPU 0 for another MIG 1g.18gb")) << full.err;
  auto lgip = n.smi({"mig", "-lgip", "-i", "0"});
  ASSERT_EQ(lgip.code, 0) << describe(lgip);
  EXPECT_TRUE(has(lgip.out, "MIG 1g.18gb       19         0/7")) << lgip.out;
  EXPECT_TRUE(has(lgip.out, "MIG 7g.141gb       0         0/1")) << lgip.out;
  // Seven changes in one command: one record, the layout before and after.
  const auto recs = n.records();
  ASSERT_EQ(recs.size(), 1u) << recs.dump(2);
  EXPECT_EQ(recs[0]["changes"][0]["what"], "mig.layout");
  EXPECT_EQ(recs[0]["changes"][0]["before"], "no GPU instances");
  EXPECT_TRUE(has(recs[0]["changes"][0]["after"].get<std::string>(), "GI 13 MIG 1g.18gb at 6:1 (no CI)"))
      << recs.dump(2);
}

TEST(SmiMig, CreateWithTheDefaultComputeInstanceListDestroyInOrder) {
  Node n;
  auto create = n.smi({"mig", "-cgi", "9", "-C", "-i", "0"});
  ASSERT_EQ(create.code, 0) << describe(create);
  EXPECT_EQ(create.out,
            "Successfully created GPU instance ID  1 on GPU  0 using profile MIG 3g.71gb (ID  9)\n"
            "Successfully created compute instance ID  0 on GPU  0 GPU instance ID  1 using profile MIG 3g.71gb "
            "(ID  2)\n");

  auto lgi = n.smi({"mig", "-lgi"});  // another process reads what this one made
  ASSERT_EQ(lgi.code, 0) << describe(lgi);
  EXPECT_TRUE(has(lgi.out, "| GPU instances:")) << lgi.out;
  EXPECT_TRUE(has(lgi.out, "|   0  MIG 3g.71gb             9         1          0:4")) << lgi.out;
  auto lci = n.smi({"mig", "-lci", "-i", "0"});
  ASSERT_EQ(lci.code, 0) << describe(lci);
  EXPECT_TRUE(has(lci.out, "|   0        1  MIG 3g.71gb               2         0          0:3")) << lci.out;
  auto lcip = n.smi({"mig", "-lcip", "-gi", "1", "-i", "0"});
  ASSERT_EQ(lcip.code, 0) << describe(lcip);
  EXPECT_TRUE(has(lcip.out, "|   0        1  MIG 1c.3g.71gb         0          0/3     20     3     0    0 |"))
      << lcip.out;
  EXPECT_TRUE(has(lcip.out, "|   0        1  MIG 3g.71gb            2*         0/1     60     3     0    0 |"))
      << lcip.out;
  // The MIG device the compute instance made is a GPU of its own to the readers.
  auto list = n.smi({"-L"});
  ASSERT_EQ(list.code, 0) << describe(list);
  EXPECT_TRUE(has(list.out, "  MIG 3g.") && has(list.out, "Device  0: (UUID: MIG-")) << list.out;

  // As NVML: a GPU instance with compute instances in it is in use.
  auto busy = n.smi({"mig", "-dgi", "-gi", "1", "-i", "0"});
  EXPECT_EQ(busy.code, 19) << describe(busy);
  EXPECT_TRUE(has(busy.out, "Unable to destroy GPU instance ID  1 from GPU  0: In use by another client\n"))
      << busy.out;
  EXPECT_TRUE(has(busy.err, "destroy them first (smi mig -dci -gi 1 -i 0)")) << busy.err;

  auto dci = n.smi({"mig", "-dci", "-ci", "0", "-gi", "1", "-i", "0"});
  ASSERT_EQ(dci.code, 0) << describe(dci);
  EXPECT_EQ(dci.out, "Successfully destroyed compute instance ID  0 from GPU  0 GPU instance ID  1\n");
  auto dgi = n.smi({"mig", "-dgi", "-i", "0"});
  ASSERT_EQ(dgi.code, 0) << describe(dgi);
  EXPECT_EQ(dgi.out, "Successfully destroyed GPU instance ID  1 from GPU  0\n");
  auto empty = n.smi({"mig", "-lgi", "-i", "0"});
  EXPECT_EQ(empty.code, 6) << describe(empty);
  EXPECT_EQ(empty.out, "No GPU instances found: Not Found\n");
  auto no_ci = n.smi({"mig", "-lci", "-i", "0"});
  EXPECT_EQ(no_ci.code, 6) << describe(no_ci);

  // Three changes, three records: who, when, the layout before and after each.
  const auto recs = n.records();
  ASSERT_EQ(recs.size(), 3u) << recs.dump(2);
  std::set<std::string> summaries;
  for (const auto& rec : recs) {
    EXPECT_EQ(rec["kind"], "setting");
    EXPECT_TRUE(has(rec["who"].get<std::string>(), "uid " + std::to_string(::geteuid()))) << rec.dump(2);
    summaries.insert(rec["summary"].get<std::string>());
  }
  EXPECT_TRUE(summaries.count(
      "GPU 00000000:18:00.0: MIG created GPU instance 1 (3g.71gb), created compute instance 0 on GPU instance 1"))
      << recs.dump(2);
  EXPECT_TRUE(summaries.count("GPU 00000000:18:00.0: MIG destroyed GPU instance 1")) << recs.dump(2);
}

TEST(SmiMig, ComputeProfilesByNameAndTheDefault) {
  Node n;
  ASSERT_EQ(n.smi({"mig", "-cgi", "7g.141gb", "-i", "0"}).code, 0);
  auto cci = n.smi({"mig", "-cci", "1c.7g.141gb,2c.7g.141gb", "-gi", "0", "-i", "0"});
  ASSERT_EQ(cci.code, 0) << describe(cci);
  EXPECT_EQ(cci.out,
            "Successfully created compute instance ID  0 on GPU  0 GPU instance ID  0 using profile MIG 1c.7g.141gb "
            "(ID  0)\n"
            "Successfully created compute instance ID  1 on GPU  0 GPU instance ID  0 using profile MIG 2c.7g.141gb "
            "(ID  1)\n");
  auto bad = n.smi({"mig", "-cci", "5c.7g.141gb", "-gi", "0", "-i", "0"});
  EXPECT_EQ(bad.code, 2) << describe(bad);
  EXPECT_TRUE(has(bad.err, "offers the compute instance profiles 0 (1c.7g.141gb), 1 (2c.7g.141gb)")) << bad.err;
  // The default (all seven slices) no longer fits beside the two.
  auto dflt = n.smi({"mig", "-cci", "-gi", "0", "-i", "0"});
  EXPECT_EQ(dflt.code, 23) << describe(dflt);
  EXPECT_TRUE(has(dflt.out,
                  "Unable to create a compute instance on GPU  0 GPU instance ID  0 using profile 4: "
                  "Insufficient Resources\n"))
      << dflt.out;
  auto unknown = n.smi({"mig", "-cgi", "5g.99gb", "-i", "0"});
  EXPECT_EQ(unknown.code, 2) << describe(unknown);
  EXPECT_TRUE(has(unknown.err, "GPU 0 has no GPU instance profile '5g.99gb'; its profiles are 19 (1g.18gb), "))
      << unknown.err;
}

// A -gi that names no GPU instance is one sentence and NVML's NOT_FOUND for each change, nothing
// after it (not a second "No GPU instances found"), and nothing is changed.
TEST(SmiMig, AGpuInstanceThatIsNotThereIsOneSentence) {
  Node n;
  ASSERT_EQ(n.smi({"mig", "-cgi", "7g.141gb", "-i", "0"}).code, 0);
  const auto before = n.records().size();
  const std::pair<std::vector<std::string>, std::string> cases[] = {
      {{"-cci", "-gi", "9"}, "Unable to create a compute instance on GPU instance ID  9 on GPU  0: Not Found\n"},
      {{"-dci", "-gi", "9"}, "Unable to destroy compute instances of GPU instance ID  9 on GPU  0: Not Found\n"},
      {{"-dgi", "-gi", "9"}, "Unable to destroy GPU instance ID  9 on GPU  0: Not Found\n"},
  };
  for (const auto& [words, sentence] : cases) {
    std::vector<std::string> argv{"mig"};
    argv.insert(argv.end(), words.begin(), words.end());
    argv.insert(argv.end(), {"-i", "0"});
    auto r = n.smi(argv);
    EXPECT_EQ(r.code, 6) << describe(r);
    EXPECT_EQ(r.out + r.err, sentence) << describe(r);
  }
  EXPECT_EQ(n.records().size(), before);
  auto lgi = n.smi({"mig", "-lgi", "-i", "0"});
  EXPECT_TRUE(has(lgi.out, "MIG 7g.141gb")) << lgi.out;
}

// A process runs on a compute instance of mig-h100's GPU 0 (gi 2): NVML's IN_USE.
TEST(SmiMig, AComputeInstanceWithAProcessIsInUse) {
  Node n;
  n.scenario = "mig-h100";
  auto r = n.smi({"mig", "-dci", "-gi", "2", "-i", "0"});
  EXPECT_EQ(r.code, 19) << describe(r);
  EXPECT_TRUE(has(r.out,
                  "Unable to destroy compute instance ID  0 from GPU  0 GPU instance ID  2: In use by another "
                  "client\n"))
      << r.out;
  EXPECT_TRUE(has(r.err, "a process runs on compute instance 0 of GPU instance 2")) << r.err;
  // The empty 1g (gi 9) goes, in two steps.
  ASSERT_EQ(n.smi({"mig", "-dci", "-gi", "9", "-i", "0"}).code, 0);
  ASSERT_EQ(n.smi({"mig", "-dgi", "-gi", "9", "-i", "0"}).code, 0);
  auto lgi = n.smi({"mig", "-lgi", "-i", "0"});
  ASSERT_EQ(lgi.code, 0) << describe(lgi);
  EXPECT_FALSE(has(lgi.out, "MIG 1g.10gb")) << lgi.out;
  EXPECT_TRUE(has(lgi.out, "MIG 3g.40gb")) << lgi.out;
  auto missing = n.smi({"mig", "-dgi", "-gi", "9", "-i", "0"});
  EXPECT_EQ(missing.code, 6) << describe(missing);
  EXPECT_EQ(missing.out, "Unable to destroy GPU instance ID  9 on GPU  0: Not Found\n");
}

// With MIG off a list finds no MIG device and says so on stdout with success, as a real
// nvidia-smi 580.159.04 did (gpuwarden's hint goes to stderr); a change is refused.
TEST(SmiMig, MigOffListsFindNothingAndChangesAreRefused) {
  Node n;
  auto list = n.smi({"mig", "-lgi", "-i", "1"});
  EXPECT_EQ(list.code, 0) << describe(list);
  EXPECT_EQ(list.out, "No MIG-enabled devices found.\n");
  EXPECT_EQ(list.err,
            "gpuwarden: MIG mode is disabled on GPU 1 (00000000:2A:00.0): `gpuwarden smi -i 1 -mig 1` (as root) "
            "enables it.\n");
  // The profiles and their placements are the GPU's, listed with MIG off too.
  auto profiles = n.smi({"mig", "-lgip", "-i", "1"});
  EXPECT_EQ(profiles.code, 0) << describe(profiles);
  EXPECT_TRUE(has(profiles.out, "MIG 1g.18gb       19         7/7")) << profiles.out;
  auto create = n.smi({"mig", "-cgi", "19", "-i", "1"});
  EXPECT_EQ(create.code, 3) << describe(create);
  EXPECT_TRUE(has(create.out, "No MIG-enabled devices found.")) << create.out;
  EXPECT_TRUE(n.records().empty());
  auto pcie = runGw({"--simulate", "pcie-mixed", "smi", "mig", "-lgi"}, n.env());
  EXPECT_EQ(pcie.code, 0) << describe(pcie);
  EXPECT_EQ(pcie.out, "No MIG-enabled devices found.\n");
  EXPECT_TRUE(has(pcie.err, "does not support MIG")) << pcie.err;
}

TEST(SmiMig, MigModeIsEnabledAndKeptAcrossProcessesAndReboots) {
  Node n;
  auto on = n.smi({"-i", "1", "-mig", "1"});
  ASSERT_EQ(on.code, 0) << describe(on);
  EXPECT_EQ(on.out, "Enabled MIG Mode for GPU 00000000:2A:00.0\nAll done.\n");
  auto mode = n.smi({"--query-gpu=mig.mode.current,mig.mode.pending", "--format=csv,noheader", "-i", "1"});
  ASSERT_EQ(mode.code, 0) << describe(mode);
  EXPECT_EQ(mode.out, "Enabled, Enabled\n");
  ASSERT_EQ(n.smi({"mig", "-cgi", "19", "-C", "-i", "1"}).code, 0);
  const auto recs = n.records();
  ASSERT_EQ(recs.size(), 2u) << recs.dump(2);
  bool mode_record = false;
  for (const auto& rec : recs) {
    if (rec["changes"][0]["what"] != "mig.mode") continue;
    mode_record = true;
    EXPECT_EQ(rec["changes"][0]["before"], "Disabled (pending Disabled)");
    EXPECT_EQ(rec["changes"][0]["after"], "Enabled (pending Enabled)");
  }
  EXPECT_TRUE(mode_record) << recs.dump(2);
  // A reboot keeps the mode (the driver stores it) and loses the instances.
  auto lgi = n.smi({"mig", "-lgi", "-i", "1"}, "1");
  EXPECT_EQ(lgi.code, 6) << describe(lgi);
  auto lgip = n.smi({"mig", "-lgip", "-i", "1"}, "1");
  EXPECT_EQ(lgip.code, 0) << describe(lgip);
  // Disabling under instances, or with processes on the GPU, is refused.
  ASSERT_EQ(n.smi({"mig", "-cgi", "19", "-i", "1"}, "1").code, 0);
  auto busy = n.smi({"-i", "1", "-mig", "0"}, "1");
  EXPECT_EQ(busy.code, 19) << describe(busy);
  EXPECT_TRUE(has(busy.out, "Unable to disable MIG Mode for GPU 00000000:2A:00.0: In use by another client"))
      << busy.out;
  Node h100;
  h100.scenario = "mig-h100";
  auto running = h100.smi({"-i", "1", "-mig", "1"});
  EXPECT_EQ(running.code, 19) << describe(running);
  EXPECT_TRUE(has(running.err, "stop the processes on it")) << running.err;
}

// As the driver: only root changes the partitions; any user lists them.
// Scenarios made from one seed share GPU UUIDs: without the scenario's name in the state file,
// this layout would appear on the other scenario's GPU 0, where its file says MIG is off.
TEST(SmiMig, AStateFileOfAnotherScenarioIsRefusedByName) {
  Node n;
  ASSERT_EQ(n.smi({"mig", "-cgi", "19", "-C", "-i", "0"}).code, 0);
  std::filesystem::copy_file(n.scenario, n.dir.path() + "/twin.yaml");
  std::vector<std::string> argv{"--simulate", n.dir.path() + "/twin.yaml", "smi", "-L"};
  auto twin = runGw(argv, n.env());
  EXPECT_EQ(twin.code, 255) << describe(twin);
  EXPECT_TRUE(has(twin.out, "Failed to initialize NVML: Unknown Error")) << twin.out;
  EXPECT_TRUE(has(twin.err, "GPUWARDEN_SIM_STATE " + n.dir.path() + "/sim-state: written for scenario 'mig-empty', " +
                                "not 'twin': give each scenario a state file of its own"))
      << twin.err;
  // Its own scenario still reads it.
  auto own = n.smi({"-L"});
  EXPECT_EQ(own.code, 0) << describe(own);
  EXPECT_TRUE(has(own.out, "MIG 1g.18gb     Device  0:")) << own.out;
}

// A driver stuck creating a GPU instance stops the command at MIG's deadline (30 s a GPU): exit
// 255, the caller told the layout is unknown and how to read it back, instead of smi (or the
// agent's control thread) waiting forever.
TEST(SmiMig, ADriverThatHangsInACreateStopsTheCommandAtTheDeadline) {
  Node n;
  std::ofstream(n.scenario, std::ios::app)
      << "faults:\n  - {type: hang, gpu: 0, at: 0, duration: 3600, seconds: 60, call: nvmlDeviceCreateGpuInstance}\n";
  auto r = n.smi({"mig", "-cgi", "19", "-i", "0"});
  EXPECT_EQ(r.code, 255) << describe(r);
  EXPECT_TRUE(has(r.out,
                  "Unable to change the MIG layout of GPU 00000000:18:00.0: no answer from NVML within 30000 ms; "
                  "whether it changed is unknown (read it back with `gpuwarden smi mig -lgi`)\n"))
      << r.out;
  EXPECT_FALSE(has(r.out, "Successfully created")) << r.out;
  // Tried, outcome unknown: the record says the change may have happened.
  const auto recs = n.records();
  ASSERT_EQ(recs.size(), 1u) << recs.dump();
  EXPECT_EQ(recs[0]["state"]["bus_id"], "00000000:18:00.0") << recs.dump();
  EXPECT_EQ(recs[0]["state"]["outcome"], "unknown") << recs.dump();
  EXPECT_EQ(recs[0]["summary"],
            "GPU 00000000:18:00.0: mig -cgi sent, no answer from NVML within 30000 ms: whether it changed is unknown")
      << recs.dump();
  // Reads do not hang: the list still answers, with no instance.
  auto list = n.smi({"mig", "-lgi", "-i", "0"});
  EXPECT_EQ(list.code, 6) << describe(list);
  EXPECT_TRUE(has(list.out, "No GPU instances found: Not Found\n")) << list.out;
}

TEST(SmiMig, AnotherUserThanRootIsToldItNeedsRoot) {
  // The suite runs as root with util-linux's setpriv (scripts/setup; tests/allowed_skips.txt).
  ASSERT_EQ(::geteuid(), 0u) << "this test runs smi as another uid, which needs root";
  ASSERT_EQ(::access("/usr/bin/setpriv", X_OK), 0) << "setpriv (util-linux) is missing";
  Node n;
  ASSERT_EQ(::chmod(n.dir.path().c_str(), 0755), 0);
  platform::RunOptions o;
  o.timeout = std::chrono::seconds(60);
  o.env = {{"GPUWARDEN_RUNTIME_DIR", "/nonexistent/gw-run"}, {"GPUWARDEN_DATA_DIR", "/nonexistent/gw-data"}};
  platform::SystemProcessRunner runner;
  auto as_nobody = [&](std::vector<std::string> words) {
    std::vector<std::string> argv{"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                                  GW_BINARY,          "--simulate",    n.scenario,      "smi"};
    argv.insert(argv.end(), words.begin(), words.end());
    return runner.run(argv, o);
  };
  auto create = as_nobody({"mig", "-cgi", "19", "-C", "-i", "0"});
  EXPECT_EQ(create.exit_code, 4) << create.out << create.err;
  EXPECT_TRUE(has(create.out, "Unable to create a GPU instance on GPU  0 using profile 19: Insufficient Permissions\n"))
      << create.out;
  EXPECT_TRUE(has(create.err, "needs root: this process runs as uid 65534")) << create.err;
  auto mode = as_nobody({"-i", "1", "-mig", "1"});
  EXPECT_EQ(mode.exit_code, 4) << mode.out << mode.err;
  EXPECT_TRUE(has(mode.out, "Insufficient Permissions")) << mode.out;
  auto list = as_nobody({"mig", "-lgip", "-i", "0"});
  EXPECT_EQ(list.exit_code, 0) << list.out << list.err;
  EXPECT_TRUE(has(list.out, "MIG 1g.18gb")) << list.out;
}

}  // namespace
}  // namespace gw::test
