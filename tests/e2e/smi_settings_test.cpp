// gpuwarden smi's setting flags (issue 15, R24) against the NVML simulator, run as an operator
// runs nvidia-smi: each setter in range (read back by a second process through the simulator's
// state file, GPUWARDEN_SIM_STATE), out of range (nvidia-smi's message naming the board's range)
// and without privilege (a scenario with `privileged: false`: exit 4, the missing privilege
// named); -e pending until a simulated reboot; -r refused while processes run; every change
// recorded. No agent answers here (a private runtime folder): smi applies and records alone.
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iomanip>
#include <map>
#include <sstream>

#include "gw_run.h"

namespace gw::test {
namespace {

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

struct Node {
  TempDir dir;
  std::string scenario = "dgx-h100";
  std::map<std::string, std::string> env(const std::string& boot = "0") const {
    return {{"GPUWARDEN_SIM_STATE", dir.path() + "/sim-state"},
            {"GPUWARDEN_SIM_BOOT", boot},
            {"GPUWARDEN_DATA_DIR", dir.path() + "/data"},
            {"GPUWARDEN_RUNTIME_DIR", dir.path() + "/run"}};
  }
  GwResult smi(std::vector<std::string> words, const std::string& boot = "0",
               const std::vector<std::string>& before = {}) const {
    std::vector<std::string> argv = before;
    argv.insert(argv.end(), {"--simulate", scenario, "smi"});
    argv.insert(argv.end(), words.begin(), words.end());
    return runGw(argv, env(boot));
  }
  // One value of --query-gpu for GPU `gpu`, in a process of its own.
  std::string query(const std::string& field, const std::string& gpu = "0", const std::string& boot = "0") const {
    auto r = smi({"--query-gpu=" + field, "--format=csv,noheader", "-i", gpu}, boot);
    EXPECT_EQ(r.code, 0) << describe(r);
    std::string v = r.out;
    while (!v.empty() && (v.back() == '\n' || v.back() == ' ')) v.pop_back();
    return v;
  }
  nlohmann::json records() const {
    // smi creates the records database with the first change it records.
    if (!std::filesystem::exists(dir.path() + "/data/records.db")) return nlohmann::json::array();
    auto r = runGw({"--json", "records", "--kind", "setting", "--data-dir", dir.path() + "/data"}, env());
    EXPECT_EQ(r.code, 0) << describe(r);
    return r.code == 0 ? r.json()["records"] : nlohmann::json::array();
  }
  // A copy of a scenario that the driver refuses every change on.
  void unprivileged() {
    std::ofstream(dir.path() + "/unprivileged.yaml")
        << "base: " << GW_SOURCE_DIR << "/scenarios/dgx-h100\nprivileged: false\n";
    scenario = dir.path() + "/unprivileged.yaml";
  }
};

TEST(SmiSettings, PowerLimitInRangeIsReadBackAndRecorded) {
  Node n;
  const std::string bus = n.query("pci.bus_id");
  const std::string before = n.query("power.limit");
  auto r = n.smi({"-i", "0", "-pl", "250"});
  ASSERT_EQ(r.code, 0) << describe(r);
  EXPECT_EQ(r.out, "Power limit for GPU " + bus + " was set to 250.00 W from " + before + ".\nAll done.\n");
  EXPECT_EQ(n.query("power.limit"), "250.00 W");
  EXPECT_EQ(n.query("power.limit", "1"), before);  // -i 0 only
  const auto recs = n.records();
  ASSERT_EQ(recs.size(), 1u) << recs.dump(2);
  EXPECT_TRUE(has(recs[0]["who"].get<std::string>(), "uid " + std::to_string(::geteuid()))) << recs.dump(2);
  EXPECT_TRUE(has(recs[0]["summary"].get<std::string>(), bus)) << recs.dump(2);
  ASSERT_EQ(recs[0]["changes"].size(), 1u);
  EXPECT_EQ(recs[0]["changes"][0]["what"], "power.limit");
  EXPECT_EQ(recs[0]["changes"][0]["before"], before);
  EXPECT_EQ(recs[0]["changes"][0]["after"], "250.00 W");
}

TEST(SmiSettings, PowerLimitOutOfRangeNamesTheBoardsRange) {
  Node n;
  const std::string bus = n.query("pci.bus_id");
  const std::string min = n.query("power.min_limit"), max = n.query("power.max_limit");
  auto r = n.smi({"-i", "0", "-pl", "50"});
  EXPECT_EQ(r.code, 2) << describe(r);
  EXPECT_EQ(r.out, "Provided power limit 50.00 W is not a valid power limit which should be between " + min + " and " +
                       max + " for GPU " + bus + "\nTerminating early due to previous errors.\n");
  EXPECT_TRUE(n.records().empty());  // a refused change is no change
}

// The board's range is inclusive at both ends; a milliwatt past either is refused before NVML is asked.
TEST(SmiSettings, PowerLimitAtTheBoardsEdgesIsSetAndAMilliwattPastIsRefused) {
  Node n;
  const std::string min = n.query("power.min_limit"), max = n.query("power.max_limit");
  const double min_w = std::stod(min), max_w = std::stod(max);
  ASSERT_LT(min_w, max_w);
  auto watts = [](double w) {
    std::ostringstream o;
    o << std::fixed << std::setprecision(3) << w;
    return o.str();
  };
  for (const auto& [w, shown] : {std::pair{max_w, max}, std::pair{min_w, min}}) {
    auto r = n.smi({"-i", "0", "-pl", watts(w)});
    ASSERT_EQ(r.code, 0) << watts(w) << ": " << describe(r);
    EXPECT_EQ(n.query("power.limit"), shown);
  }
  for (double w : {max_w + 0.001, min_w - 0.001}) {
    auto r = n.smi({"-i", "0", "-pl", watts(w)});
    EXPECT_EQ(r.code, 2) << watts(w) << ": " << describe(r);
    EXPECT_TRUE(has(r.out, "is not a valid power limit which should be between " + min + " and " + max)) << r.out;
  }
  EXPECT_EQ(n.records().size(), 2u);
}

TEST(SmiSettings, EverySetterWithoutPrivilegeExitsFourAndNamesIt) {
  Node n;
  n.unprivileged();
  for (const auto& words : std::vector<std::vector<std::string>>{{"-pl", "250"},
                                                                 {"-pm", "0"},  // it is on: a change
                                                                 {"-lgc", "1000,1200"},
                                                                 {"-rgc"},
                                                                 {"-lmc", "2619"},
                                                                 {"-rmc"},
                                                                 {"-ac", "2619,1200"},
                                                                 {"-rac"},
                                                                 {"-c", "3"},
                                                                 {"-e", "0"}}) {
    std::vector<std::string> argv{"-i", "0"};
    argv.insert(argv.end(), words.begin(), words.end());
    auto r = n.smi(argv);
    EXPECT_EQ(r.code, 4) << words[0] << "\n" << describe(r);
    EXPECT_TRUE(has(r.out, "Insufficient Permissions")) << r.out;
    // Which privilege: root (when not root), or the driver's refusal to root (here: the scenario).
    EXPECT_TRUE(::geteuid() == 0 ? has(r.err, "privileged: false") : has(r.err, "needs root")) << r.err;
    EXPECT_TRUE(has(r.out, "Terminating early due to previous errors.")) << r.out;
  }
  EXPECT_EQ(n.query("power.limit"), n.query("power.default_limit"));
}

// The simulator failing for a reason of its own (its state file cannot be written) says so, where
// NVML's code alone would only be "Unknown Error".
TEST(SmiSettings, ASimulatorThatCannotSaveItsStateSaysWhy) {
  Node n;
  auto env = n.env();
  env["GPUWARDEN_SIM_STATE"] = n.dir.path() + "/no-such-folder/sim-state";
  auto r = runGw({"--simulate", "dgx-h100", "smi", "-i", "0", "-pl", "300"}, env);
  EXPECT_EQ(r.code, 255) << describe(r);
  EXPECT_TRUE(has(r.out, "nvmlDeviceSetPowerManagementLimit: Unknown Error")) << r.out;
  EXPECT_TRUE(
      has(r.out, "(simulator: GPUWARDEN_SIM_STATE " + n.dir.path() + "/no-such-folder/sim-state: cannot create"))
      << r.out;
  EXPECT_TRUE(n.records().empty());
}

// A hung GPU holds up only itself: selected, the command stops at the call deadline and changes
// nothing; not selected, the others are changed.
TEST(SmiSettings, AHungGpuDoesNotHoldTheCommandUp) {
  Node n;
  n.scenario = "fault-hang";
  auto env = n.env();
  env["GPUWARDEN_SIM_START"] = "15";
  auto all = runGw({"--simulate", "fault-hang", "smi", "-pl", "300"}, env);
  EXPECT_EQ(all.code, 255) << describe(all);
  EXPECT_TRUE(has(all.out, "Unable to determine the device handle for GPU5: no answer from NVML within")) << all.out;
  EXPECT_FALSE(has(all.out, "was set to")) << all.out;
  auto one = runGw({"--simulate", "fault-hang", "smi", "-i", "0", "-pl", "300"}, env);
  EXPECT_EQ(one.code, 0) << describe(one);
  EXPECT_TRUE(has(one.out, "was set to 300.00 W")) << one.out;
}

// A GPU that answers its identity but hangs in the setter (the driver stuck in the change) stops
// the command at the setting's deadline: exit 255, the GPUs before it changed and recorded, the
// ones after it untouched, and the caller told that GPU's state is unknown. The unanswered change
// is recorded as tried, outcome unknown: it may have happened.
TEST(SmiSettings, AGpuThatHangsInTheSetterStopsTheCommandAtTheDeadline) {
  Node n;
  std::ofstream(n.dir.path() + "/setter-hang.yaml")
      << "base: " << GW_SOURCE_DIR << "/scenarios/dgx-h100\n"
      << "faults:\n  - {type: hang, gpu: 1, at: 0, duration: 3600, seconds: 60, call: nvmlDeviceSetPersistenceMode}\n";
  n.scenario = n.dir.path() + "/setter-hang.yaml";
  auto r = n.smi({"-pm", "0"});  // the scenario's GPUs run with persistence mode on
  EXPECT_EQ(r.code, 255) << describe(r);
  EXPECT_TRUE(has(r.out,
                  "Unable to change the setting of GPU 00000000:2A:00.0: no answer from NVML within 10000 ms; "
                  "whether it changed is unknown"))
      << r.out;
  EXPECT_TRUE(has(r.out, "Terminating early due to previous errors.")) << r.out;
  EXPECT_TRUE(has(r.out, "Disabled persistence mode for GPU 00000000:18:00.0.")) << r.out;
  const auto recs = n.records();
  ASSERT_EQ(recs.size(), 2u) << recs.dump();
  std::map<std::string, nlohmann::json> by_bus;
  for (const auto& rec : recs) by_bus[rec["state"]["bus_id"].get<std::string>()] = rec;
  ASSERT_EQ(by_bus.count("00000000:18:00.0"), 1u) << recs.dump();
  ASSERT_EQ(by_bus.count("00000000:2A:00.0"), 1u) << recs.dump();
  EXPECT_FALSE(by_bus["00000000:18:00.0"]["state"].contains("outcome")) << recs.dump();
  EXPECT_EQ(by_bus["00000000:18:00.0"]["changes"].size(), 1u) << recs.dump();
  const auto& unknown = by_bus["00000000:2A:00.0"];
  EXPECT_EQ(unknown["state"]["outcome"], "unknown") << recs.dump();
  EXPECT_EQ(unknown["state"]["flag"], "-pm") << recs.dump();
  EXPECT_EQ(unknown["changes"], nlohmann::json::array()) << recs.dump();
  EXPECT_EQ(unknown["summary"],
            "GPU 00000000:2A:00.0: -pm sent, no answer from NVML within 10000 ms: whether it changed is unknown")
      << recs.dump();
  EXPECT_FALSE(has(r.out, "00000000:3A:00.0")) << r.out;
  EXPECT_FALSE(has(r.out, "All done.")) << r.out;
}

// As the driver: on a privileged node only root changes settings. Another user is told that root
// is what it lacks, and nothing changes.
TEST(SmiSettings, AnotherUserThanRootIsToldItNeedsRoot) {
  // The suite runs as root with util-linux's setpriv (scripts/setup; tests/allowed_skips.txt).
  ASSERT_EQ(::geteuid(), 0u) << "this test runs smi as another uid, which needs root";
  ASSERT_EQ(::access("/usr/bin/setpriv", X_OK), 0) << "setpriv (util-linux) is missing";
  Node n;
  platform::RunOptions o;
  o.timeout = std::chrono::seconds(60);
  // No state file and no data folder it could not reach anyway; a runtime folder with no agent.
  o.env = {{"GPUWARDEN_RUNTIME_DIR", "/nonexistent/gw-run"}, {"GPUWARDEN_DATA_DIR", "/nonexistent/gw-data"}};
  platform::SystemProcessRunner runner;
  auto r = runner.run({"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", GW_BINARY, "--simulate",
                       "dgx-h100", "smi", "-i", "0", "-pl", "300"},
                      o);
  EXPECT_EQ(r.exit_code, 4) << r.out << r.err;
  EXPECT_TRUE(has(r.out, "Insufficient Permissions")) << r.out;
  EXPECT_TRUE(has(r.err, "needs root: this process runs as uid 65534")) << r.err;
  EXPECT_FALSE(has(r.out, "was set to")) << r.out;
}

TEST(SmiSettings, LockedClocksHoldTheClockAndResetReleasesIt) {
  Node n;  // every GPU trains at full load: its graphics clock sits at the application clock
  const unsigned free_running = std::stoul(n.query("clocks.gr"));
  ASSERT_GT(free_running, 1200u);
  auto lock = n.smi({"-i", "0", "-lgc", "1000,1200"});
  ASSERT_EQ(lock.code, 0) << describe(lock);
  EXPECT_TRUE(has(lock.out, "GPU clocks set to \"(gpuClkMin 1000, gpuClkMax 1200)\" for GPU ")) << lock.out;
  EXPECT_EQ(n.query("clocks.gr"), "1200 MHz");
  auto reset = n.smi({"-i", "0", "-rgc"});
  ASSERT_EQ(reset.code, 0) << describe(reset);
  EXPECT_GT(std::stoul(n.query("clocks.gr")), 1200u);
  // Beyond the board's highest clock: the driver's INVALID_ARGUMENT, exit 2.
  auto high = n.smi({"-i", "0", "-lgc", "1000,9000"});
  EXPECT_EQ(high.code, 2) << describe(high);
  EXPECT_TRUE(has(high.out, "its highest is")) << high.out;

  // HBM runs one memory clock: a lock below it is outside the board's range.
  const std::string mem = n.query("clocks.mem");
  const std::string mem_mhz = mem.substr(0, mem.find(' '));
  auto low = n.smi({"-i", "0", "-lmc", "1000,1500"});
  EXPECT_EQ(low.code, 2) << describe(low);
  EXPECT_TRUE(has(low.out, "its highest is " + mem_mhz + " MHz")) << low.out;
  auto lmc = n.smi({"-i", "0", "-lmc", mem_mhz});
  ASSERT_EQ(lmc.code, 0) << describe(lmc);
  EXPECT_TRUE(has(lmc.out, "Memory clocks set to \"(memClkMin " + mem_mhz + ", memClkMax " + mem_mhz + ")\""))
      << lmc.out;
  EXPECT_EQ(n.query("clocks.mem"), mem);
  ASSERT_EQ(n.smi({"-i", "0", "-rmc"}).code, 0);
  EXPECT_EQ(n.records().size(), 4u);
}

TEST(SmiSettings, ApplicationsClocksAreReadBackAndResetToTheDefault) {
  Node n;
  const std::string mem = n.query("clocks.applications.memory");
  const std::string gr = n.query("clocks.applications.graphics");
  const std::string mem_mhz = mem.substr(0, mem.find(' '));
  auto r = n.smi({"-i", "0", "-ac", mem_mhz + ",1200"});
  ASSERT_EQ(r.code, 0) << describe(r);
  EXPECT_TRUE(has(r.out, "Applications clocks set to \"(MEM " + mem_mhz + ", SM 1200)\" for GPU ")) << r.out;
  EXPECT_EQ(n.query("clocks.applications.graphics"), "1200 MHz");
  EXPECT_EQ(n.query("clocks.default_applications.graphics"), gr);
  auto bad = n.smi({"-i", "0", "-ac", "1,1200"});
  EXPECT_EQ(bad.code, 2) << describe(bad);
  EXPECT_TRUE(has(bad.out, "Specified clock combination \"(MEM 1, SM 1200)\" is not supported")) << bad.out;
  ASSERT_EQ(n.smi({"-i", "0", "-rac"}).code, 0);
  EXPECT_EQ(n.query("clocks.applications.graphics"), gr);
}

TEST(SmiSettings, ComputeModeAndPersistenceAreReadBack) {
  Node n;
  const std::string bus = n.query("pci.bus_id");
  auto c = n.smi({"-i", "0", "-c", "EXCLUSIVE_PROCESS"});
  ASSERT_EQ(c.code, 0) << describe(c);
  EXPECT_EQ(c.out, "Set compute mode to EXCLUSIVE_PROCESS for GPU " + bus + ".\nAll done.\n");
  EXPECT_EQ(n.query("compute_mode"), "Exclusive_Process");
  auto again = n.smi({"-i", "0", "-c", "3"});
  EXPECT_EQ(again.out, "Compute mode is already set to EXCLUSIVE_PROCESS for GPU " + bus + ".\nAll done.\n");
  auto thread = n.smi({"-i", "0", "-c", "1"});  // EXCLUSIVE_THREAD: gone from today's drivers
  EXPECT_EQ(thread.code, 3) << describe(thread);

  const bool was = n.query("persistence_mode") == "Enabled";
  auto pm = n.smi({"-i", "0", "-pm", was ? "0" : "1"});
  ASSERT_EQ(pm.code, 0) << describe(pm);
  EXPECT_EQ(pm.out, std::string(was ? "Disabled" : "Enabled") + " persistence mode for GPU " + bus + ".\nAll done.\n");
  EXPECT_EQ(n.query("persistence_mode"), was ? "Disabled" : "Enabled");
  // Two changes recorded; the no-op was not one.
  EXPECT_EQ(n.records().size(), 2u);
}

TEST(SmiSettings, EccChangeIsPendingUntilTheNextBoot) {
  Node n;
  ASSERT_EQ(n.query("ecc.mode.current"), "Enabled");
  auto r = n.smi({"-i", "0", "-e", "0"});
  ASSERT_EQ(r.code, 0) << describe(r);
  EXPECT_EQ(r.out, "Disabled ECC support for GPU " + n.query("pci.bus_id") + ".\nAll done.\nReboot required.\n");
  EXPECT_EQ(n.query("ecc.mode.current") + "/" + n.query("ecc.mode.pending"), "Enabled/Disabled");
  // A power limit is lost with the reboot; the ECC mode becomes what was pending.
  ASSERT_EQ(n.smi({"-i", "0", "-pl", "300"}).code, 0);
  EXPECT_EQ(n.query("ecc.mode.current", "0", "1") + "/" + n.query("ecc.mode.pending", "0", "1"), "Disabled/Disabled");
  EXPECT_EQ(n.query("power.limit", "0", "1"), n.query("power.default_limit", "0", "1"));
}

TEST(SmiSettings, ResetIsRefusedWhileProcessesRunAndWritesTheResetFileWhenIdle) {
  Node n;
  n.scenario = "fault-straggler";  // GPU 5's worker stops at t=30 s; the others keep running
  auto env = n.env();
  env["GPUWARDEN_SIM_START"] = "60";
  auto bus_of = [&](const std::string& gpu) {
    auto r =
        runGw({"--simulate", n.scenario, "smi", "--query-gpu=pci.bus_id", "--format=csv,noheader", "-i", gpu}, env);
    std::string v = r.out.substr(0, r.out.find('\n'));
    return v;
  };
  const std::string busy = bus_of("0"), idle = bus_of("5");
  auto sysfs = [&](const std::string& bus) {
    std::string bdf = bus.substr(4);
    for (auto& c : bdf) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return n.dir.path() + "/root/sys/bus/pci/devices/" + bdf;
  };
  for (const auto& bus : {busy, idle}) {
    std::filesystem::create_directories(sysfs(bus));
    std::ofstream(sysfs(bus) + "/reset");
  }
  const std::vector<std::string> root{"--root", n.dir.path() + "/root", "--simulate", n.scenario, "smi", "-r", "-i"};
  auto argv = [&](const std::string& gpu) {
    auto v = root;
    v.push_back(gpu);
    return v;
  };
  auto refused = runGw(argv("0"), env);
  EXPECT_EQ(refused.code, 19) << describe(refused);
  EXPECT_TRUE(has(refused.out, "GPU " + busy + " is currently in use by another process.")) << refused.out;
  EXPECT_EQ(std::filesystem::file_size(sysfs(busy) + "/reset"), 0u);  // not written

  auto done = runGw(argv("5"), env);
  ASSERT_EQ(done.code, 0) << describe(done);
  EXPECT_EQ(done.out, "GPU " + idle + " was successfully reset.\nAll done.\n");
  std::ifstream in(sysfs(idle) + "/reset");
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(ss.str(), "1\n");

  std::filesystem::remove(sysfs(idle) + "/reset");
  auto none = runGw(argv("5"), env);
  EXPECT_EQ(none.code, 3) << describe(none);
  EXPECT_TRUE(has(none.err, "does not exist")) << none.err;
}

}  // namespace
}  // namespace gw::test
