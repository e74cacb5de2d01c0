// No command dies or hangs: every command an operator or a scheduler runs, on every shipped
// scenario, at several points of the scenario's timeline (before, during and after its faults),
// in the sanitizer build. A death by signal (a crash, an ASan/UBSan report: abort_on_error) or a
// command still running past its bound fails; so does an exit code the command does not document.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <future>
#include <set>

#include "platform/process_runner.h"
#include "test_util.h"

namespace gw::test {
namespace {

using namespace std::chrono_literals;

std::vector<std::string> scenarios() {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(std::string(GW_SOURCE_DIR) + "/scenarios"))
    if (e.path().extension() == ".yaml") out.push_back(e.path().stem().string());
  std::sort(out.begin(), out.end());
  return out;
}

struct Command {
  std::string name;
  std::vector<std::string> args;
  std::set<int> codes;  // documented exit codes (docs/cli.md)
};

// Bounded: a command here gets 15 s (a hung GPU costs each read the 2 s call deadline).
constexpr auto kBound = 15s;

const std::vector<Command>& commands() {
  static const std::vector<Command> c = {
      {"discovery", {"discovery"}, {0, 1, 3}},
      {"query", {"query", "--query-gpu=index,uuid,temperature.gpu,power.draw,utilization.gpu,memory.used"}, {0, 1, 3}},
      {"dmon", {"dmon", "-c", "2", "-d", "0.5"}, {0, 1, 3}},
      {"pmon", {"pmon", "-c", "1"}, {0, 1, 3}},
      {"topo", {"topo", "-m"}, {0, 1, 3}},
      {"health", {"health", "--seconds", "1"}, {0, 1, 2, 3}},
      // nvidia-smi's codes (docs/cli.md, smi): 9 no driver, 12 no library, 15 a GPU fell off the bus,
      // 18 driver and library versions differ, 255 a GPU that did not answer.
      {"smi", {"smi"}, {0, 9, 12, 15, 18, 255}},
      {"smi -q -x", {"smi", "-q", "-x"}, {0, 9, 12, 15, 18, 255}},
      {"smi --query-gpu",
       {"smi",
        "--query-gpu=index,pci.bus_id,temperature.gpu,clocks_event_reasons.active,ecc.errors.uncorrected.volatile."
        "total",
        "--format=csv"},
       {0, 9, 12, 15, 18, 255}},
      // A setting, applied by smi alone (no agent serves its scratch data folder): 2 out of the
      // board's range, 3 not supported, 4 no privilege.
      {"smi -pl", {"smi", "-pl", "300"}, {0, 2, 3, 4, 9, 12, 15, 18, 255}},
      // docs/diag.md: 0 passed, 1 failed, 2 could not run, 3 no NVML, 4 incomplete (no CUDA here).
      {"diag -r 1", {"diag", "-r", "1"}, {0, 1, 2, 3, 4}},
      // docs/burn.md: 1 a GPU FAULTY (one that does not answer), 3 could not run (no CUDA here).
      {"burn", {"burn", "-d", "1"}, {0, 1, 3}},
  };
  return c;
}

class CrashMatrix : public ::testing::TestWithParam<std::string> {};

TEST_P(CrashMatrix, EveryCommandAtEveryStartTime) {
  const std::string scenario = GetParam();
  for (const char* start : {"0", "25", "40", "600"}) {
    // The short commands of one start time run side by side; serve runs meanwhile. They get a
    // data folder of their own that no agent serves (smi's settings and diag's reports go there).
    TempDir solo;
    const std::string solo_data = solo.file("data");
    std::vector<std::future<std::pair<const Command*, platform::RunResult>>> runs;
    for (const auto& c : commands()) {
      runs.push_back(std::async(std::launch::async, [&c, &scenario, start, solo_data] {
        std::vector<std::string> argv{GW_BINARY, "--simulate", scenario};
        argv.insert(argv.end(), c.args.begin(), c.args.end());
        platform::RunOptions o;
        o.timeout = kBound;
        o.env = {{"GPUWARDEN_SIM_START", start}, {"GPUWARDEN_DATA_DIR", solo_data}};
        o.max_output = 4 << 20;
        platform::SystemProcessRunner runner;
        return std::make_pair(&c, runner.run(argv, o));
      }));
    }
    TempDir dir;
    AgentProcess agent({"--simulate", scenario, "serve", "--listen", "127.0.0.1:0", "--data-dir", dir.file("data")},
                       {{"GPUWARDEN_SIM_START", start}, {"GPUWARDEN_RUNTIME_DIR", dir.file("run")}},
                       dir.file("agent.log"));
    const int port = agent.waitListening(kBound);
    EXPECT_GT(port, 0) << scenario << " t=" << start << ": serve did not listen\n" << agent.log();
    if (port > 0) {
      auto m = httpGet(port, "/metrics");
      EXPECT_EQ(m.status, 200) << scenario << " t=" << start << ": /metrics\n" << agent.log();
      // A setting the agent applies for smi (control op settings.apply) answers within the bound
      // too, and leaves the agent able to stop.
      platform::RunOptions o;
      o.timeout = kBound;
      o.env = {{"GPUWARDEN_SIM_START", start},
               {"GPUWARDEN_DATA_DIR", dir.file("data")},
               {"GPUWARDEN_RUNTIME_DIR", dir.file("run")}};
      platform::SystemProcessRunner runner;
      auto r = runner.run({GW_BINARY, "--simulate", scenario, "smi", "-pl", "300"}, o);
      const std::string what = "smi -pl through the agent on " + scenario + " at t=" + start;
      EXPECT_FALSE(r.timed_out) << what << " ran past " << kBound.count() << " s\n" << r.out << r.err;
      EXPECT_EQ(r.signal, 0) << what << " died of signal " << r.signal << "\n" << r.err;
      if (!r.timed_out && r.signal == 0) {
        EXPECT_TRUE(std::set<int>({0, 2, 3, 4, 15, 255}).count(r.exit_code))
            << what << ": undocumented exit " << r.exit_code << "\n"
            << r.err;
      }
    }
    agent.signal(SIGTERM);
    auto rc = agent.wait(kBound);
    EXPECT_TRUE(rc.has_value()) << scenario << " t=" << start << ": serve did not stop on SIGTERM\n" << agent.log();
    if (rc) {
      EXPECT_EQ(*rc, 0) << scenario << " t=" << start << ": serve exit\n" << agent.log();
    }
    for (auto& f : runs) {
      auto [c, r] = f.get();
      const std::string what = c->name + " on " + scenario + " at t=" + start;
      EXPECT_FALSE(r.timed_out) << what << " ran past " << kBound.count() << " s\n" << r.out << r.err;
      EXPECT_EQ(r.signal, 0) << what << " died of signal " << r.signal << "\n" << r.err;
      if (!r.timed_out && r.signal == 0) {
        EXPECT_TRUE(c->codes.count(r.exit_code)) << what << ": undocumented exit " << r.exit_code << "\n" << r.err;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Scenarios, CrashMatrix, ::testing::ValuesIn(scenarios()),
                         [](const ::testing::TestParamInfo<std::string>& i) {
                           std::string n = i.param;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

}  // namespace
}  // namespace gw::test
