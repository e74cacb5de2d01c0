// Rule tests on hand-built GpuViews: every rule has a case that fires and one that must not.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "health/idle_peers.h"
#include "health/rules.h"
#include "rule_test_util.h"

using namespace gw;
using namespace gw::health;
using namespace gw::health::test;

namespace {

// Feeds the node for `seconds` (one sample a second), calling `mutate(t_s, gpus)` before each.
template <class F>
std::vector<Finding> run(RuleEngine& e, std::vector<Gpu>& gs, int seconds, F mutate, std::int64_t t0 = 1'000'000) {
  std::int64_t now = t0;
  for (int s = 0; s <= seconds; ++s) {
    now = t0 + s * 1000LL;
    mutate(s, gs);
    e.observe(views(gs), now);
  }
  return e.evaluate(now);
}

// An Xid event `code` at `at_ms`; the test names its GPU (index, UUID or bus id).
events::GpuEvent xidAt(int code, std::int64_t at_ms) {
  events::GpuEvent x;
  x.kind = events::EventKind::Xid;
  x.code = code;
  x.timestamp_ms = at_ms;
  return x;
}

std::vector<Finding> run(RuleEngine& e, std::vector<Gpu>& gs, int seconds) {
  return run(e, gs, seconds, [](int, std::vector<Gpu>&) {});
}

bool has(const std::vector<Finding>& fs, const std::string& rule, int gpu = -2) {
  for (const auto& f : fs)
    if (f.rule == rule && (gpu == -2 || f.gpu_index == gpu)) return true;
  return false;
}
const Finding* find(const std::vector<Finding>& fs, const std::string& rule) {
  for (const auto& f : fs)
    if (f.rule == rule) return &f;
  return nullptr;
}
std::string dump(const std::vector<Finding>& fs) {
  std::string s;
  for (const auto& f : fs) s += f.key + " (" + std::string(severityName(f.severity)) + ") " + f.evidence + "\n";
  return s;
}

}  // namespace

TEST(HealthRules, HealthyTrainingNodeIsSilent) {
  RuleEngine e;
  auto gs = node(8);
  auto fs = run(e, gs, 700, [](int s, std::vector<Gpu>& g) {
    for (auto& x : g) {
      x.set("gpu_util", 93 + (s % 5)).set("sm_clock", 1755 + 15 * (s % 16)).set("power_usage", 680 + (s % 7));
      if (s % 600 < 5) x.set("gpu_util", 2);  // checkpoint dip
    }
  });
  EXPECT_TRUE(fs.empty()) << dump(fs);
}

TEST(HealthRules, IdleNodeIsSilent) {
  RuleEngine e;
  auto gs = node(8);
  for (auto& g : gs)
    g.set("gpu_util", 0)
        .set("power_usage", 72)
        .set("pstate", 8)
        .set("clock_event_reasons", 1)
        .set("sm_clock", 345)
        .set("pcie_link_gen", 1)
        .set("pcie_link_width", 16)
        .set("gpu_temp", 33);
  auto fs = run(e, gs, 400);
  EXPECT_TRUE(fs.empty()) << dump(fs);
}

TEST(HealthRules, GpuTemperature) {
  RuleEngine e;
  auto gs = node();
  gs[1].set("gpu_temp", 86);
  auto fs = run(e, gs, 10);
  EXPECT_FALSE(has(fs, "gpu_temperature")) << "held shorter than the hold time";
  fs = run(
      e, gs, 40, [](int, auto&) {}, 1'011'000);
  ASSERT_TRUE(has(fs, "gpu_temperature", 1)) << dump(fs);
  EXPECT_EQ(find(fs, "gpu_temperature")->severity, Severity::Warning);
  EXPECT_EQ(find(fs, "gpu_temperature")->kb_id, "hot-and-loud");
}

TEST(HealthRules, GpuTemperatureSpikeDoesNotFire) {
  RuleEngine e;
  auto gs = node();
  auto fs = run(e, gs, 120, [](int s, auto& g) { g[1].set("gpu_temp", s % 20 == 0 ? 90 : 70); });
  EXPECT_TRUE(fs.empty()) << dump(fs);
}

TEST(HealthRules, MemoryTemperature) {
  RuleEngine e;
  auto gs = node();
  gs[2].set("memory_temp", 96);
  EXPECT_TRUE(has(run(e, gs, 40), "memory_temperature", 2));
  RuleEngine quiet;
  auto ok = node();
  ok[2].set("memory_temp", 94);
  EXPECT_TRUE(run(quiet, ok, 40).empty());
}

TEST(HealthRules, ThermalSlowdownNeedsReasonAndFallingClocks) {
  RuleEngine e;
  auto gs = node();
  auto fs = run(e, gs, 60, [](int s, auto& g) {
    if (s > 20) g[0].set("clock_event_reasons", 0x48).set("sm_clock", 1080).set("gpu_temp", 84);
  });
  ASSERT_TRUE(has(fs, "thermal_slowdown", 0)) << dump(fs);
  EXPECT_EQ(find(fs, "thermal_slowdown")->severity, Severity::Critical);
  // reason bit but clocks at max: not a slowdown
  RuleEngine q;
  auto g2 = node();
  g2[0].set("clock_event_reasons", 0x20);
  EXPECT_FALSE(has(run(q, g2, 60), "thermal_slowdown"));
}

TEST(HealthRules, BoostClockChangesWithoutReasonsAreNormal) {
  RuleEngine e;
  auto gs = node();
  auto fs =
      run(e, gs, 300, [](int s, auto& g) { g[0].set("sm_clock", s % 2 ? 1980 : 1410).set("clock_event_reasons", 0); });
  EXPECT_TRUE(fs.empty()) << dump(fs);
}

TEST(HealthRules, PowerLowUnderLoad) {
  RuleEngine e;
  auto gs = node();
  gs[3].set("power_usage", 250).set("clock_event_reasons", 0);
  EXPECT_TRUE(has(run(e, gs, 70), "power_low_under_load", 3));
  RuleEngine q;
  auto g2 = node();
  g2[3].set("power_usage", 250).set("gpu_util", 40);  // not at full load
  EXPECT_FALSE(has(run(q, g2, 70), "power_low_under_load"));
}

// A power-saving P-state (P8 up to P31; docs/health.md: pstate_slow, 8) explains low power at full
// load, so only pstate_under_load speaks; P7 does not explain it, and neither does P32 (NVML's
// "unknown").
TEST(HealthRules, PowerLowUnderLoadIsExplainedByAPowerSavingPstate) {
  for (const int pstate : {7, 8, 31, 32}) {
    SCOPED_TRACE("P" + std::to_string(pstate));
    RuleEngine e;
    auto gs = node();
    gs[3].set("power_usage", 250).set("clock_event_reasons", 0).set("pstate", pstate);
    const auto fs = run(e, gs, 70);
    EXPECT_EQ(has(fs, "power_low_under_load", 3), pstate == 7 || pstate == 32) << dump(fs);
  }
}

// Power limits come in milliwatts: a 312.5 W limit is told as such, not rounded to 312 or 313.
TEST(HealthRules, PowerTextKeepsTheLimitsFraction) {
  RuleEngine e;
  auto gs = node();
  gs[3].set("power_usage", 100).set("clock_event_reasons", 0).set("enforced_power_limit", 312.5);
  gs[2].set("clock_event_reasons", 0x4).set("enforced_power_limit", 312.5).set("power_default_limit", 450);
  const auto fs = run(e, gs, 70);
  const Finding* low = find(fs, "power_low_under_load");
  ASSERT_NE(low, nullptr) << dump(fs);
  EXPECT_NE(low->summary.find("its 312.5 W limit"), std::string::npos) << low->summary;
  EXPECT_EQ(low->evidence, "power_usage=100.0 limit=312.5 gpu_util=95") << "the numbers behind it, as read";
  const Finding* capped = find(fs, "power_capped");
  ASSERT_NE(capped, nullptr) << dump(fs);
  EXPECT_NE(capped->summary.find("power-capped at 312.5 W, below its default 450 W limit"), std::string::npos)
      << capped->summary;
}

TEST(HealthRules, IdlePowerHigh) {
  RuleEngine e;
  auto gs = node();
  gs[1].set("gpu_util", 0).set("power_usage", 140);
  EXPECT_TRUE(has(run(e, gs, 130), "idle_power_high", 1));
  RuleEngine q;
  auto g2 = node();
  g2[1].set("gpu_util", 0).set("power_usage", 75);
  EXPECT_FALSE(has(run(q, g2, 130), "idle_power_high"));
}

TEST(HealthRules, PowerBrake) {
  RuleEngine e;
  auto gs = node();
  gs[1].set("clock_event_reasons", 0x88).set("sm_clock", 600).set("power_usage", 260);
  auto fs = run(e, gs, 20);
  ASSERT_TRUE(has(fs, "power_slowdown", 1)) << dump(fs);
  EXPECT_FALSE(has(fs, "power_low_under_load")) << "the brake explains the low power";
  RuleEngine q;
  auto g2 = node();
  g2[1].set("clock_event_reasons", 0x88);
  EXPECT_FALSE(has(run(q, g2, 5), "power_slowdown")) << "under the hold time";
}

TEST(HealthRules, PowerCapped) {
  RuleEngine e;
  auto gs = node();
  gs[0].set("enforced_power_limit", 400).set("power_limit", 400).set("power_usage", 398);
  EXPECT_TRUE(has(run(e, gs, 70), "power_capped", 0));
  RuleEngine q;
  auto g2 = node();  // SW power cap at the default limit: normal for compute-bound training
  EXPECT_FALSE(has(run(q, g2, 70), "power_capped"));
}

TEST(HealthRules, EccDbe) {
  RuleEngine e;
  auto gs = node();
  gs[2].set("ecc_dbe_volatile", 1);
  auto fs = run(e, gs, 2);
  ASSERT_TRUE(has(fs, "ecc_dbe", 2));
  EXPECT_TRUE(find(fs, "ecc_dbe")->sticky);
  EXPECT_EQ(find(fs, "ecc_dbe")->severity, Severity::Critical);
  RuleEngine q;
  auto g2 = node();
  g2[2].set("ecc_sbe_volatile", 3);
  EXPECT_TRUE(run(q, g2, 10).empty());
}

TEST(HealthRules, EccDbeFromEvent) {
  RuleEngine e;
  auto gs = node();
  run(e, gs, 2);
  events::GpuEvent ev;
  ev.kind = events::EventKind::EccDoubleBit;
  ev.gpu_uuid = gs[1].v.id.uuid;
  e.onEvent(ev);
  EXPECT_TRUE(has(run(
                      e, gs, 2, [](int, auto&) {}, 1'003'000),
                  "ecc_dbe", 1));
}

TEST(HealthRules, SbeRising) {
  RuleEngine e;
  auto gs = node();
  EXPECT_TRUE(has(run(e, gs, 300, [](int s, auto& g) { g[0].set("ecc_sbe_volatile", s); }), "ecc_sbe_rising", 0));
  RuleEngine q;
  auto g2 = node();
  EXPECT_FALSE(has(run(q, g2, 300, [](int s, auto& g) { g[0].set("ecc_sbe_volatile", s / 10); }), "ecc_sbe_rising"));
}

TEST(HealthRules, RetiredPages) {
  RuleEngine e;
  auto gs = node();
  gs[0].set("retired_pages_pending", 1);
  gs[1].set("retired_pages_sbe", 40).set("retired_pages_dbe", 23);
  auto fs = run(e, gs, 2);
  ASSERT_EQ(fs.size(), 2u) << dump(fs);
  EXPECT_EQ(fs[0].severity, Severity::Critical);
  EXPECT_EQ(fs[0].gpu_index, 1);
  EXPECT_EQ(fs[1].severity, Severity::Warning);
  RuleEngine q;
  auto g2 = node();
  g2[1].set("retired_pages_sbe", 10).set("retired_pages_dbe", 2);
  EXPECT_TRUE(run(q, g2, 2).empty());
}

TEST(HealthRules, RowRemap) {
  RuleEngine e;
  auto gs = node();
  gs[0].set("row_remap_pending", 1);
  gs[1].set("row_remap_failure", 1);
  gs[2].set("remapped_rows_uncorrectable", 512);
  auto fs = run(e, gs, 2);
  ASSERT_EQ(fs.size(), 3u) << dump(fs);
  for (const auto& f : fs) EXPECT_EQ(f.rule, "row_remap");
  EXPECT_EQ(fs.back().severity, Severity::Warning);
  RuleEngine q;
  auto g2 = node();
  g2[2].set("remapped_rows_uncorrectable", 5);
  EXPECT_TRUE(run(q, g2, 2).empty());
}

// Each recovery action the driver can ask for, named as nvidia-smi names it, with its severity and
// what to do; none (0) and a driver that cannot say (no reading) are silent.
TEST(HealthRules, RecoveryActionNamesWhatTheDriverAsks) {
  RuleEngine e;
  auto gs = node(6);  // GPU n asks for action n
  gs[1].set("recovery_action", 1);
  gs[2].set("recovery_action", 2);
  gs[3].set("recovery_action", 3);
  gs[4].set("recovery_action", 4);
  gs[5].set("recovery_action", 0);
  auto fs = run(e, gs, 2);
  ASSERT_EQ(fs.size(), 4u) << dump(fs);
  struct Want {
    int gpu;
    Severity severity;
    std::string name, action;
  };
  const Want want[] = {{1, Severity::Critical, "Reset", "reset"},
                       {2, Severity::Critical, "Reboot", "reboot"},
                       {3, Severity::Warning, "Drain P2P", "peer-to-peer"},
                       {4, Severity::Critical, "Drain and Reset", "reset"}};
  for (const Want& w : want) {
    const Finding* f = nullptr;
    for (const auto& x : fs)
      if (x.gpu_index == w.gpu) f = &x;
    ASSERT_NE(f, nullptr) << w.gpu << "\n" << dump(fs);
    EXPECT_EQ(f->rule, "recovery_action");
    EXPECT_EQ(f->severity, w.severity) << w.gpu;
    EXPECT_NE(f->summary.find(": " + w.name + "."), std::string::npos) << f->summary;
    EXPECT_NE(f->action.find(w.action), std::string::npos) << f->action;
    EXPECT_EQ(f->evidence, "recovery_action=" + std::to_string(static_cast<int>(w.gpu)) + " (" + w.name + ")");
  }
}

// The fabric registration first (not started, in progress, failed: CUDA's error 802 named), its
// health summary only once registered; a GPU on no fabric (no reading) and a healthy one are silent.
TEST(HealthRules, FabricNamesTheRegistrationThenItsHealth) {
  RuleEngine e;
  auto gs = node(8);
  gs[1].set("fabric_status", 1).set("fabric_health", 1);
  gs[2].set("fabric_status", 2).set("fabric_health", 1);
  gs[3].set("fabric_status", 4).set("fabric_health", 1);
  gs[4].set("fabric_status", 3).set("fabric_health", 2);
  gs[5].set("fabric_status", 3).set("fabric_health", 3);
  gs[6].set("fabric_status", 3).set("fabric_health", 1);
  gs[7].set("fabric_status", 1).set("fabric_health", 2);  // not registered: its health is not the news
  const std::int64_t hold = RuleConfig{}.fabric_hold_ms;
  auto fs = run(e, gs, static_cast<int>(hold / 1000) + 2);
  struct Want {
    int gpu;
    Severity severity;
    std::string summary, action, evidence;
  };
  const Want want[] = {
      {1, Severity::Critical, "not started", "systemctl start nvidia-fabricmanager", "fabric_status=1 (not started)"},
      {2, Severity::Warning, "still in progress", "restart nvidia-fabricmanager", "fabric_status=2 (in progress)"},
      {3, Severity::Critical, "failed", "SXid", "fabric_status=4 (failure)"},
      {4, Severity::Critical, "unhealthy", "Drain the node", "fabric_health=2 (Unhealthy)"},
      {5, Severity::Warning, "limited capacity", "nvidia-smi nvlink -s", "fabric_health=3 (Limited Capacity)"},
      {7, Severity::Critical, "not started", "systemctl start nvidia-fabricmanager", "fabric_status=1 (not started)"}};
  std::size_t fabric = 0;
  for (const auto& f : fs) fabric += f.rule == "fabric";
  EXPECT_EQ(fabric, std::size(want)) << dump(fs);
  for (const Want& w : want) {
    const Finding* f = nullptr;
    for (const auto& x : fs)
      if (x.gpu_index == w.gpu && x.rule == "fabric") f = &x;
    ASSERT_NE(f, nullptr) << w.gpu << "\n" << dump(fs);
    EXPECT_EQ(f->severity, w.severity) << w.gpu;
    EXPECT_NE(f->summary.find(w.summary), std::string::npos) << f->summary;
    EXPECT_NE(f->action.find(w.action), std::string::npos) << f->action;
    EXPECT_EQ(f->evidence, w.evidence);
    if (w.gpu <= 3 || w.gpu == 7) {
      EXPECT_NE(f->summary.find("error 802"), std::string::npos) << f->summary;
    }
  }
}

TEST(HealthRules, PcieDowntrainOnlyUnderLoad) {
  RuleEngine e;
  auto gs = node();
  gs[2].set("pcie_link_gen", 3).set("pcie_link_width", 8);
  EXPECT_TRUE(has(run(e, gs, 40), "pcie_downtrain", 2));
  RuleEngine q;
  auto g2 = node();
  g2[2].set("pcie_link_gen", 1).set("gpu_util", 0).set("power_usage", 70);  // idle downshift
  EXPECT_FALSE(has(run(q, g2, 40), "pcie_downtrain"));
}

TEST(HealthRules, PcieReplayRate) {
  RuleEngine e;
  auto gs = node();
  EXPECT_TRUE(has(run(e, gs, 90, [](int s, auto& g) { g[3].set("pcie_replay_counter", s * 2); }), "pcie_replay", 3));
  RuleEngine q;
  auto g2 = node();
  EXPECT_FALSE(has(run(q, g2, 90, [](int s, auto& g) { g[3].set("pcie_replay_counter", s / 10); }), "pcie_replay"));
}

// A GPU that does not report its link generation is held to the Gen5 allowance (40 a minute), the
// most lenient, not to an older generation's.
TEST(HealthRules, PcieReplayWithoutALinkGenerationUsesTheGen5Allowance) {
  RuleEngine q;
  auto g2 = node();
  g2[3].unset("pcie_link_gen");
  // 30 a minute: within Gen5's 40, above Gen4's 20.
  const auto quiet = run(q, g2, 90, [](int s, auto& g) { g[3].set("pcie_replay_counter", s / 2); });
  EXPECT_FALSE(has(quiet, "pcie_replay")) << dump(quiet);
  RuleEngine e;
  auto gs = node();
  gs[3].unset("pcie_link_gen");
  const auto fs = run(e, gs, 90, [](int s, auto& g) { g[3].set("pcie_replay_counter", s * 2); });
  const Finding* f = find(fs, "pcie_replay");
  ASSERT_NE(f, nullptr) << dump(fs);
  EXPECT_NE(f->summary.find(" packets a minute, above the Gen5 allowance of 40."), std::string::npos) << f->summary;
}

TEST(HealthRules, NvlinkDownAndErrors) {
  RuleEngine e;
  auto gs = node();
  auto fs = run(e, gs, 40, [](int s, auto& g) {
    if (s > 10) g[0].set("nvlink_active_links", 17);
    g[1].set("nvlink_replay_errors", s);
  });
  EXPECT_TRUE(has(fs, "nvlink_down", 0)) << dump(fs);
  EXPECT_TRUE(has(fs, "nvlink_errors", 1)) << dump(fs);
  RuleEngine q;
  auto g2 = node();
  EXPECT_TRUE(run(q, g2, 40, [](int s, auto& g) { g[1].set("nvlink_replay_errors", s / 20); }).empty());
}

TEST(HealthRules, PstateUnderLoad) {
  RuleEngine e;
  auto gs = node();
  gs[0].set("pstate", 8);
  EXPECT_TRUE(has(run(e, gs, 40), "pstate_under_load", 0));
  RuleEngine q;
  auto g2 = node();
  g2[0].set("pstate", 8).set("gpu_util", 0).set("power_usage", 70);
  EXPECT_FALSE(has(run(q, g2, 40), "pstate_under_load"));
}

TEST(HealthRules, FanFailure) {
  RuleEngine e;
  auto gs = node();
  gs[0].set("fan_speed", 0).set("gpu_temp", 70);
  EXPECT_TRUE(has(run(e, gs, 40), "fan_failure", 0));
  RuleEngine q;
  auto g2 = node();
  g2[0].set("fan_speed", 0).set("gpu_temp", 35);  // zero-RPM idle mode on a cool card
  EXPECT_FALSE(has(run(q, g2, 40), "fan_failure"));
  // Zero-RPM boards keep their fans stopped until 50-60 °C: an idle one in a warm case is not broken.
  RuleEngine w;
  auto g3 = node();
  g3[0].set("fan_speed", 0).set("gpu_temp", 58);
  EXPECT_FALSE(has(run(w, g3, 40), "fan_failure"));
}

TEST(HealthRules, StarvationSustainedAndSwinging) {
  RuleEngine e;
  auto gs = node(2);
  auto fs = run(e, gs, 320, [](int s, auto& g) {
    g[0].set("gpu_util", 45 + (s % 5));
    g[1].set("gpu_util", s % 2 ? 4 : 18);
  });
  ASSERT_TRUE(has(fs, "starvation", 0)) << dump(fs);
  ASSERT_TRUE(has(fs, "starvation", 1)) << dump(fs);
  // bursty inference (2 % then 90 %) and a mid-level wave are not starvation
  RuleEngine q;
  auto g2 = node(2);
  fs = run(q, g2, 320, [](int s, auto& g) {
    g[0].set("gpu_util", s % 60 < 25 ? 90 : 2).set("power_usage", s % 60 < 25 ? 600 : 80);
    g[1].set("gpu_util", 55 + 45 * std::sin(s / 47.7)).set("power_usage", 500);
  });
  EXPECT_FALSE(has(fs, "starvation")) << dump(fs);
}

TEST(HealthRules, Straggler) {
  RuleEngine e;
  auto gs = node(8);
  gs[5].set("gpu_util", 0).set("power_usage", 80);
  auto fs = run(e, gs, 70);
  ASSERT_TRUE(has(fs, "straggler", 5)) << dump(fs);
  EXPECT_EQ(fs.size(), 1u) << dump(fs);
  // Its peers are the other seven, each counted once.
  EXPECT_EQ(fs[0].summary, "GPU 5 is idle (0 %) while 7 of its 7 peers are busy.");
  EXPECT_EQ(fs[0].evidence, "gpu_util=0 busy_peers=7/7");
  RuleEngine q;
  auto g2 = node(8);
  for (int i = 0; i < 8; ++i)
    g2[i].set("gpu_util", i < 4 ? 95 : 0).set("power_usage", i < 4 ? 690 : 72);  // half the node idle
  EXPECT_TRUE(run(q, g2, 70).empty());
}

TEST(HealthRules, ZombieProcess) {
  auto root = std::filesystem::temp_directory_path() / ("gw-rules-root-" + std::to_string(getpid()));
  std::filesystem::create_directories(root / "proc" / "100");
  RuleEngine e({}, root.string());
  auto gs = node(2);
  run(e, gs, 1);
  for (int s = 0; s < 40; ++s) e.observeProcesses(0, {{100, 1 << 30}, {200, 8ull << 30}}, 1'001'000 + s * 1000);
  auto fs = e.evaluate(1'040'000);
  ASSERT_TRUE(has(fs, "zombie_process", 0)) << dump(fs);
  EXPECT_NE(find(fs, "zombie_process")->summary.find("200"), std::string::npos);
  e.observeProcesses(0, {{100, 1 << 30}}, 1'041'000);
  EXPECT_FALSE(has(e.evaluate(1'041'000), "zombie_process"));
  std::filesystem::remove_all(root);
}

TEST(HealthRules, GpuLostAndStalled) {
  RuleEngine e;
  auto gs = node();
  gs[3].v.state = collect::GpuState::Lost;
  gs[2].v.state = collect::GpuState::Stalled;
  auto fs = run(e, gs, 40);
  ASSERT_TRUE(has(fs, "gpu_lost", 3));
  EXPECT_EQ(find(fs, "gpu_lost")->severity, Severity::Fatal);
  EXPECT_TRUE(has(fs, "gpu_stalled", 2));
  EXPECT_FALSE(has(fs, "straggler"));
}

// A GPU that stops answering keeps no finding read from its last values (they are stale), but
// keeps the latched facts (a double-bit ECC error stays until an operator resolves it).
TEST(HealthRules, ALostGpuDropsItsStaleValueFindingsAndKeepsItsLatchedOnes) {
  RuleEngine e;
  auto gs = node();
  gs[0].set("persistence_mode", 0);
  gs[1].set("ecc_dbe_volatile", 1);
  auto before = run(e, gs, 40);
  ASSERT_TRUE(has(before, "persistence_off", 0)) << dump(before);
  ASSERT_TRUE(has(before, "ecc_dbe", 1)) << dump(before);
  gs[0].v.state = collect::GpuState::Lost;
  gs[1].v.state = collect::GpuState::Lost;
  auto after = run(
      e, gs, 40, [](int, std::vector<Gpu>&) {}, 1'041'000);
  EXPECT_TRUE(has(after, "gpu_lost", 0)) << dump(after);
  EXPECT_TRUE(has(after, "gpu_lost", 1)) << dump(after);
  EXPECT_FALSE(has(after, "persistence_off", 0)) << dump(after);
  EXPECT_TRUE(has(after, "ecc_dbe", 1)) << dump(after);
}

TEST(HealthRules, GpuCount) {
  RuleConfig c;
  c.expected_gpus = 8;
  RuleEngine e(c);
  auto gs = node(7);
  EXPECT_TRUE(has(run(e, gs, 40), "gpu_count"));
  RuleEngine q(c);
  auto g2 = node(8);
  EXPECT_TRUE(run(q, g2, 40).empty());
}

// Without expected_gpus the count is not checked: a node that sees no GPU at all (driver not
// loaded yet) raises no gpu_count, however long it lasts.
TEST(HealthRules, GpuCountIsNotCheckedUnlessConfigured) {
  RuleEngine e;
  std::vector<Gpu> none;
  EXPECT_FALSE(has(run(e, none, 40), "gpu_count"));
}

TEST(HealthRules, PersistenceOff) {
  RuleEngine e;
  auto gs = node();
  gs[0].set("persistence_mode", 0);
  EXPECT_TRUE(has(run(e, gs, 15), "persistence_off", 0));
  RuleConfig c;
  c.require_persistence = false;
  RuleEngine q(c);
  EXPECT_TRUE(run(q, gs, 15).empty());
}

TEST(HealthRules, DriverMismatch) {
  RuleEngine e;
  e.setNvmlInitError(18, 1000);
  auto fs = e.evaluate(2000);
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].rule, "driver_mismatch");
  EXPECT_EQ(fs[0].kb_id, "driver-lib-mismatch");
  RuleEngine q;
  q.setNvmlInitError(9, 1000);  // driver not loaded: not a mismatch
  EXPECT_TRUE(q.evaluate(2000).empty());
}

TEST(HealthRules, XidFromCatalog) {
  RuleEngine e;
  auto gs = node();
  run(e, gs, 1);
  events::GpuEvent x = xidAt(48, 1'001'000);
  x.gpu_index = 2;
  e.onEvent(x);
  auto fs = e.evaluate(1'002'000);
  ASSERT_EQ(fs.size(), 1u) << dump(fs);
  EXPECT_EQ(fs[0].rule, "xid");
  EXPECT_EQ(fs[0].xid, 48);
  EXPECT_EQ(fs[0].severity, Severity::Critical);
  EXPECT_TRUE(fs[0].sticky);
  EXPECT_TRUE(e.evaluate(1'001'000 + 700'000).empty()) << "Xid findings age out; the incident stays";
}

// A kernel-log Xid whose bus id the agent could not map to an index or UUID (the GPU had already
// left NVML's enumeration) still lands on its GPU, matched by the bus id alone.
TEST(HealthRules, XidKnownOnlyByItsBusIdLandsOnThatGpu) {
  RuleEngine e;
  auto gs = node();
  gs[0].v.id.pci_bus_id = "00000000:18:00.0";
  gs[1].v.id.pci_bus_id = "00000000:2A:00.0";
  gs[2].v.id.pci_bus_id = "00000000:3A:00.0";
  gs[3].v.id.pci_bus_id = "00000000:5D:00.0";
  run(e, gs, 1);
  events::GpuEvent x = xidAt(48, 1'001'000);
  x.pci_bus_id = "00000000:3A:00.0";
  e.onEvent(x);
  const auto fs = e.evaluate(1'002'000);
  ASSERT_EQ(fs.size(), 1u) << dump(fs);
  EXPECT_EQ(fs[0].rule, "xid");
  EXPECT_EQ(fs[0].xid, 48);
  EXPECT_EQ(fs[0].gpu_index, 2);
  EXPECT_EQ(fs[0].gpu_uuid, gs[2].v.id.uuid);
}

// An Xid logged before the sampler has named its GPU waits for it and is counted once when the GPU
// appears: replayed on every later pass, one application fault would pass for a repeating one.
TEST(HealthRules, AnXidBeforeItsGpuIsKnownCountsOnce) {
  RuleEngine e;
  auto gs = node();
  events::GpuEvent x = xidAt(13, 1'000'000);
  x.gpu_uuid = gs[1].v.id.uuid;
  e.onEvent(x);
  const auto fs = run(e, gs, 2);
  const Finding* f = find(fs, "xid");
  ASSERT_NE(f, nullptr) << dump(fs);
  EXPECT_EQ(f->gpu_index, 1);
  EXPECT_EQ(f->evidence, "xid=13 count=1");
  EXPECT_EQ(f->severity, Severity::Info) << f->summary;
}

// Events waiting for their GPU are capped at 256, so a flood before the GPU is known cannot grow
// memory without bound: of 300 Xids, the first 256 count once the GPU appears, whether it appears at
// the first observation or only at a later one (the queue is kept across observations that do not
// name it).
TEST(HealthRules, AtMost256EventsWaitForTheirGpu) {
  for (const bool later : {false, true}) {
    SCOPED_TRACE(later ? "GPU 4 appears at the second observation" : "GPU 4 appears at the first observation");
    RuleEngine e;
    auto gs = node(5);
    for (int k = 0; k < 300; ++k) {
      events::GpuEvent x = xidAt(13, 999'000 + k);
      x.gpu_uuid = gs[4].v.id.uuid;
      e.onEvent(x);
    }
    if (later) {
      auto four = node(4);
      e.observe(views(four), 999'500);
    }
    const auto fs = run(e, gs, 2);
    const Finding* f = find(fs, "xid");
    ASSERT_NE(f, nullptr) << dump(fs);
    EXPECT_EQ(f->gpu_index, 4);
    EXPECT_EQ(f->evidence, "xid=13 count=256");
  }
}

TEST(HealthRules, ApplicationXidIsInfoAndEscalatesOnlyWhenRepeatedAlone) {
  RuleEngine e;
  auto gs = node();
  run(e, gs, 1);
  events::GpuEvent x = xidAt(13, 1'001'000);
  x.gpu_uuid = gs[1].v.id.uuid;
  e.onEvent(x);
  auto fs = e.evaluate(1'002'000);
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].severity, Severity::Info);
  EXPECT_FALSE(fs[0].sticky);
  e.onEvent(x);
  e.onEvent(x);
  fs = e.evaluate(1'002'000);
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].severity, Severity::Warning) << "repeats on one GPU while peers run clean";
}

// One application Xid on a peer is enough for the peers not to run clean: the repeats on GPU 1
// are then not the GPU's alone and stay informational.
TEST(HealthRules, ApplicationXidRepeatsDoNotEscalateWhenAPeerHasOneToo) {
  RuleEngine e;
  auto gs = node();
  run(e, gs, 1);
  events::GpuEvent x = xidAt(13, 1'001'000);
  x.gpu_uuid = gs[1].v.id.uuid;
  for (int i = 0; i < 3; ++i) e.onEvent(x);
  events::GpuEvent peer = x;
  peer.gpu_uuid = gs[2].v.id.uuid;
  e.onEvent(peer);
  const auto fs = e.evaluate(1'002'000);
  ASSERT_EQ(fs.size(), 2u) << dump(fs);
  for (const auto& f : fs) {
    EXPECT_EQ(f.rule, "xid");
    EXPECT_EQ(f.severity, Severity::Info) << "GPU " << f.gpu_index << ": " << f.summary;
  }
}

TEST(HealthRules, RingBufferIsBounded) {
  RuleEngine e;
  auto gs = node(1);
  run(e, gs, 3000);
  auto ctx = e.contextSnapshot(gs[0].v.id.uuid, 1'000'000 + 3000 * 1000LL, 3'600'000);
  EXPECT_EQ(ctx["series"]["gpu_temp"].size(), RuleEngine::kRingCapacity);
  EXPECT_EQ(e.contextSnapshot(gs[0].v.id.uuid, 1'000'000 + 3000 * 1000LL)["series"]["power_usage"].size(), 61u);
}

TEST(HealthRules, ConfigYaml) {
  auto c = parseRuleConfig(
      "gpu_temp_c: 80\nexpected_gpus: 8\ndisabled: [straggler]\npcie_replay_per_min: [1, 2, 3, 4, 5]\n");
  ASSERT_TRUE(c.ok()) << c.error();
  EXPECT_EQ(c->gpu_temp_c, 80);
  EXPECT_EQ(c->expected_gpus, 8);
  EXPECT_TRUE(c->disabled.count("straggler"));
  auto bad = parseRuleConfig("gpu_temp_c: 80\ngpu_tmep_c: 3\n", "rules.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().find("rules.yaml:2:"), std::string::npos) << bad.error();
  auto bad2 = parseRuleConfig("disabled: [nope]\n", "r.yaml");
  ASSERT_FALSE(bad2.ok());
  EXPECT_NE(bad2.error().find("r.yaml:1:"), std::string::npos) << bad2.error();
}

TEST(HealthRules, DisabledRuleDoesNotFire) {
  RuleConfig c;
  c.disabled.insert("gpu_temperature");
  RuleEngine e(c);
  auto gs = node();
  gs[0].set("gpu_temp", 90);
  EXPECT_FALSE(has(run(e, gs, 40), "gpu_temperature"));
}

// The instant "idle while peers busy" mark of dmon and /api/v1/latest: at most 10 % while the
// answering peers average at least 60 %, each at its edge and one small step past it.
TEST(IdlePeers, AtMostTenPercentWhileThePeersAverageSixty) {
  EXPECT_EQ(idleWhilePeersBusy({10, 60}), (std::vector<bool>{true, false}));
  EXPECT_EQ(idleWhilePeersBusy({10.01, 60}), (std::vector<bool>{false, false}));
  EXPECT_EQ(idleWhilePeersBusy({10, 59.99}), (std::vector<bool>{false, false}));
  EXPECT_EQ(idleWhilePeersBusy({0, 50, 70}), (std::vector<bool>{true, false, false})) << "peers average 60";
}

// A GPU that did not answer (a negative reading) is neither marked nor a peer, and a sample needs
// two answering GPUs: one alone has no peers to be slower than. A GPU at 0 % did answer.
TEST(IdlePeers, OnlyAnsweringGpusCountAndTwoAreNeeded) {
  EXPECT_EQ(idleWhilePeersBusy({}), std::vector<bool>{});
  EXPECT_EQ(idleWhilePeersBusy({5}), (std::vector<bool>{false}));
  EXPECT_EQ(idleWhilePeersBusy({5, -1}), (std::vector<bool>{false, false}));
  EXPECT_EQ(idleWhilePeersBusy({0, -1, 80}), (std::vector<bool>{true, false, false}));
  EXPECT_EQ(idleWhilePeersBusy({-1, 0, 80}), (std::vector<bool>{false, true, false}));
}
