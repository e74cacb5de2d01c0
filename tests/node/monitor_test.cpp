// The monitor itself (node/monitor.h), synchronous on the simulator's manual clock: the wiring the
// agent runs (sampler, NVML events, process checks, rules, incidents) stepped one pass at a time,
// so that a rule's hold and simulated hours cost no wall time. Negative checks here run well past
// every hold: a test that waits less than the hold it guards cannot fail.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>
#include <sstream>
#include <set>
#include <string>

#include "../support/temp_dir.h"
#include "fields/catalog.h"
#include "node/monitor.h"
#include "nvml/nvml.h"

namespace gw::node {
namespace {

namespace fs = std::filesystem;

constexpr std::int64_t kEpoch = 1'700'000'000'000;  // the simulated t = 0, in ms since 1970

// A monitor over one scenario whose clock is the simulator's: advance() sets the simulated time,
// then runs one synchronous pass.
class SimNode {
 public:
  // root: "/" (the host's /proc) or a prepared tree whose /proc follows the processes NVML lists.
  SimNode(const std::string& scenario_yaml, const std::string& root, health::RuleConfig rules = {},
          const std::function<void(MonitorOptions&)>& tweak = {})
      : root_(root) {
    const std::string path = dir_.write("scenario.yaml", scenario_yaml);
    ::setenv("GPUWARDEN_SIM_SCENARIO", path.c_str(), 1);
    ::setenv("GPUWARDEN_SIM_CLOCK", "manual", 1);
    ::unsetenv("GPUWARDEN_SIM_START");
    ::unsetenv("GPUWARDEN_SIM_SPEED");
    MonitorOptions o;
    o.opener = [] { return nvml::Session::open({GW_SIM_LIB}); };
    o.sampler.fields = health::RuleEngine::requiredFields();
    o.data_dir = dir_.file("data");
    o.root = root;
    o.rules = std::move(rules);
    o.log = false;
    o.synchronous = true;
    o.now_ms = [this] { return now_ms_; };
    if (tweak) tweak(o);
    auto m = Monitor::create(std::move(o));
    EXPECT_TRUE(m) << m.error();
    if (!m) return;
    monitor_ = std::move(m).value();
    monitor_->start();
    EXPECT_NE(monitor_->sampler(), nullptr) << monitor_->samplerError();
  }
  ~SimNode() {
    if (monitor_) monitor_->stop();
  }

  // Advances to simulated second t and runs one pass (with the process lists when asked). A
  // prepared root gains /proc/<pid> for every process NVML lists, except those in `exited`.
  void advance(double t, bool processes, const std::set<unsigned>& exited = {}) {
    auto s = monitor_->sampler();
    ASSERT_NE(s, nullptr);
    auto session = s->session();
    ASSERT_NE(session, nullptr);
    session->api().gwSimSetTime(t);
    now_ms_ = kEpoch + std::llround(t * 1000);
    if (processes && root_ != "/") {
      for (unsigned i = 0; i < session->deviceCount().value_or(0); ++i) {
        auto d = session->deviceByIndex(i);
        if (!d) continue;
        if (auto procs = d->computeProcesses())
          for (const auto& p : *procs) {
            const fs::path proc = fs::path(root_) / "proc" / std::to_string(p.pid);
            if (exited.count(p.pid))
              fs::remove_all(proc);
            else
              fs::create_directories(proc);
          }
      }
    }
    monitor_->evaluateNow(processes);
  }

  // Every incident the run opened, in any state.
  std::vector<health::Incident> incidents() const { return monitor_->incidents()->recent(1000); }
  bool finds(const std::string& rule, int gpu) const {
    for (const auto& f : monitor_->findings())
      if (f.rule == rule && f.gpu_index == gpu) return true;
    return false;
  }
  Monitor& monitor() { return *monitor_; }
  // The health part of a /metrics page as the agent makes it now (dcgm naming, text format).
  std::string healthPage() {
    auto s = monitor_->sampler();
    std::string body;
    if (!s) return body;
    monitor_->appendMetrics(body, s->snapshot(), s->agentStats(), exporter::ExportOptions{}, exporter::Format::Text004);
    return body;
  }

 private:
  testsupport::TempDir dir_{"gw-monitor-test"};
  std::string root_;
  std::int64_t now_ms_ = kEpoch;
  std::unique_ptr<Monitor> monitor_;
};

std::string scenario(const std::string& name) { return "base: " GW_SCENARIO_DIR "/" + name + ".yaml\n"; }

std::string describe(const std::vector<health::Incident>& incs) {
  std::string s;
  for (const auto& i : incs) s += i.rule + " gpu" + std::to_string(i.gpu_index) + ": " + i.summary + "\n";
  return s;
}

// The agent says "process checks off" for simulated GPUs on the host's /proc; it must mean it. In
// fault-zombie-process an eval process exits at 30 s and its memory stays: against the host's
// /proc every simulated pid looks gone, so a check that ran would fire after its 30 s hold.
TEST(MonitorProcessChecks, OffForSimulatedGpusOnTheHostRootPastFourHolds) {
  const std::int64_t hold = health::RuleConfig{}.zombie_hold_ms;
  ASSERT_EQ(hold, 30'000);
  SimNode node(scenario("fault-zombie-process"), "/");
  const int until = 30 + 4 * static_cast<int>(hold / 1000);
  for (int t = 1; t <= until; ++t) node.advance(t, t % 10 == 0);
  for (int g = 0; g < 8; ++g) EXPECT_FALSE(node.finds("zombie_process", g)) << "GPU " << g;
  EXPECT_TRUE(node.incidents().empty()) << describe(node.incidents());
}

// The same scenario against a prepared /proc: the check runs, and fires at its hold, not before.
TEST(MonitorProcessChecks, OnAgainstAPreparedRootTheZombieFiresAtItsHold) {
  testsupport::TempDir root("gw-monitor-root");
  SimNode node(scenario("fault-zombie-process"), root.path());
  const std::set<unsigned> gone{41090};
  for (int t = 1; t <= 59; ++t) node.advance(t, t % 10 == 0, t >= 30 ? gone : std::set<unsigned>{});
  EXPECT_FALSE(node.finds("zombie_process", 2)) << "29 s after the exit, inside the 30 s hold";
  node.advance(60, true, gone);
  EXPECT_TRUE(node.finds("zombie_process", 2));
  const auto incs = node.incidents();
  ASSERT_EQ(incs.size(), 1u) << describe(incs);
  EXPECT_EQ(incs[0].rule, "zombie_process");
  EXPECT_EQ(incs[0].gpu_index, 2);
  EXPECT_NE(incs[0].evidence.find("41090"), std::string::npos) << incs[0].evidence;
}

// A worker that outlives its job (fault-leftover-process: the job ends at 60 s, the process on GPU
// 5 stays alive with 70 GiB): reported once the GPU has been idle for the whole 10-minute window,
// at the first process check after it, not at the one before.
TEST(MonitorProcessChecks, ALiveLeftoverFiresOnceItsGpuWasIdleForTheWindow) {
  ASSERT_EQ(health::RuleConfig{}.leftover_window_ms, 600'000);
  testsupport::TempDir root("gw-monitor-root");
  SimNode node(scenario("fault-leftover-process"), root.path());
  for (int t = 5; t <= 660; t += 5) node.advance(t, t % 10 == 0);
  EXPECT_FALSE(node.finds("leftover_process", 5)) << "the busy sample at 60 s is still in the window";
  node.advance(665, false);
  node.advance(670, true);
  EXPECT_TRUE(node.finds("leftover_process", 5));
  const auto incs = node.incidents();
  ASSERT_EQ(incs.size(), 1u) << describe(incs);
  EXPECT_EQ(incs[0].rule, "leftover_process");
  EXPECT_EQ(incs[0].severity, health::Severity::Warning);
  EXPECT_NE(incs[0].evidence.find("pids=41006"), std::string::npos) << incs[0].evidence;
  EXPECT_NE(incs[0].action.find("kill PID"), std::string::npos) << incs[0].action;
  // The verdict says what the rules took the GPU for: idle, from its utilisation.
  const auto report = node.monitor().healthReport();
  EXPECT_EQ(report["gpus"][5]["workload"], nlohmann::json({{"class", "idle"}, {"source", "inferred"}}))
      << report["gpus"][5].dump();
  // A scheduler says the GPU is someone's interactive session: from the next process check the
  // same condition is told as info, and the verdict says who set the class.
  node.monitor().setWorkload(report["gpus"][5]["uuid"].get<std::string>(), health::WorkloadClass::kInteractive);
  node.advance(680, true);
  bool info = false;
  for (const auto& f : node.monitor().findings())
    if (f.rule == "leftover_process" && f.gpu_index == 5) info = f.severity == health::Severity::Info;
  EXPECT_TRUE(info);
  EXPECT_EQ(node.monitor().healthReport()["gpus"][5]["workload"],
            nlohmann::json({{"class", "interactive"}, {"source", "scheduler"}}));
}

// Before its first evaluation the monitor has no verdict: "unknown" (exit 3), not "healthy".
TEST(MonitorVerdict, UnknownUntilTheFirstEvaluationThenHealthy) {
  testsupport::TempDir root("gw-monitor-root");
  SimNode node(scenario("dgx-h100"), root.path());
  const auto before = node.monitor().healthReport();
  EXPECT_EQ(before["status"], "unknown") << before.dump();
  EXPECT_EQ(before["exit_code"], 3);
  EXPECT_EQ(before.value("reason", ""), "no evaluation yet");
  node.advance(1, true);
  const auto after = node.monitor().healthReport();
  EXPECT_EQ(after["status"], "healthy") << after.dump();
  EXPECT_EQ(after["exit_code"], 0);
  EXPECT_FALSE(after.contains("reason")) << after.dump();
}

// The value of gpuwarden_xid_errors_total for a GPU and code on a page, or "absent".
std::string xidCounter(const std::string& page, int gpu, int code) {
  const std::regex line("^gpuwarden_xid_errors_total\\{gpu=\"" + std::to_string(gpu) + "\",[^\n]*,code=\"" +
                        std::to_string(code) + "\"\\} ([0-9]+)$");
  std::smatch m;
  std::istringstream in(page);
  for (std::string l; std::getline(in, l);)
    if (std::regex_match(l, m, line)) return m[1];
  return "absent";
}

// increase() sees nothing of the sample that creates a series: a counter born at 1 hides the first
// Xid of its code from every alert. So a counter that appears while the agent runs shows 0 for
// xid_zero_hold (on the monitor's clock), then its count; the page key changes when the hold ends,
// so no cached page keeps the 0. fault-xid-48: GPU 2's Xid 48 at t = 30 s.
TEST(MonitorXidCounters, ANewCounterShowsZeroForItsHoldThenItsCount) {
  testsupport::TempDir root("gw-monitor-root");
  SimNode node(scenario("fault-xid-48"), root.path(), {},
               [](MonitorOptions& o) { o.xid_zero_hold = std::chrono::seconds(60); });
  node.advance(10, false);
  EXPECT_EQ(xidCounter(node.healthPage(), 2, 48), "absent");
  node.advance(31, false);
  // As the agent does: the page's key first, then the page.
  const auto held = node.monitor().metricsKey();
  EXPECT_EQ(xidCounter(node.healthPage(), 2, 48), "0");
  node.advance(90.999, false);
  EXPECT_EQ(node.monitor().metricsKey(), held) << "nothing changed: the cached page stands";
  EXPECT_EQ(xidCounter(node.healthPage(), 2, 48), "0");
  node.advance(91, false);
  EXPECT_NE(node.monitor().metricsKey(), held) << "the hold ended: the page must be made again";
  EXPECT_EQ(xidCounter(node.healthPage(), 2, 48), "1");
  EXPECT_EQ(xidCounter(node.healthPage(), 0, 48), "absent") << "only the GPU that saw it";
}

// Counters there before the first page (loaded from the data folder, counted while starting) are not
// held: Prometheus may have seen them before a restart, and a 0 now would make increase() count
// them again.
TEST(MonitorXidCounters, CountersFromBeforeTheFirstPageShowTheirCountAtOnce) {
  testsupport::TempDir root("gw-monitor-root");
  SimNode node(scenario("fault-xid-48"), root.path(), {},
               [](MonitorOptions& o) { o.xid_zero_hold = std::chrono::seconds(60); });
  node.advance(10, false);  // NVML events are delivered from the first pass on, as a real event set's
  node.advance(31, false);
  EXPECT_EQ(xidCounter(node.healthPage(), 2, 48), "1");
}

// Healthy fleets, every rule on (process checks against a prepared /proc), over two simulated
// hours at one pass every 5 s: nothing opens, not even for a moment.
struct Fleet {
  std::string name, yaml;
  health::RuleConfig rules{};
};

std::vector<Fleet> healthyFleets() {
  health::RuleConfig mixed;
  mixed.require_persistence = false;  // pcie-mixed's RTX 4090s run with persistence off: a true finding
  return {
      {"dgx_h100", scenario("dgx-h100")},
      {"dgx_h200", scenario("dgx-h200")},
      {"mig_a100", scenario("mig-a100")},
      {"healthy_long", scenario("healthy-long")},
      // Idle with nothing running: a process holding memory on an idle GPU is leftover_process.
      {"idle_dgx_h100", scenario("dgx-h100") + "defaults: {profile: H100-SXM5-80GB, workload: idle}\ngpus: []\n"},
      // Inference waves and ~40 % with no class set: inferred inference, never starved.
      {"healthy_inference", scenario("healthy-inference")},
      {"pcie_mixed", scenario("pcie-mixed"), mixed},
  };
}

class HealthyFleet : public ::testing::TestWithParam<Fleet> {};

TEST_P(HealthyFleet, TwoSimulatedHoursOpenNothing) {
  const Fleet& f = GetParam();
  testsupport::TempDir root("gw-monitor-root");
  SimNode node(f.yaml, root.path(), f.rules);
  const int hours = 2, step = 5;
  for (int t = step; t <= hours * 3600; t += step) node.advance(t, t % 10 == 0);
  EXPECT_TRUE(node.incidents().empty()) << describe(node.incidents());
  EXPECT_TRUE(node.monitor().findings().empty());
}

INSTANTIATE_TEST_SUITE_P(Scenarios, HealthyFleet, ::testing::ValuesIn(healthyFleets()),
                         [](const ::testing::TestParamInfo<Fleet>& i) { return i.param.name; });

}  // namespace
}  // namespace gw::node

namespace gw::node {
namespace {

// dcgm-exporter's job-mapping folder through the monitor: a file per GPU index starts the job, its
// GPU's views get hpc_job, the Xid that hits that GPU during the job is in its account, and the
// file's removal ends it (fault-xid-48: GPU 2's Xid 48 at t = 30 s).
// The folder is read every 5 s (docs/jobs.md), on the monitor's clock: a file written after a read
// is not seen 4.999 s after it and is seen at 5 s.
TEST(MonitorJobs, TheMappingFolderIsReadEveryFiveSeconds) {
  testsupport::TempDir dir("gw-jobmap-poll");
  const std::string map = dir.file("map");
  std::filesystem::create_directories(map);
  SimNode n(scenario("dgx-h100"), "/", {}, [&](MonitorOptions& o) { o.job_map_dir = map; });
  n.advance(10, false);  // the first look reads the folder (empty)
  dir.write("map/1", "7002\n");
  const auto labelled = [&] {
    auto views = n.monitor().sampler()->snapshot();
    n.monitor().labelWorkloads(views);
    for (const auto& v : views)
      for (const auto& [k, val] : v.workload_labels)
        if (k == "hpc_job" && val == "7002") return true;
    return false;
  };
  n.advance(14.999, false);
  EXPECT_FALSE(labelled());
  n.advance(15, false);
  EXPECT_TRUE(labelled());
}

TEST(MonitorJobs, TheMappingFolderDrivesJobsLabelsAndTheirXids) {
  testsupport::TempDir dir("gw-jobmap");
  const std::string map = dir.file("map");
  std::filesystem::create_directories(map);
  SimNode n(scenario("fault-xid-48"), "/", {}, [&](MonitorOptions& o) { o.job_map_dir = map; });
  n.advance(10, false);
  dir.write("map/2", "7001\n");
  n.advance(10 + kJobMapPollMs / 1000.0, false);
  auto views = n.monitor().sampler()->snapshot();
  n.monitor().labelWorkloads(views);
  std::size_t labelled = 0;
  for (const auto& v : views)
    for (const auto& [k, val] : v.workload_labels) {
      EXPECT_EQ(v.id.index, 2u);
      EXPECT_EQ(k, "hpc_job");
      EXPECT_EQ(val, "7001");
      ++labelled;
    }
  EXPECT_EQ(labelled, 1u);
  for (double t = 16; t <= 40; t += 1) n.advance(t, false);
  std::filesystem::remove(map + "/2");
  n.advance(46, false);
  auto r = n.monitor().jobs().show("7001");
  ASSERT_TRUE(r && *r);
  const auto j = jobJson(**r, 0);
  EXPECT_EQ(j["state"], "ended");
  EXPECT_EQ(j["source"], "dcgm-map");
  EXPECT_EQ(j["gpus"][0]["index"], 2);
  EXPECT_EQ(j["gpus"][0]["xids"], (nlohmann::json{{"48", 1}}));
  EXPECT_GE(j["gpus"][0]["ecc_dbe"].get<double>(), 1.0);
  views = n.monitor().sampler()->snapshot();
  n.monitor().labelWorkloads(views);
  for (const auto& v : views) EXPECT_TRUE(v.workload_labels.empty());
}

// An agent configured to sample a few fields (sampling.fields) still samples what the rules and the
// job accounts read: fault-row-remap-failure's GPU 7 fails a row remap at 30 s, read from fields
// the list below leaves out, and a job on it is given its energy from the energy counter.
TEST(MonitorFields, AShortFieldListStillSamplesWhatTheRulesAndTheJobsRead) {
  testsupport::TempDir dir("gw-fields");
  const std::string map = dir.file("map");
  std::filesystem::create_directories(map);
  const fields::Field* fan = fields::findAny("fan.speed");
  ASSERT_NE(fan, nullptr);
  SimNode n(scenario("fault-row-remap-failure"), "/", {}, [&](MonitorOptions& o) {
    o.sampler.fields = {fan};
    o.job_map_dir = map;
  });
  n.advance(10, false);
  dir.write("map/7", "7003\n");
  for (double t = 15; t <= 40; t += 1) n.advance(t, false);
  EXPECT_TRUE(n.finds("row_remap", 7)) << describe(n.incidents());
  std::filesystem::remove(map + "/7");
  n.advance(46, false);
  auto r = n.monitor().jobs().show("7003");
  ASSERT_TRUE(r && *r);
  const auto j = jobJson(**r, 0);
  ASSERT_EQ(j["gpus"].size(), 1u) << j.dump(2);
  EXPECT_EQ(j["gpus"][0]["energy_source"], "counter") << j.dump(2);
  EXPECT_GT(j["gpus"][0]["energy_j"].get<double>(), 0.0) << j.dump(2);
  EXPECT_GT(j["gpus"][0]["memory_used_max_bytes"].get<double>(), 0.0) << j.dump(2);
}

// The epilog's leftover check asks the monitor for the GPUs' processes: with NVML up (the
// simulator) the lists are read, not refused as if NVML were missing, and a GPU it does not
// know is named as unread.
TEST(MonitorGpuProcesses, ReadWhileNvmlIsUp) {
  testsupport::TempDir root("gw-monitor-root");
  SimNode node(scenario("dgx-h100"), root.path());
  const auto procs = node.monitor().gpuProcesses({"GPU-not-on-this-node"});
  ASSERT_TRUE(procs) << procs.error();
  EXPECT_TRUE(procs->simulated);
  EXPECT_TRUE(procs->processes.empty());
  EXPECT_EQ(procs->unread, std::vector<std::string>{"GPU-not-on-this-node"});
}

}  // namespace
}  // namespace gw::node
