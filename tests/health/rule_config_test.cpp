// The health configuration: every key a rule compares with is read into the member its threshold
// reads, bad values are refused naming the file, the line and the key, and the engine takes a new
// configuration (a reload) and a scheduler's workload class without losing what it has learnt.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "health/rule.h"
#include "health/rule_registry.h"
#include "rule_test_util.h"

namespace gw::health {
namespace {

using test::Gpu;

constexpr std::int64_t kT0 = 1'700'000'000'000;

// A threshold's config_key as written in YAML: "thermal_clock_drop (1 − it)" and
// "pcie_replay_per_min[2]" say how the key is read, not its name.
bool plainKey(std::string_view k) { return !k.empty() && k.find_first_of(" [") == std::string_view::npos; }

TEST(RuleConfigKeys, EveryThresholdKeySetsWhatTheRuleCompares) {
  int checked = 0;
  for (const Rule* r : ruleRegistry()) {
    for (const Threshold& t : r->info.thresholds) {
      if (!plainKey(t.config_key) || !t.value) continue;
      // One step above the default: inside every range and every order between keys.
      const double want = t.value(RuleConfig{}) + t.step;
      const std::string yaml = std::string(t.config_key) + ": " + trimmed(want, 3) + "\n";
      auto c = parseRuleConfig(yaml, "r.yaml");
      ASSERT_TRUE(c) << yaml << c.error();
      EXPECT_DOUBLE_EQ(t.value(*c), want) << r->info.name << " " << t.signal;
      ++checked;
    }
  }
  EXPECT_GE(checked, 25);
}

TEST(RuleConfigKeys, WorkloadClassesPerNodeAndPerGpu) {
  auto c = parseRuleConfig(
      "workload: inference\nworkload_by_gpu:\n  0: training\n  07: idle\n  GPU-5d8a3c2e: interactive\n", "r.yaml");
  ASSERT_TRUE(c) << c.error();
  EXPECT_EQ(c->workload, WorkloadClass::kInference);
  ASSERT_EQ(c->workload_by_gpu.size(), 3u);
  EXPECT_EQ(c->workload_by_gpu.at("0"), WorkloadClass::kTraining);
  EXPECT_EQ(c->workload_by_gpu.at("7"), WorkloadClass::kIdle);  // "07" is GPU 7
  EXPECT_EQ(c->workload_by_gpu.at("GPU-5d8a3c2e"), WorkloadClass::kInteractive);
  EXPECT_FALSE(RuleConfig{}.workload.has_value());  // unset: inferred
}

TEST(RuleConfigKeys, BadValuesNameFileLineAndKey) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"gpu_temp_c: 80\ngpu_tmep_c: 3\n", "r.yaml:2: gpu_tmep_c: unknown key"},
      {"gpu_temp_c: hot\n", "r.yaml:1: gpu_temp_c: expected a number, got 'hot'"},
      {"gpu_temp_c: .nan\n", "r.yaml:1: gpu_temp_c: must be between 0 and 150 °C, got .nan"},
      {"\nlow_power_fraction: 65\n", "r.yaml:2: low_power_fraction: must be between 0 and 1, got 65"},
      {"load_util: 101\n", "r.yaml:1: load_util: must be between 0 and 100 %, got 101"},
      {"expected_gpus: 8.5\n", "r.yaml:1: expected_gpus: expected a whole number, got '8.5'"},
      {"expected_gpus: -1\n", "r.yaml:1: expected_gpus: must be between 0 and 1024, got -1"},
      {"stalled_hold_ms: 30s\n", "r.yaml:1: stalled_hold_ms: expected a whole number of milliseconds, got '30s'"},
      {"starvation_window_ms: 3600000\n",
       "r.yaml:1: starvation_window_ms: must be between 10000 and 648000 ms, got 3600000"},
      {"require_persistence: maybe\n", "r.yaml:1: require_persistence: expected true or false, got 'maybe'"},
      {"gpu_temp_c: [80]\n", "r.yaml:1: gpu_temp_c: expected a single value"},
      {"pstate_slow: 0\n", "r.yaml:1: pstate_slow: must be between 1 and 15, got 0"},
      {"app_xid_repeat: 0\n", "r.yaml:1: app_xid_repeat: must be between 1 and 1000000, got 0"},
      {"workload: serving\n", "r.yaml:1: workload: expected training, inference, interactive or idle, got 'serving'"},
      {"workload_by_gpu:\n  3: serving\n",
       "r.yaml:2: workload_by_gpu.3: expected training, inference, interactive or idle, got 'serving'"},
      {"workload_by_gpu: {gpu3: training}\n", "r.yaml:1: workload_by_gpu: 'gpu3' is neither a GPU index"},
      {"workload_by_gpu:\n  3: training\n  03: inference\n", "r.yaml:3: workload_by_gpu.03: GPU given twice"},
      {"workload_by_gpu: [3]\n", "r.yaml:1: workload_by_gpu: expected a mapping"},
      {"disabled: [gpu_temperature, nope]\n", "r.yaml:1: disabled: unknown rule 'nope'"},
      {"pcie_replay_per_min: [1, 2, x, 4, 5]\n", "r.yaml:1: pcie_replay_per_min[2]: expected a number"},
      {"pcie_replay_per_min: [1, 2]\n", "r.yaml:1: pcie_replay_per_min: expected a list of 5 numbers"},
      {"gpu_temp_c: 80\nswing_low: 25\n", "r.yaml:1: swing_high: needs swing_low < swing_high ≤ starvation_util_max"},
      {"idle_util: 70\n", "load_util: needs idle_util < load_util ≤ full_load_util (70, 60, 90)"},
      // The orders are strict below: a band's low edge equal to its high edge is refused too.
      {"swing_low: 20\n", "r.yaml:1: swing_high: needs swing_low < swing_high ≤ starvation_util_max (20, 20, 70)"},
      {"idle_util: 60\n", "r.yaml:1: load_util: needs idle_util < load_util ≤ full_load_util (60, 60, 90)"},
      // GPU indexes run 0-1023; 1024 is neither an index nor a UUID.
      {"workload_by_gpu: {1024: training}\n", "r.yaml:1: workload_by_gpu: '1024' is neither a GPU index (0-1023)"},
      // Values in these messages keep three decimals at most.
      {"idle_util: 70.12345\n", "load_util: needs idle_util < load_util ≤ full_load_util (70.123, 60, 90)"},
      {"- gpu_temp_c\n", "r.yaml:1: expected a mapping of health settings"},
  };
  for (const auto& [yaml, want] : cases) {
    auto c = parseRuleConfig(yaml, "r.yaml");
    ASSERT_FALSE(c) << yaml;
    EXPECT_NE(c.error().find(want), std::string::npos) << yaml << "\n  got: " << c.error() << "\n want: " << want;
  }
}

// Ranges pinned at their documented edges (docs/health.md), written here rather than read from the
// key list so that a range changed in one place fails.
TEST(RuleConfigKeys, RangesAtTheirEdges) {
  const std::vector<std::pair<std::string, bool>> cases = {
      {"leftover_min_gib: 0\n", true},  // 0: any memory a live process holds on an idle GPU
      {"leftover_min_gib: -0.5\n", false},
      {"leftover_min_gib: 4096\n", true},
      {"leftover_min_gib: 4096.5\n", false},
      {"straggler_min_peers: 1\n", true},
      {"straggler_min_peers: 0\n", false},
      {"straggler_min_peers: 1024\n", true},
      {"straggler_min_peers: 1025\n", false},
      {"expected_gpus: 0\n", true},
      {"expected_gpus: 1024\n", true},
      {"expected_gpus: 1025\n", false},
      {"gpu_temp_c: 0\n", true},
      {"gpu_temp_c: 150\n", true},
      {"gpu_temp_c: 150.5\n", false},
      {"starvation_window_ms: 10000\n", true},
      {"starvation_window_ms: 9999\n", false},
      {"starvation_window_ms: 648000\n", true},
      {"starvation_window_ms: 648001\n", false},
      {"pcie_replay_per_min: [0, 0, 0, 0, 1000000000]\n", true},
      {"pcie_replay_per_min: [0, 0, 0, 0, 1000000000.5]\n", false},
      {"swing_low: 19.999\n", true},  // just below swing_high (20)
      {"idle_util: 59.999\n", true},  // just below load_util (60)
      {"workload_by_gpu: {1023: training}\n", true},
  };
  for (const auto& [yaml, ok] : cases) EXPECT_EQ(parseRuleConfig(yaml, "r.yaml").ok(), ok) << yaml;
}

// Every numeric key of the health section: its default, its range's edges and one step past each,
// and the value landing in the member the rules compare. Written out from docs/health.md's table
// (not read from the key list or the struct), so that a default or a bound moved in one place fails.
template <typename T>
struct KeyRow {
  const char* name;
  T RuleConfig::*member;
  T def, min, max;
  // Other keys that let an edge stand against the cross-key rules (idle_util < load_util ≤
  // full_load_util, swing_low < swing_high ≤ starvation_util_max), and the edges those rules
  // forbid whatever the others say: there only the step past is checked.
  const char* context = "";
  bool min_reachable = true, max_reachable = true;
};

template <typename T>
void checkRows(const std::vector<KeyRow<T>>& rows, T step) {
  const RuleConfig defaults = *parseRuleConfig("", "r.yaml");
  for (const auto& r : rows) {
    EXPECT_EQ(defaults.*r.member, r.def) << r.name << " default";
    auto text = [](T v) {
      std::ostringstream o;
      o.precision(17);
      o << v;
      return o.str();
    };
    auto parse = [&](T v) {
      return parseRuleConfig(std::string(r.context) + r.name + ": " + text(v) + "\n", "r.yaml");
    };
    for (T v : {r.min, r.max}) {
      if ((v == r.min && !r.min_reachable) || (v == r.max && !r.max_reachable)) continue;
      auto c = parse(v);
      ASSERT_TRUE(c) << r.name << " = " << text(v) << ": " << c.error();
      EXPECT_EQ((*c).*r.member, v) << r.name;
    }
    for (T v : {r.min - step, r.max + step}) {
      auto c = parse(v);
      ASSERT_FALSE(c) << r.name << " = " << text(v) << " was accepted";
      EXPECT_NE(c.error().find(std::string(r.name) + ": must be between "), std::string::npos) << c.error();
    }
  }
}

TEST(RuleConfigKeys, EveryDefaultAndRangeAsDocumented) {
  checkRows<double>(
      {
          {"load_util", &RuleConfig::load_util, 60, 0, 100, "full_load_util: 100\n", false, true},
          {"full_load_util", &RuleConfig::full_load_util, 90, 0, 100, "", false, true},
          {"idle_util", &RuleConfig::idle_util, 2, 0, 100, "", true, false},
          {"gpu_temp_c", &RuleConfig::gpu_temp_c, 85, 0, 150},
          {"memory_temp_c", &RuleConfig::memory_temp_c, 95, 0, 150},
          {"thermal_clock_drop", &RuleConfig::thermal_clock_drop, 0.1, 0, 1},
          {"low_power_fraction", &RuleConfig::low_power_fraction, 0.65, 0, 1},
          {"idle_power_w", &RuleConfig::idle_power_w, 100, 0, 2000},
          {"power_cap_fraction", &RuleConfig::power_cap_fraction, 0.9, 0, 1},
          {"retired_pages_max", &RuleConfig::retired_pages_max, 63, 0, 1000000},
          {"remap_uncorrectable_max", &RuleConfig::remap_uncorrectable_max, 512, 0, 1000000},
          {"sbe_rise_max", &RuleConfig::sbe_rise_max, 100, 0, 1000000000},
          {"nvlink_error_max", &RuleConfig::nvlink_error_max, 10, 0, 1000000000},
          {"pstate_slow", &RuleConfig::pstate_slow, 8, 1, 15},
          {"fan_min_temp_c", &RuleConfig::fan_min_temp_c, 65, 0, 150},
          {"starvation_util_max", &RuleConfig::starvation_util_max, 70, 0, 100, "", false, true},
          {"swing_low", &RuleConfig::swing_low, 3, 0, 100, "", true, false},
          {"swing_high", &RuleConfig::swing_high, 20, 0, 100, "starvation_util_max: 100\n", false, true},
          {"starvation_fraction", &RuleConfig::starvation_fraction, 0.9, 0, 1},
          {"inference_spread", &RuleConfig::inference_spread, 25, 0, 100},
          {"straggler_idle_util", &RuleConfig::straggler_idle_util, 5, 0, 100},
          {"straggler_peer_util", &RuleConfig::straggler_peer_util, 50, 0, 100},
          {"leftover_min_gib", &RuleConfig::leftover_min_gib, 1, 0, 4096},
      },
      0.001);
  checkRows<std::int64_t>(
      {
          {"temperature_hold_ms", &RuleConfig::temperature_hold_ms, 30000, 0, 604800000},
          {"thermal_hold_ms", &RuleConfig::thermal_hold_ms, 15000, 0, 604800000},
          {"low_power_hold_ms", &RuleConfig::low_power_hold_ms, 60000, 0, 604800000},
          {"idle_power_hold_ms", &RuleConfig::idle_power_hold_ms, 120000, 0, 604800000},
          {"power_slowdown_hold_ms", &RuleConfig::power_slowdown_hold_ms, 10000, 0, 604800000},
          {"power_cap_hold_ms", &RuleConfig::power_cap_hold_ms, 60000, 0, 604800000},
          {"memory_hold_ms", &RuleConfig::memory_hold_ms, 0, 0, 604800000},
          {"sbe_window_ms", &RuleConfig::sbe_window_ms, 600000, 10000, 648000},
          {"pcie_hold_ms", &RuleConfig::pcie_hold_ms, 30000, 0, 604800000},
          {"pcie_replay_window_ms", &RuleConfig::pcie_replay_window_ms, 60000, 10000, 648000},
          {"nvlink_hold_ms", &RuleConfig::nvlink_hold_ms, 10000, 0, 604800000},
          {"nvlink_window_ms", &RuleConfig::nvlink_window_ms, 300000, 10000, 648000},
          {"pstate_hold_ms", &RuleConfig::pstate_hold_ms, 30000, 0, 604800000},
          {"fan_hold_ms", &RuleConfig::fan_hold_ms, 30000, 0, 604800000},
          {"starvation_window_ms", &RuleConfig::starvation_window_ms, 300000, 10000, 648000},
          {"straggler_hold_ms", &RuleConfig::straggler_hold_ms, 60000, 0, 604800000},
          {"zombie_hold_ms", &RuleConfig::zombie_hold_ms, 30000, 0, 604800000},
          {"leftover_window_ms", &RuleConfig::leftover_window_ms, 600000, 10000, 648000},
          {"lost_hold_ms", &RuleConfig::lost_hold_ms, 0, 0, 604800000},
          {"stalled_hold_ms", &RuleConfig::stalled_hold_ms, 30000, 0, 604800000},
          {"gpu_count_hold_ms", &RuleConfig::gpu_count_hold_ms, 30000, 0, 604800000},
          {"persistence_hold_ms", &RuleConfig::persistence_hold_ms, 10000, 0, 604800000},
          {"xid_active_ms", &RuleConfig::xid_active_ms, 600000, 0, 604800000},
      },
      1);
  checkRows<int>(
      {
          {"straggler_min_peers", &RuleConfig::straggler_min_peers, 2, 1, 1024},
          {"expected_gpus", &RuleConfig::expected_gpus, 0, 0, 1024},
          {"app_xid_repeat", &RuleConfig::app_xid_repeat, 3, 1, 1000000},
      },
      1);
  EXPECT_TRUE(parseRuleConfig("", "r.yaml")->require_persistence);
}

// Observes `gpus` once a second from `from` to `to` (seconds), utilisation `util` on every GPU.
void run(RuleEngine& e, std::vector<Gpu>& gpus, int from, int to, double util) {
  for (int t = from; t <= to; ++t) {
    for (auto& g : gpus) g.set("gpu_util", util);
    e.observe(test::views(gpus), kT0 + t * 1000LL);
  }
}

TEST(RuleEngineWorkload, SchedulerThenGpuThenNodeThenInferred) {
  RuleConfig c;
  c.workload = WorkloadClass::kTraining;
  c.workload_by_gpu["1"] = WorkloadClass::kInference;
  c.workload_by_gpu["GPU-00000002"] = WorkloadClass::kInteractive;
  RuleEngine e(c);
  auto gpus = test::node(4);
  run(e, gpus, 0, 300, 40);
  const std::int64_t now = kT0 + 300'000;
  auto cls = [&](int i) { return e.workloadOf(gpus[static_cast<std::size_t>(i)].v.id.uuid, now); };
  EXPECT_EQ(cls(0).describe(), "training (configured)");
  EXPECT_EQ(cls(1).describe(), "inference (configured)");
  EXPECT_EQ(cls(2).describe(), "interactive (configured)");
  e.setWorkload("GPU-00000000", WorkloadClass::kIdle);
  EXPECT_EQ(cls(0).describe(), "idle (scheduler)");
  e.setWorkload("GPU-00000000", std::nullopt);
  EXPECT_EQ(cls(0).describe(), "training (configured)");
  // Nothing configured: a steady 40 % is inferred to be training, and the numbers say why.
  e.setConfig({});
  EXPECT_EQ(cls(3).describe(), "training (inferred: util p10-p90 40-40 %, steady (spread < 25))");
  EXPECT_EQ(e.workloadOf("GPU-unknown", now).cls, WorkloadClass::kUnknown);
}

TEST(RuleEngineWorkload, InferredFromTheSpreadOnlyWithNinetyPercentOfTheWindow) {
  RuleEngine e;
  auto gpus = test::node(2);
  for (int t = 0; t <= 300; ++t) {
    gpus[0].set("gpu_util", t % 2 ? 30 : 80);  // swinging: inference
    gpus[1].set("gpu_util", t % 2 ? 1 : 2);    // below swing_low: idle
    e.observe(test::views(gpus), kT0 + t * 1000LL);
    if (t == 269) {
      EXPECT_EQ(e.workloadOf("GPU-00000000", kT0 + t * 1000LL).cls, WorkloadClass::kUnknown);
    }
  }
  EXPECT_EQ(e.workloadOf("GPU-00000000", kT0 + 300'000).cls, WorkloadClass::kInference);
  EXPECT_EQ(e.workloadOf("GPU-00000001", kT0 + 300'000).cls, WorkloadClass::kIdle);
}

// docs/health.md: 90 % of the samples below `swing_low` is idle. 300 samples in the window, 270 of
// them at 1 % (below swing_low, 3 %) and 30 at 80 %: idle. One more at 80 % and the GPU is no longer
// idle but, with its wide spread, inference.
TEST(RuleEngineWorkload, NinetyPercentOfSamplesBelowSwingLowIsIdle) {
  for (const int busy : {30, 31}) {
    RuleEngine e;
    auto gpus = test::node(1);
    for (int t = 0; t < 300; ++t) {
      gpus[0].set("gpu_util", t % 10 == 0 || (busy == 31 && t == 1) ? 80 : 1);
      e.observe(test::views(gpus), kT0 + t * 1000LL);
    }
    EXPECT_EQ(e.workloadOf("GPU-00000000", kT0 + 300'000).cls,
              busy == 30 ? WorkloadClass::kIdle : WorkloadClass::kInference)
        << busy << " of 300 samples at 80 %: " << e.workloadOf("GPU-00000000", kT0 + 300'000).describe();
  }
}

bool finds(RuleEngine& e, std::int64_t t_s, const std::string& rule) {
  for (const Finding& f : e.evaluate(kT0 + t_s * 1000))
    if (f.rule == rule) return true;
  return false;
}

// A reload: a rule switched off is gone at once; a new threshold applies from the next
// observation, with the rule's hold counted from then.
TEST(RuleEngineReload, SetConfigAppliesAtOnceAndKeepsHistory) {
  RuleEngine e;
  auto gpus = test::node(1);
  gpus[0].set("gpu_temp", 83);
  for (int t = 0; t <= 40; ++t) e.observe(test::views(gpus), kT0 + t * 1000LL);
  EXPECT_FALSE(finds(e, 40, "gpu_temperature")) << "83 °C is under the default 85 °C";
  RuleConfig hot;
  hot.gpu_temp_c = 80;
  e.setConfig(hot);
  EXPECT_EQ(e.config().gpu_temp_c, 80);
  for (int t = 41; t <= 70; ++t) e.observe(test::views(gpus), kT0 + t * 1000LL);
  EXPECT_FALSE(finds(e, 70, "gpu_temperature")) << "29 s into the 30 s hold";
  e.observe(test::views(gpus), kT0 + 71'000);
  EXPECT_TRUE(finds(e, 71, "gpu_temperature"));
  RuleConfig off = hot;
  off.disabled.insert("gpu_temperature");
  e.setConfig(off);
  EXPECT_FALSE(finds(e, 71, "gpu_temperature")) << "switched off: gone before the next observation";
  // What the engine learnt survives: the context still holds the samples from before the reload.
  EXPECT_EQ(e.contextSnapshot("GPU-00000000", kT0 + 71'000, 120'000)["series"]["gpu_temp"].size(), 72u);
}

}  // namespace
}  // namespace gw::health
