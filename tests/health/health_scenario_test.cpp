// Scenario-driven tests: the real Sampler over the NVML simulator with a manual clock. Each pass
// steps simulated time, samples synchronously, drains NVML events (Xid, DBE), lists processes,
// feeds the RuleEngine and the IncidentStore, and records when each (rule, GPU) first fired.
// The run prints one line per scenario (findings, detection delay) that docs/health.md quotes.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <chrono>
#include <thread>
#include <functional>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "collect/sampler.h"
#include "fields/catalog.h"
#include "health/incidents.h"
#include "nvml/nvml.h"

using namespace gw;
using namespace gw::health;

namespace {

namespace fs = std::filesystem;

fs::path tempDir() {
  static fs::path d = [] {
    auto p = fs::temp_directory_path() / ("gw-health-scn-" + std::to_string(getpid()));
    fs::remove_all(p);
    fs::create_directories(p);
    return p;
  }();
  return d;
}

struct Expect {
  std::string rule;
  int gpu;
  Severity severity;
};

struct Spec {
  std::string scenario;  // shipped name, or inline YAML when it starts with "base:"
  double fault_s = 30;
  double duration_s = 180;
  double step_s = 2;
  std::vector<Expect> expected;
  std::set<std::string> allowed_extra;  // rules that may fire as well (same root cause)
  unsigned zombie_pid = 0;              // removed from the fake /proc at fault_s
  std::string rules{};                  // the health configuration (YAML), "" for the defaults
  std::string expect_text{};            // in every expected finding's summary or evidence
};

struct Outcome {
  std::map<std::pair<std::string, int>, double> first;  // (rule, gpu) -> simulated seconds
  std::map<std::pair<std::string, int>, Finding> findings;
  std::vector<Incident> incidents;
};

Outcome runScenario(const Spec& spec) {
  static int counter = 0;
  const auto dir = tempDir() / ("run" + std::to_string(++counter));
  fs::create_directories(dir / "root" / "proc");
  // The fake /proc: a process exists from the moment NVML first lists it; the spec's zombie pid
  // disappears at fault_s while NVML keeps listing it (its memory is never freed).
  const std::string path = (dir / "scenario.yaml").string();
  {
    std::ofstream out(path);
    if (spec.scenario.rfind("base:", 0) == 0)
      out << spec.scenario;
    else
      out << "base: " << GW_SCENARIO_DIR << "/" << spec.scenario << ".yaml\n";
  }
  setenv("GPUWARDEN_SIM_SCENARIO", path.c_str(), 1);
  setenv("GPUWARDEN_SIM_CLOCK", "manual", 1);
  unsetenv("GPUWARDEN_SIM_START");
  unsetenv("GPUWARDEN_SIM_SPEED");

  Outcome o;
  collect::SamplerConfig sc;
  sc.fields = RuleEngine::requiredFields();
  collect::Sampler sampler([] { return nvml::Session::open({GW_SIM_LIB}); }, sc);
  sampler.sampleOnce();
  auto session = sampler.session();
  EXPECT_TRUE(session) << "simulator did not open";
  if (!session) return o;
  const auto& api = session->api();
  // Static fields (max clocks, max PCIe link, default power limit) are read once, as the
  // sampler's first pass does.
  const unsigned n = session->deviceCount().value_or(0);
  std::vector<std::vector<std::pair<std::size_t, double>>> statics(n);
  std::vector<nvml::Device> devs(n);
  nvmlEventSet_t set = nullptr;
  api.nvmlEventSetCreate(&set);
  for (unsigned i = 0; i < n; ++i) {
    auto d = session->deviceByIndex(i);
    if (!d) continue;
    devs[i] = *d;
    api.nvmlDeviceRegisterEvents(d->handle(), nvmlEventTypeXidCriticalError | nvmlEventTypeDoubleBitEccError, set);
    for (const auto* f : sc.fields)
      if (f->cadence == fields::Cadence::Static)
        if (auto v = f->read_number(*d)) statics[i].emplace_back(fields::indexOf(*f), *v);
  }

  RuleConfig rules;
  if (!spec.rules.empty()) {
    auto parsed = parseRuleConfig(spec.rules, "spec.rules");
    EXPECT_TRUE(parsed) << parsed.error();
    if (parsed) rules = *parsed;
  }
  RuleEngine engine(rules, (dir / "root").string());
  auto store = IncidentStore::open((dir / "data" / "incidents.db").string());
  EXPECT_TRUE(store.ok());
  const std::int64_t t0 = 1'700'000'000'000;
  for (double t = spec.step_s; t <= spec.duration_s + 1e-9; t += spec.step_s) {
    api.gwSimSetTime(t);
    const std::int64_t now = t0 + static_cast<std::int64_t>(t * 1000);
    if (spec.zombie_pid && t >= spec.fault_s) fs::remove_all(dir / "root" / "proc" / std::to_string(spec.zombie_pid));
    sampler.sampleOnce();
    auto views = sampler.snapshot();
    for (auto& v : views)
      if (!v.id.is_mig && v.id.index < n)
        for (auto [idx, val] : statics[v.id.index]) v.values[idx] = {val, now, true};
    nvmlEventData_t ed{};
    while (api.nvmlEventSetWait_v2(set, &ed, 0) == NVML_SUCCESS) {
      events::GpuEvent e;
      e.timestamp_ms = now;
      e.kind = ed.eventType == nvmlEventTypeXidCriticalError ? events::EventKind::Xid : events::EventKind::EccDoubleBit;
      e.code = e.kind == events::EventKind::Xid ? static_cast<int>(ed.eventData) : 0;
      unsigned idx = 0;
      if (api.nvmlDeviceGetIndex(ed.device, &idx) == NVML_SUCCESS) e.gpu_index = static_cast<int>(idx);
      for (unsigned i = 0; i < n && e.gpu_index < 0; ++i)  // a lost GPU no longer answers GetIndex
        if (devs[i].handle() == ed.device) e.gpu_index = static_cast<int>(i);
      engine.onEvent(e);
    }
    engine.observe(views, now);
    for (unsigned i = 0; i < n; ++i) {
      if (!devs[i].valid()) continue;
      auto procs = devs[i].computeProcesses();
      if (!procs) continue;
      std::vector<ProcessSample> ps;
      for (const auto& p : *procs) {
        ps.push_back({p.pid, p.used_bytes});
        const bool exited = spec.zombie_pid == p.pid && t >= spec.fault_s;
        if (!exited) fs::create_directories(dir / "root" / "proc" / std::to_string(p.pid));
      }
      engine.observeProcesses(i, ps, now);
    }
    auto found = engine.evaluate(now);
    for (const auto& f : found) {
      auto k = std::make_pair(f.rule, f.gpu_index);
      if (!o.first.count(k)) {
        o.first[k] = t;
        o.findings[k] = f;
      }
    }
    if (store.ok()) (*store)->apply(found, now, &engine);
  }
  api.nvmlEventSetFree(set);
  if (store.ok()) o.incidents = (*store)->unresolved();
  return o;
}

std::string describe(const Outcome& o) {
  std::string s;
  for (const auto& [k, t] : o.first)
    s += "  " + k.first + " gpu" + std::to_string(k.second) + " " +
         std::string(severityName(o.findings.at(k).severity)) + " at t=" + std::to_string(static_cast<int>(t)) +
         "s: " + o.findings.at(k).evidence + "\n";
  return s;
}

void check(const Spec& spec) {
  const Outcome o = runScenario(spec);
  std::set<std::pair<std::string, int>> want;
  for (const auto& e : spec.expected) {
    auto k = std::make_pair(e.rule, e.gpu);
    want.insert(k);
    ASSERT_TRUE(o.first.count(k)) << spec.scenario << ": missing " << e.rule << " on GPU " << e.gpu << "\n"
                                  << describe(o);
    const Finding& f = o.findings.at(k);
    EXPECT_EQ(f.severity, e.severity) << spec.scenario << " " << e.rule << "\n" << describe(o);
    EXPECT_FALSE(f.action.empty());
    EXPECT_FALSE(f.summary.empty());
    EXPECT_NE((f.summary + " " + f.evidence).find(spec.expect_text), std::string::npos)
        << spec.scenario << " " << e.rule << " GPU " << e.gpu << ": " << f.summary << " [" << f.evidence << "]";
    // the incident exists and carries the context snapshot
    bool incident = false;
    for (const auto& inc : o.incidents)
      if (inc.rule == e.rule && inc.gpu_index == e.gpu) {
        incident = true;
        auto j = nlohmann::json::parse(inc.context_json.empty() ? "{}" : inc.context_json);
        for (const char* key : {"gpu_temp", "power_usage", "sm_clock"})
          EXPECT_FALSE(j["series"][key].empty()) << spec.scenario << " " << e.rule << " context lacks " << key;
      }
    const bool transient = e.rule == "xid" && f.severity == Severity::Info;  // non-sticky, may stay open
    EXPECT_TRUE(incident || transient) << spec.scenario << ": no incident for " << e.rule;
  }
  for (const auto& [k, t] : o.first)
    EXPECT_TRUE(want.count(k) || spec.allowed_extra.count(k.first))
        << spec.scenario << ": unexpected " << k.first << " on GPU " << k.second << "\n"
        << describe(o);
  // the table for docs/health.md
  std::string line = "| " + spec.scenario.substr(0, spec.scenario.find('\n')) + " |";
  for (const auto& e : spec.expected) {
    const double d = o.first.at({e.rule, e.gpu}) - spec.fault_s;
    line += " " + e.rule + " gpu" + std::to_string(e.gpu) + " " + std::string(severityName(e.severity)) + " +" +
            std::to_string(static_cast<int>(d)) + "s;";
  }
  int extra = 0;
  for (const auto& [k, t] : o.first) extra += want.count(k) ? 0 : 1;
  line += " extra: " + std::to_string(extra) + " |";
  std::printf("HEALTH-TABLE %s\n", line.c_str());
}

constexpr auto W = Severity::Warning;
constexpr auto C = Severity::Critical;
constexpr auto F = Severity::Fatal;
constexpr auto I = Severity::Info;

}  // namespace

TEST(HealthScenario, HealthyLongIsSilent) {
  check({.scenario = "healthy-long", .fault_s = 0, .duration_s = 1200, .step_s = 5});
}
TEST(HealthScenario, DgxH100IsSilent) { check({.scenario = "dgx-h100", .fault_s = 0, .duration_s = 240, .step_s = 3}); }
// An idle node with nothing running (no process holds memory: that would be leftover_process),
// past every window.
TEST(HealthScenario, IdleNodeIsSilent) {
  check({.scenario = std::string("base: ") + GW_SCENARIO_DIR +
                     "/dgx-h100.yaml\ndefaults: {profile: H100-SXM5-80GB, workload: idle}\ngpus: []\n",
         .fault_s = 0,
         .duration_s = 720,
         .step_s = 5});
}
TEST(HealthScenario, DgxH200IsSilent) { check({.scenario = "dgx-h200", .fault_s = 0, .duration_s = 240, .step_s = 3}); }
// Inference waves, bursty and idle GPUs: no starvation, no straggler. Only the GeForce cards'
// persistence mode (off by default on RTX 4090) is reported.
TEST(HealthScenario, PcieMixedReportsOnlyPersistence) {
  check({.scenario = "pcie-mixed",
         .fault_s = 0,
         .duration_s = 660,
         .step_s = 3,
         .expected = {{"persistence_off", 2, W}, {"persistence_off", 3, W}}});
}
TEST(HealthScenario, MigA100IsSilent) { check({.scenario = "mig-a100", .fault_s = 0, .duration_s = 240, .step_s = 3}); }
TEST(HealthScenario, Xid79) {
  check({.scenario = "fault-xid-79", .duration_s = 90, .expected = {{"gpu_lost", 3, F}, {"xid", 3, F}}});
}
TEST(HealthScenario, Xid48) {
  check({.scenario = "fault-xid-48", .duration_s = 90, .expected = {{"xid", 2, C}, {"ecc_dbe", 2, C}}});
}
TEST(HealthScenario, Xid13) { check({.scenario = "fault-xid-13", .duration_s = 90, .expected = {{"xid", 1, I}}}); }
// The driver asks for a reset (Xid 154 announces it; NVML's recovery-action field holds it).
TEST(HealthScenario, RecoveryAction) {
  check(
      {.scenario = "fault-recovery-action", .duration_s = 90, .expected = {{"xid", 2, W}, {"recovery_action", 2, C}}});
}
// nvidia-fabricmanager stops: every GPU of the NVSwitch board falls out of the fabric (critical after
// the minute's hold); GPU 5's bandwidth dip before it lasted less than the hold and stays silent.
TEST(HealthScenario, FabricManagerStopped) {
  std::vector<Expect> all;
  for (int g = 0; g < 8; ++g) all.push_back({"fabric", g, C});
  check({.scenario = "fault-fabric-manager", .duration_s = 150, .expected = all});
}
TEST(HealthScenario, EccDbe) {
  check({.scenario = "fault-ecc-dbe", .duration_s = 90, .expected = {{"ecc_dbe", 4, C}}});
}
TEST(HealthScenario, RetiredPages) {
  check({.scenario = "fault-retired-pages", .duration_s = 90, .expected = {{"retired_pages", 5, C}}});
}
TEST(HealthScenario, RowRemapPending) {
  check({.scenario = "fault-row-remap-pending", .duration_s = 90, .expected = {{"row_remap", 6, W}}});
}
TEST(HealthScenario, RowRemapFailure) {
  check({.scenario = "fault-row-remap-failure", .duration_s = 90, .expected = {{"row_remap", 7, C}}});
}
TEST(HealthScenario, ThermalSlowdown) {
  check({.scenario = "fault-thermal-slowdown",
         .duration_s = 240,
         .expected = {{"thermal_slowdown", 0, C}},
         .allowed_extra = {"gpu_temperature", "memory_temperature"}});
}
// Cooling lost under load: the GPU reaches its shutdown temperature and falls off the bus; the
// finding is the lost GPU and its Xid 79, whatever thermal findings had time to fire before it.
TEST(HealthScenario, ThermalRunaway) {
  check({.scenario = "fault-thermal-runaway",
         .duration_s = 120,
         .step_s = 1,
         .expected = {{"gpu_lost", 0, F}, {"xid", 0, F}},
         .allowed_extra = {"gpu_temperature", "memory_temperature", "thermal_slowdown"}});
}
// Zero-RPM fans: 0 % at ~47 °C idle is normal, and the fans that start under load are normal too.
TEST(HealthScenario, ZeroRpmIdleIsSilent) {
  check({.scenario = "zero-rpm-idle", .fault_s = 0, .duration_s = 600, .step_s = 3});
}
TEST(HealthScenario, IdlePowerHigh) {
  check({.scenario = "fault-idle-power-high", .duration_s = 240, .expected = {{"idle_power_high", 3, W}}});
}
TEST(HealthScenario, PowerBrake) {
  check({.scenario = "fault-power-brake", .duration_s = 120, .expected = {{"power_slowdown", 1, C}}});
}
TEST(HealthScenario, PcieDowntrain) {
  check({.scenario = "fault-pcie-downtrain", .duration_s = 120, .expected = {{"pcie_downtrain", 2, W}}});
}
TEST(HealthScenario, PcieReplay) {
  check({.scenario = "fault-pcie-replay", .duration_s = 150, .expected = {{"pcie_replay", 3, W}}});
}
TEST(HealthScenario, NvlinkDown) {
  check({.scenario = "fault-nvlink-down", .duration_s = 90, .expected = {{"nvlink_down", 4, C}}});
}
TEST(HealthScenario, FanFailure) {
  check({.scenario = "fault-fan-failure",
         .duration_s = 240,
         .expected = {{"fan_failure", 2, C}},
         .allowed_extra = {"gpu_temperature", "memory_temperature", "thermal_slowdown",
                           "persistence_off"}});  // pcie-mixed's GeForce cards run with persistence off
}
TEST(HealthScenario, Starvation) {
  Spec s{.scenario = "fault-starvation",
         .fault_s = 0,
         .duration_s = 330,
         .step_s = 3,
         .expect_text = "workload=training (inferred"};  // steady ~45 %: the class is inferred, and said
  for (int i = 0; i < 8; ++i) s.expected.push_back({"starvation", i, W});
  check(s);
}
TEST(HealthScenario, Straggler) {
  check({.scenario = "fault-straggler", .duration_s = 150, .expected = {{"straggler", 5, W}}});
}
TEST(HealthScenario, ZombieProcess) {
  check({.scenario = "fault-zombie-process",
         .duration_s = 120,
         .expected = {{"zombie_process", 2, W}},
         .zombie_pid = 41090});
}
TEST(HealthScenario, PersistenceOff) {
  Spec s{.scenario = "fault-persistence-off", .fault_s = 0, .duration_s = 60};
  for (int i = 0; i < 8; ++i) s.expected.push_back({"persistence_off", i, W});
  check(s);
}

// The seed's second starvation pattern: swings between 3 % and 20 %, said as such.
TEST(HealthScenario, StarvationSwinging) {
  Spec s{.scenario = "fault-starvation-bursty", .fault_s = 0, .duration_s = 330, .step_s = 3, .expect_text = "swings"};
  for (int i = 0; i < 8; ++i) s.expected.push_back({"starvation", i, W});
  check(s);
}
// The same load on GPUs configured as inference servers is normal.
TEST(HealthScenario, StarvationIsSilentOnGpusConfiguredForInference) {
  check(
      {.scenario = "fault-starvation", .fault_s = 0, .duration_s = 660, .step_s = 3, .rules = "workload: inference\n"});
}
// Inference swinging 30-80 % and a lighter one at ~40 %: no starvation, with no configuration.
TEST(HealthScenario, HealthyInferenceIsSilent) {
  check({.scenario = "healthy-inference", .fault_s = 0, .duration_s = 660, .step_s = 3});
}
// The must-not-fire above holds because of the class: the ~40 % GPUs said to train are starved.
TEST(HealthScenario, HealthyInferenceConfiguredAsTrainingIsStarved) {
  check({.scenario = "healthy-inference",
         .fault_s = 0,
         .duration_s = 330,
         .step_s = 3,
         .expected = {{"starvation", 6, W}, {"starvation", 7, W}},
         .rules = "workload_by_gpu: {6: training, 7: training}\n",
         .expect_text = "workload=training (configured)"});
}
// 180 W of a 300 W limit at ~95 % utilisation (the seed's example), from the start.
TEST(HealthScenario, LowPowerUnderFullLoad) {
  check({.scenario = "fault-low-power-full-load",
         .fault_s = 0,
         .duration_s = 120,
         .expected = {{"power_low_under_load", 3, W}},
         .expect_text = "limit=300"});
}
TEST(HealthScenario, PstateStuckUnderLoad) {
  check({.scenario = "fault-pstate-stuck",
         .duration_s = 120,
         .expected = {{"pstate_under_load", 6, W}},
         .expect_text = "pstate=8"});
}
// A live worker holding 70 GiB on an idle GPU, reported once the GPU has been idle for the window.
TEST(HealthScenario, LeftoverProcess) {
  check({.scenario = "fault-leftover-process",
         .fault_s = 60,
         .duration_s = 720,
         .step_s = 5,
         .expected = {{"leftover_process", 5, W}},
         .expect_text = "pids=41006"});
}
// On a GPU configured for interactive work an idle session holding memory is told, not alarmed.
TEST(HealthScenario, LeftoverProcessOnAnInteractiveGpuIsInfo) {
  check({.scenario = "fault-leftover-process",
         .fault_s = 60,
         .duration_s = 720,
         .step_s = 5,
         .expected = {{"leftover_process", 5, I}},
         .rules = "workload_by_gpu: {5: interactive}\n",
         .expect_text = "interactive session"});
}

// On an NVML without nvmlDeviceGetFieldValues (drivers before 2017) a field NVML also offers as
// a field id is read by its own getter where that exists; the missing batch call once failed on
// one field a pass and left the others unread.
TEST(SamplerFieldBatch, WithoutFieldValuesEveryFieldIsReadByItsOwnGetter) {
  const fields::Field* used = fields::findByKey("fb_used");
  const fields::Field* energy = fields::findByKey("total_energy");
  const fields::Field* replays = fields::findByKey("pcie_replay_counter");
  ASSERT_NE(used, nullptr);
  ASSERT_NE(energy, nullptr);
  ASSERT_NE(replays, nullptr);
  ASSERT_EQ(used->nvml_fi, 0u);
  ASSERT_NE(energy->nvml_fi, 0u);
  ASSERT_NE(replays->nvml_fi, 0u);
  collect::SamplerConfig sc;
  sc.fields = {replays, energy, used};
  collect::Sampler sampler([] { return nvml::Session::open({GW_MINIMAL_NVML}); }, sc);
  // Every pass alike: the first once found there is no batch call, the second on from there.
  for (int pass = 0; pass < 2; ++pass) {
    sampler.sampleOnce();
    const auto views = sampler.snapshot();
    ASSERT_EQ(views.size(), 1u);
    const auto& values = views[0].values;
    EXPECT_TRUE(values[fields::indexOf(*used)].valid) << pass;
    EXPECT_EQ(values[fields::indexOf(*used)].value, 1024.0) << pass;  // nvml_minimal.cpp: 1 GiB used
    EXPECT_TRUE(values[fields::indexOf(*energy)].valid) << pass;
    EXPECT_EQ(values[fields::indexOf(*energy)].value, 123456789.0) << pass;  // its own getter, in mJ
    EXPECT_FALSE(values[fields::indexOf(*replays)].valid) << pass;           // no getter of its own there
  }
}

// The heartbeat (what the agent's service watchdog keeps alive) goes round every supervising tick
// also while the driver is away, through each wait between tries: waits of 0.5 s doubling to 10 s,
// beating once each, let a WatchdogSec shorter than the wait restart the agent for the driver's
// absence. fault-driver-reload on a file clock set inside its window: forty beats come long before
// the seven waits (0.5 + 1 + ... + 10 s, 35.5 s) the old beat needed for them.
TEST(SamplerHeartbeat, GoesRoundEveryTickWhileTheDriverIsAway) {
  char dir_template[] = "/tmp/gw-heartbeat-XXXXXX";
  ASSERT_NE(::mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template;
  const std::string clock = dir + "/sim-time";
  auto setClock = [&](double t) {
    std::ofstream(clock + ".tmp") << t << "\n";
    std::filesystem::rename(clock + ".tmp", clock);
  };
  setClock(5);
  setenv("GPUWARDEN_SIM_SCENARIO", (std::string(GW_SCENARIO_DIR) + "/fault-driver-reload.yaml").c_str(), 1);
  setenv("GPUWARDEN_SIM_CLOCK", ("file:" + clock).c_str(), 1);
  unsetenv("GPUWARDEN_SIM_START");
  unsetenv("GPUWARDEN_SIM_SPEED");
  collect::SamplerConfig sc;
  sc.fast_interval = std::chrono::milliseconds(100);
  sc.slow_interval = std::chrono::milliseconds(100);
  collect::Sampler sampler([] { return nvml::Session::open({GW_SIM_LIB}); }, sc);
  ASSERT_TRUE(sampler.start());
  auto until = [](const std::function<bool()>& done, std::chrono::seconds bound) {
    const auto end = std::chrono::steady_clock::now() + bound;
    while (!done() && std::chrono::steady_clock::now() < end)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return done();
  };
  setClock(12);
  ASSERT_TRUE(until([&] { return !sampler.agentStats().driver_up; }, std::chrono::seconds(30)));
  const std::uint64_t away = sampler.heartbeat();
  EXPECT_TRUE(until([&] { return sampler.heartbeat() >= away + 40; }, std::chrono::seconds(30)))
      << sampler.heartbeat() - away << " beats while the driver was away";
  EXPECT_FALSE(sampler.agentStats().driver_up);  // still away: the beats were the waits'
  sampler.stop();
  std::filesystem::remove_all(dir);
  unsetenv("GPUWARDEN_SIM_CLOCK");
}

// A sampler whose owner sets no cadence (a Monitor built without one, as in the node tests) runs
// at docs/config.md's defaults, the agent's: fast fields every 1 s, slow ones every 10 s, and a
// call past 2 s marks its GPU stalled.
TEST(SamplerDefaults, AreTheDocumentedOnes) {
  const collect::SamplerConfig c{};
  EXPECT_EQ(c.fast_interval, std::chrono::milliseconds(1000));
  EXPECT_EQ(c.slow_interval, std::chrono::milliseconds(10000));
  EXPECT_EQ(c.call_deadline, std::chrono::milliseconds(2000));
  EXPECT_TRUE(c.fields.empty());
}

// NVML is tried again after 0.5 s, then 1, 2, 4, 8 and at most every 10 s (docs/design.md), and the
// supervisor looks at its workers every 100 ms.
TEST(SamplerDefaults, TheReinitWaitDoublesFromHalfASecondToTen) {
  using std::chrono::milliseconds;
  std::vector<long long> waits;
  for (auto w = collect::kReinitFirstWait; waits.size() < 8; w = collect::nextReinitWait(w)) waits.push_back(w.count());
  EXPECT_EQ(waits, (std::vector<long long>{500, 1000, 2000, 4000, 8000, 10000, 10000, 10000}));
  EXPECT_EQ(collect::nextReinitWait(milliseconds(4999)), milliseconds(9998));
  EXPECT_EQ(collect::nextReinitWait(milliseconds(5001)), milliseconds(10000));
  EXPECT_EQ(collect::kSuperviseTick, milliseconds(100));
}
