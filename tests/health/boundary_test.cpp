// Every threshold of every rule at its value and one step either side, from the rules' own tables
// (Threshold in health/rule.h, rendered into docs/health.md's boundary table). Each probe below
// says how to put one signal at a value while everything else holds the rule's other conditions;
// the harness then runs the real RuleEngine on its own clock (no wall time):
//   - the firing side fires with the table's severity once the condition has held for the rule's
//     hold, and not one second before;
//   - the other side stays below that severity at every observation for twice the hold and a
//     minute more (a must-not-fire check that outlasts the hold);
//   - the default of a configurable threshold is the requirement's number.
// A threshold or a held rule without a probe fails the suite, so the table cannot grow untested.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "health/incidents.h"
#include "health/rule.h"
#include "health/rule_registry.h"
#include "rule_test_util.h"

namespace gw::health {
namespace {

using test::Gpu;

constexpr double kNone = std::numeric_limits<double>::quiet_NaN();
constexpr std::int64_t kT0 = 1'700'000'000'000;  // the engine's clock origin (ms)

// Puts the node at `value` for time t (ms since the probe started). Called before each observation.
using Place = std::function<void(std::vector<Gpu>& gpus, double value, std::int64_t t, RuleEngine& engine)>;

struct Probe {
  std::string rule;
  int index = -1;            // the threshold's row in the rule's table; -1: a probe of the rule's hold only
  std::string signal;        // the row's signal, checked, so a probe cannot silently point at another row
  double pinned = kNone;     // the requirement's default for the threshold
  double reference = kNone;  // the threshold when the table has no value (the GPU's own)
  int gpus = 1;
  std::int64_t lead_ms = 0;        // when the condition first holds
  std::int64_t cadence_ms = 1000;  // one observation every this long
  std::function<void(RuleConfig&)> configure{};
  Place place;
  int gpu = 0;  // whose finding counts; -1: the node's
};

std::filesystem::path procRoot() {
  static const std::filesystem::path root = [] {
    auto p = std::filesystem::temp_directory_path() / ("gw-boundary-" + std::to_string(::getpid()));
    std::filesystem::create_directories(p / "proc" / "4242");  // 4242 lives, 4343 does not
    return p;
  }();
  return root;
}

Place set(std::string key) {
  return [key](std::vector<Gpu>& g, double v, std::int64_t, RuleEngine&) { g[0].set(key, v); };
}
template <class F>
Place with(F f) {
  return [f](std::vector<Gpu>& g, double v, std::int64_t t, RuleEngine&) { f(g[0], v, t); };
}

events::GpuEvent xid13(std::int64_t t) {
  events::GpuEvent e;
  e.timestamp_ms = t;
  e.kind = events::EventKind::Xid;
  e.code = 13;
  e.gpu_index = 0;
  e.gpu_uuid = "GPU-00000000";
  e.message = "Graphics Exception";
  return e;
}

// In every run of `period` consecutive samples exactly `out` are marked: a window holding
// `period` samples sees the same share wherever it slides.
bool marked(std::int64_t t, std::int64_t cadence, int period, int out) { return (t / cadence) % period < out; }

std::vector<Probe> probes() {
  const std::int64_t starveCadence = 3010;  // 100 samples in the 300 s window: shares are whole percents
  const std::int64_t starveLead = 99 * starveCadence;
  const std::int64_t leftoverWindow = RuleConfig{}.leftover_window_ms;
  std::vector<Probe> p = {
      // thermal
      {.rule = "gpu_temperature", .index = 0, .signal = "core temperature", .pinned = 85, .place = set("gpu_temp")},
      {.rule = "gpu_temperature",
       .index = 1,
       .signal = "core temperature",
       .reference = 89,
       .place = with([](Gpu& g, double v, auto) { g.set("slowdown_temp", 89).set("gpu_temp", v); })},
      {.rule = "memory_temperature",
       .index = 0,
       .signal = "memory temperature",
       .pinned = 95,
       .place = set("memory_temp")},
      {.rule = "thermal_slowdown",
       .index = 0,
       .signal = "SM clock, share of its maximum",
       .pinned = 0.9,
       .place = with([](Gpu& g, double v, auto) {
         g.set("clock_event_reasons", 0x20).set("max_sm_clock", 2000).set("sm_clock", v * 2000);
       })},
      {.rule = "fan_failure",
       .index = 0,
       .signal = "fan speed",
       .pinned = 1,
       .place = with([](Gpu& g, double v, auto) { g.set("gpu_temp", 70).set("fan_speed", v); })},
      {.rule = "fan_failure",
       .index = 1,
       .signal = "core temperature",
       .pinned = 65,
       .place = with([](Gpu& g, double v, auto) { g.set("fan_speed", 0).set("gpu_temp", v); })},
      // power
      {.rule = "power_low_under_load",
       .index = 0,
       .signal = "utilisation",
       .pinned = 90,
       .place = with([](Gpu& g, double v, auto) { g.set("power_usage", 100).set("gpu_util", v); })},
      {.rule = "power_low_under_load",
       .index = 1,
       .signal = "power, share of the enforced limit",
       .pinned = 0.65,
       .place = with([](Gpu& g, double v, auto) { g.set("enforced_power_limit", 700).set("power_usage", v * 700); })},
      {.rule = "idle_power_high",
       .index = 0,
       .signal = "utilisation",
       .pinned = 2,
       .place = with([](Gpu& g, double v, auto) { g.set("power_usage", 150).set("gpu_util", v); })},
      {.rule = "idle_power_high",
       .index = 1,
       .signal = "power",
       .pinned = 100,
       .place = with([](Gpu& g, double v, auto) { g.set("gpu_util", 0).set("power_usage", v); })},
      {.rule = "power_slowdown", .signal = "power brake", .place = with([](Gpu& g, double v, auto) {
                                                            g.set("clock_event_reasons", v > 0 ? 0x80 : 0x4);
                                                          })},
      {.rule = "power_capped",
       .index = 0,
       .signal = "utilisation",
       .pinned = 60,
       .place = with([](Gpu& g, double v, auto) {
         g.set("power_default_limit", 700).set("enforced_power_limit", 500).set("gpu_util", v);
       })},
      {.rule = "power_capped",
       .index = 1,
       .signal = "enforced limit, share of the default",
       .pinned = 0.9,
       .place = with(
           [](Gpu& g, double v, auto) { g.set("power_default_limit", 700).set("enforced_power_limit", v * 700); })},
      {.rule = "pstate_under_load", .index = 0, .signal = "P-state", .pinned = 8, .place = set("pstate")},
      {.rule = "pstate_under_load",
       .index = 1,
       .signal = "P-state (32: unknown)",
       .pinned = 32,
       .place = set("pstate")},
      {.rule = "pstate_under_load",
       .index = 2,
       .signal = "utilisation",
       .pinned = 60,
       .place = with([](Gpu& g, double v, auto) { g.set("pstate", 8).set("gpu_util", v); })},
      // memory
      {.rule = "ecc_dbe", .index = 0, .signal = "volatile DBE count", .pinned = 0, .place = set("ecc_dbe_volatile")},
      {.rule = "ecc_sbe_rising",
       .index = 0,
       .signal = "volatile SBE rise within `sbe_window_ms`",
       .pinned = 100,
       .lead_ms = 1000,
       .place = with([](Gpu& g, double v, std::int64_t t) { g.set("ecc_sbe_volatile", t == 0 ? 1000 : 1000 + v); })},
      {.rule = "retired_pages",
       .index = 0,
       .signal = "pages pending retirement",
       .pinned = 0,
       .place = set("retired_pages_pending")},
      {.rule = "retired_pages",
       .index = 1,
       .signal = "retired pages (SBE + DBE)",
       .pinned = 63,
       .place = with([](Gpu& g, double v, auto) { g.set("retired_pages_sbe", v - 5).set("retired_pages_dbe", 5); })},
      {.rule = "row_remap",
       .index = 0,
       .signal = "row remapping pending",
       .pinned = 0,
       .place = set("row_remap_pending")},
      {.rule = "row_remap",
       .index = 1,
       .signal = "row remapping failure",
       .pinned = 0,
       .place = set("row_remap_failure")},
      {.rule = "row_remap",
       .index = 2,
       .signal = "rows remapped for uncorrectable errors",
       .pinned = 512,
       .place = set("remapped_rows_uncorrectable")},
      {.rule = "recovery_action",
       .index = 0,
       .signal = "drain peer-to-peer traffic (3)",
       .pinned = 3,
       .place = set("recovery_action")},
      {.rule = "recovery_action",
       .index = 1,
       .signal = "recovery action (critical but for 3: 1 reset, 2 reboot, 4 drain and reset)",
       .pinned = 0,
       .place = set("recovery_action")},
      // links
      {.rule = "fabric",
       .index = 0,
       .signal = "fabric status 1 (not started)",
       .pinned = 1,
       .place = with([](Gpu& g, double v, auto) { g.set("fabric_health", 1).set("fabric_status", v); })},
      {.rule = "fabric",
       .index = 1,
       .signal = "fabric status 2 (in progress)",
       .pinned = 2,
       .place = with([](Gpu& g, double v, auto) { g.set("fabric_health", 1).set("fabric_status", v); })},
      {.rule = "fabric",
       .index = 2,
       .signal = "fabric status 4 (failure)",
       .pinned = 4,
       .place = with([](Gpu& g, double v, auto) { g.set("fabric_health", 1).set("fabric_status", v); })},
      {.rule = "fabric",
       .index = 3,
       .signal = "fabric health 2 (unhealthy)",
       .pinned = 2,
       .place = with([](Gpu& g, double v, auto) { g.set("fabric_status", 3).set("fabric_health", v); })},
      {.rule = "fabric",
       .index = 4,
       .signal = "fabric health 3 (limited capacity)",
       .pinned = 3,
       .place = with([](Gpu& g, double v, auto) { g.set("fabric_status", 3).set("fabric_health", v); })},
      {.rule = "pcie_downtrain",
       .index = 0,
       .signal = "link generation",
       .reference = 5,
       .place = set("pcie_link_gen")},
      {.rule = "pcie_downtrain", .index = 1, .signal = "link width", .reference = 16, .place = set("pcie_link_width")},
      {.rule = "pcie_downtrain",
       .index = 2,
       .signal = "utilisation",
       .pinned = 60,
       .place = with([](Gpu& g, double v, auto) { g.set("pcie_link_gen", 4).set("gpu_util", v); })},
      {.rule = "nvlink_down",
       .index = 0,
       .signal = "active NVLink links",
       .reference = 18,
       .lead_ms = 1000,
       .place = with([](Gpu& g, double v, std::int64_t t) { g.set("nvlink_active_links", t == 0 ? 18 : v); })},
      {.rule = "nvlink_errors",
       .index = 0,
       .signal = "CRC + replay + recovery error rise within `nvlink_window_ms`",
       .pinned = 10,
       .lead_ms = 1000,
       .place = with([](Gpu& g, double v, std::int64_t t) {
         const double k = t == 0 ? 0 : 1;  // the rise arrives after the first sample, split over the counters
         g.set("nvlink_crc_flit_errors", k * (v - 3)).set("nvlink_crc_data_errors", k);
         g.set("nvlink_replay_errors", k).set("nvlink_recovery_errors", k);
       })},
      // workload
      {.rule = "starvation",
       .index = 0,
       .signal = "share of the window's samples in the band",
       .pinned = 0.9,
       .lead_ms = starveLead,
       .cadence_ms = starveCadence,
       .place = with([=](Gpu& g, double v, std::int64_t t) {
         const int out = static_cast<int>(std::lround((1 - v) * 100));
         g.set("gpu_util", marked(t, starveCadence, 100, out) ? 90 : 40);
       })},
      {.rule = "starvation",
       .index = 1,
       .signal = "utilisation (band's low edge)",
       .pinned = 3,
       .lead_ms = starveLead,
       .cadence_ms = starveCadence,
       .place = set("gpu_util")},
      {.rule = "starvation",
       .index = 2,
       .signal = "utilisation (band's high edge)",
       .pinned = 70,
       .lead_ms = starveLead,
       .cadence_ms = starveCadence,
       .place = set("gpu_util")},
      {.rule = "starvation",
       .index = 3,
       .signal = "utilisation (swinging)",
       .pinned = 20,
       .lead_ms = starveLead,
       .cadence_ms = starveCadence,
       .place = set("gpu_util")},
      // An unconfigured GPU alternating between 30 % and 30 + v %: p10 30, p90 30 + v, all in the band.
      {.rule = "starvation",
       .index = 4,
       .signal = "utilisation spread p90 − p10 (class inferred)",
       .pinned = 25,
       .lead_ms = starveLead,
       .cadence_ms = starveCadence,
       .place =
           with([=](Gpu& g, double v, std::int64_t t) { g.set("gpu_util", (t / starveCadence) % 2 ? 30 + v : 30); })},
      {.rule = "straggler", .index = 0, .signal = "utilisation", .pinned = 5, .gpus = 4, .place = set("gpu_util")},
      {.rule = "straggler",
       .index = 1,
       .signal = "a busy peer's utilisation",
       .pinned = 50,
       .gpus = 4,
       .place =
           [](std::vector<Gpu>& g, double v, std::int64_t, RuleEngine&) {
             g[0].set("gpu_util", 0);
             for (std::size_t k = 1; k < g.size(); ++k) g[k].set("gpu_util", v);
           }},
      {.rule = "straggler",
       .index = 2,
       .signal = "busy peers",
       .reference = 6,  // of 7 answering peers: max(2, ceil(7 × 3/4))
       .gpus = 8,
       .place =
           [](std::vector<Gpu>& g, double v, std::int64_t, RuleEngine&) {
             g[0].set("gpu_util", 0);
             for (std::size_t k = 1; k < g.size(); ++k) g[k].set("gpu_util", static_cast<double>(k) <= v ? 95 : 30);
           }},
      {.rule = "zombie_process",
       .signal = "a pid absent from /proc",
       .lead_ms = 1000,  // a process list counts once its GPU is known, after the first observation
       .place =
           [](std::vector<Gpu>&, double v, std::int64_t t, RuleEngine& e) {
             e.observeProcesses(0, {{v > 0 ? 4343U : 4242U, 1ULL << 30}}, kT0 + t);
           }},
      // The process list is given before each observation; the GPU is idle (or at v) throughout.
      {.rule = "leftover_process",
       .index = 0,
       .signal = "memory held by live processes",
       .pinned = 1,
       .lead_ms = leftoverWindow,
       .place =
           [](std::vector<Gpu>& g, double v, std::int64_t t, RuleEngine& e) {
             g[0].set("gpu_util", 0);
             e.observeProcesses(0, {{4242U, static_cast<std::uint64_t>(v * (1ULL << 30))}}, kT0 + t);
           }},
      {.rule = "leftover_process",
       .index = 1,
       .signal = "utilisation, every sample of the window",
       .pinned = 2,
       .lead_ms = leftoverWindow,
       .place =
           [](std::vector<Gpu>& g, double v, std::int64_t t, RuleEngine& e) {
             g[0].set("gpu_util", v);
             e.observeProcesses(0, {{4242U, 8ULL << 30}}, kT0 + t);
           }},
      // state
      {.rule = "gpu_lost", .signal = "state Lost", .place = with([](Gpu& g, double v, auto) {
                                                     g.v.state =
                                                         v > 0 ? collect::GpuState::Lost : collect::GpuState::Up;
                                                   })},
      {.rule = "gpu_stalled", .signal = "state Stalled", .place = with([](Gpu& g, double v, auto) {
                                                           g.v.state = v > 0 ? collect::GpuState::Stalled
                                                                             : collect::GpuState::Up;
                                                           g.v.state_reason =
                                                               v > 0
                                                                   ? "nvmlDeviceGetPowerUsage exceeded its 2 s deadline"
                                                                   : "";
                                                         })},
      {.rule = "gpu_count",
       .index = 0,
       .signal = "visible GPUs",
       .pinned = 0,
       .gpus = 10,
       .configure = [](RuleConfig& c) { c.expected_gpus = 8; },
       .place = [](std::vector<Gpu>& g, double v, std::int64_t,
                   RuleEngine&) { g.erase(g.begin() + static_cast<std::ptrdiff_t>(v), g.end()); },
       .gpu = -1},
      {.rule = "persistence_off",
       .index = 0,
       .signal = "persistence mode",
       .pinned = 0,
       .place = set("persistence_mode")},
      {.rule = "driver_mismatch",
       .signal = "nvmlInit error 18",
       .place = [](std::vector<Gpu>&, double v, std::int64_t t,
                   RuleEngine& e) { e.setNvmlInitError(v > 0 ? 18 : 0, kT0 + t); },
       .gpu = -1},
      {.rule = "xid",
       .index = 0,
       .signal = "application-fault Xids on one GPU within `xid_active_ms`, peers clean",
       .pinned = 3,
       .gpus = 2,
       .lead_ms = 1000,
       .place =
           [](std::vector<Gpu>&, double v, std::int64_t t, RuleEngine& e) {
             if (t != 1000) return;
             for (int k = 0; k < static_cast<int>(v); ++k) e.onEvent(xid13(kT0 + t - k));
           }},
  };
  for (int gen = 1; gen <= 5; ++gen) {
    const double pinned[] = {5, 5, 10, 20, 40};
    p.push_back(
        {.rule = "pcie_replay",
         .index = gen - 1,
         .signal = gen < 5 ? "replays a minute at Gen" + std::to_string(gen) : "replays a minute at Gen5 and later",
         .pinned = pinned[gen - 1],
         .lead_ms = 60'000,  // the first whole minute of history
         .place = with([gen](Gpu& g, double v, std::int64_t t) {
           // +v at every whole minute: every 60 s window holds exactly one step of v
           g.set("pcie_link_gen", gen).set("pcie_max_link_gen", gen);
           g.set("pcie_replay_counter", v * static_cast<double>(t / 60'000));
         })});
  }
  return p;
}

std::string probeName(const Probe& p) {
  return p.rule + (p.index >= 0 ? "[" + std::to_string(p.index) + "] " : " ") + p.signal;
}

std::int64_t holdOf(const Rule& r, const RuleConfig& c) { return r.info.hold ? c.*(r.info.hold) : 0; }

// The finding of the probe's rule about its GPU, evaluated at each observation from `check_from`
// on (or only at the end when check_from is negative). Returns the worst seen.
std::optional<Finding> run(const Probe& p, const RuleConfig& config, double value, std::int64_t duration,
                           std::int64_t check_from = -1) {
  RuleEngine engine(config, procRoot().string());
  std::vector<Gpu> gpus;
  for (int i = 0; i < p.gpus; ++i) gpus.emplace_back(static_cast<unsigned>(i));
  std::optional<Finding> worst;
  auto look = [&](std::int64_t t) {
    for (const Finding& f : engine.evaluate(kT0 + t))
      if (f.rule == p.rule && f.gpu_index == p.gpu && (!worst || f.severity > worst->severity)) worst = f;
  };
  for (std::int64_t t = 0; t <= duration; t += p.cadence_ms) {
    std::vector<Gpu> now = gpus;
    p.place(now, value, t, engine);
    engine.observe(test::views(now), kT0 + t);
    if (check_from >= 0 && t >= check_from) look(t);
  }
  if (check_from < 0) look(duration);
  return worst;
}

bool beyond(const Threshold& th, const std::optional<Finding>& f) {
  if (!f) return false;
  if (!th.marks.empty()) return f->summary.find(th.marks) != std::string::npos;
  return f->severity >= th.severity;
}

std::string show(const std::optional<Finding>& f) {
  return f ? std::string(severityName(f->severity)) + ": " + f->summary + " [" + f->evidence + "]" : "no finding";
}

struct Sides {
  std::vector<double> fire, quiet;
};
Sides sides(Cmp c, double ref, double step) {
  switch (c) {
    case Cmp::kAtLeast:
      return {{ref, ref + step}, {ref - step}};
    case Cmp::kAbove:
      return {{ref + step}, {ref, ref - step}};
    case Cmp::kAtMost:
      return {{ref, ref - step}, {ref + step}};
    case Cmp::kBelow:
      return {{ref - step}, {ref, ref + step}};
    case Cmp::kEqual:
      return {{ref}, {ref - step, ref + step}};
  }
  return {};
}

TEST(RuleBoundaries, EveryThresholdAndEveryHeldRuleHasAProbe) {
  const auto all = probes();
  std::set<std::pair<std::string, int>> covered;
  std::set<std::string> rules;
  for (const Probe& p : all) {
    const Rule* r = findRule(p.rule);
    ASSERT_NE(r, nullptr) << probeName(p);
    EXPECT_TRUE(covered.insert({p.rule, p.index}).second || p.index < 0) << "two probes for " << probeName(p);
    rules.insert(p.rule);
    if (p.index >= 0) {
      ASSERT_LT(static_cast<std::size_t>(p.index), r->info.thresholds.size()) << probeName(p);
      EXPECT_EQ(r->info.thresholds[static_cast<std::size_t>(p.index)].signal, p.signal) << probeName(p);
    }
  }
  for (const Rule* r : ruleRegistry()) {
    for (std::size_t i = 0; i < r->info.thresholds.size(); ++i)
      EXPECT_TRUE(covered.count({std::string(r->info.name), static_cast<int>(i)}))
          << r->info.name << " threshold " << i << " (" << r->info.thresholds[i].signal
          << ") has no probe in boundary_test.cpp";
    EXPECT_TRUE(rules.count(std::string(r->info.name))) << r->info.name << " has no probe in boundary_test.cpp";
  }
}

TEST(RuleBoundaries, DefaultsAreTheRequirements) {
  for (const Probe& p : probes()) {
    if (p.index < 0 || std::isnan(p.pinned)) continue;
    const Threshold& th = findRule(p.rule)->info.thresholds[static_cast<std::size_t>(p.index)];
    ASSERT_NE(th.value, nullptr) << probeName(p);
    EXPECT_EQ(th.value(RuleConfig{}), p.pinned) << probeName(p);
  }
}

TEST(RuleBoundaries, EachThresholdAtItsValueAndOneStepEitherSide) {
  for (const Probe& p : probes()) {
    if (p.index < 0) continue;
    SCOPED_TRACE(probeName(p));
    const Rule& r = *findRule(p.rule);
    const Threshold& th = r.info.thresholds[static_cast<std::size_t>(p.index)];
    RuleConfig config;
    if (p.configure) p.configure(config);
    const double ref = th.value ? th.value(config) : p.reference;
    ASSERT_FALSE(std::isnan(ref)) << "a threshold the GPU sets needs the probe's reference";
    const std::int64_t hold = holdOf(r, config);
    const Sides s = sides(th.cmp, ref, th.step);
    for (double v : s.fire) {
      const auto at = run(p, config, v, p.lead_ms + hold);
      EXPECT_TRUE(beyond(th, at)) << "at " << v << " (threshold " << describeThreshold(th, config)
                                  << ") after the hold: " << show(at);
      if (at && th.marks.empty()) {
        EXPECT_EQ(at->severity, th.severity) << "at " << v;
      }
      if (hold > 0) {
        const auto early = run(p, config, v, p.lead_ms + hold - 1000);
        EXPECT_FALSE(beyond(th, early)) << "at " << v << " one second before the " << hold
                                        << " ms hold: " << show(early);
      }
    }
    for (double v : s.quiet) {
      const auto quiet = run(p, config, v, p.lead_ms + 2 * hold + 60'000, p.lead_ms);
      EXPECT_FALSE(beyond(th, quiet)) << "at " << v << " (threshold " << describeThreshold(th, config) << ") within "
                                      << (2 * hold + 60'000) / 1000 << " s: " << show(quiet);
    }
  }
}

// Rules with no threshold to move still have a hold: a condition fires at the hold, not a second
// before, and its absence stays quiet past it.
TEST(RuleBoundaries, ConditionRulesFireAtTheirHold) {
  for (const Probe& p : probes()) {
    if (p.index >= 0) continue;
    SCOPED_TRACE(probeName(p));
    const Rule& r = *findRule(p.rule);
    const RuleConfig config;
    const std::int64_t hold = holdOf(r, config);
    const auto at = run(p, config, 1, p.lead_ms + hold);
    ASSERT_TRUE(at.has_value()) << "after the " << hold << " ms hold";
    EXPECT_EQ(at->severity, r.info.severity);
    if (hold > 0) {
      EXPECT_FALSE(run(p, config, 1, p.lead_ms + hold - 1000)) << "one second before the hold";
    }
    const auto quiet = run(p, config, 0, p.lead_ms + 2 * hold + 60'000, 0);
    EXPECT_FALSE(quiet) << show(quiet);
  }
}

// With four answering peers, three quarters is exactly three: three busy peers make a straggler,
// two do not. The table's probe (seven peers) cannot tell ceil(¾ × peers) from a rounding that
// asks for one peer more whenever ¾ of the peers is a whole number.
TEST(RuleBoundaries, AStragglerWithFourPeersNeedsThreeOfThemBusy) {
  const Probe p{.rule = "straggler",
                .signal = "busy peers",
                .gpus = 5,
                .place = [](std::vector<Gpu>& g, double v, std::int64_t, RuleEngine&) {
                  g[0].set("gpu_util", 0);
                  for (std::size_t k = 1; k < g.size(); ++k)
                    g[k].set("gpu_util", static_cast<double>(k) <= v ? 95 : 30);
                }};
  const RuleConfig config;
  ASSERT_EQ(config.straggler_min_peers, 2);
  const std::int64_t hold = holdOf(*findRule("straggler"), config);
  const auto three = run(p, config, 3, hold);
  ASSERT_TRUE(three.has_value()) << "3 of 4 peers busy";
  EXPECT_EQ(three->severity, Severity::Warning);
  const auto two = run(p, config, 2, 2 * hold + 60'000, 0);
  EXPECT_FALSE(two) << "2 of 4 peers busy: " << show(two);
}

// Each PCIe generation reads its own slot of `pcie_replay_per_min`, and Gen6 (and later) reads
// Gen5's (docs/health.md). The defaults give Gen1 and Gen2 the same allowance, so distinct ones
// here tell the slots apart: one replay a minute above the allowance fires, the allowance does not.
TEST(RuleBoundaries, EachPcieGenerationReadsItsOwnReplayAllowanceAndGen6ReadsGen5s) {
  const auto configure = [](RuleConfig& c) { c.pcie_replay_per_min = {1, 2, 3, 4, 5}; };
  RuleConfig config;
  configure(config);
  const std::int64_t hold = holdOf(*findRule("pcie_replay"), config);
  for (const auto& [gen, allowed] : std::vector<std::pair<int, double>>{{1, 1}, {2, 2}, {6, 5}}) {
    SCOPED_TRACE("Gen" + std::to_string(gen));
    const Probe p{.rule = "pcie_replay",
                  .signal = "replays a minute",
                  .lead_ms = 60'000,
                  .configure = configure,
                  .place = with([gen](Gpu& g, double v, std::int64_t t) {
                    g.set("pcie_link_gen", gen).set("pcie_max_link_gen", gen);
                    g.set("pcie_replay_counter", v * static_cast<double>(t / 60'000));
                  })};
    const auto above = run(p, config, allowed + 1, p.lead_ms + hold);
    ASSERT_TRUE(above.has_value()) << allowed + 1 << " a minute";
    EXPECT_EQ(above->severity, Severity::Warning);
    const auto at = run(p, config, allowed, p.lead_ms + 2 * hold + 60'000, p.lead_ms);
    EXPECT_FALSE(at) << allowed << " a minute: " << show(at);
  }
}

// `nvlink_error_max: 0` is a legal setting (any error at all warns), but a rise of nothing is no
// error: counters that stay at zero never fire, one error does.
TEST(RuleBoundaries, NvlinkErrorMaxZeroFiresOnOneErrorAndNotOnNone) {
  const auto configure = [](RuleConfig& c) { c.nvlink_error_max = 0; };
  RuleConfig config;
  configure(config);
  const std::int64_t hold = holdOf(*findRule("nvlink_errors"), config);
  const Probe p{.rule = "nvlink_errors",
                .signal = "NVLink error rise",
                .lead_ms = 1000,
                .configure = configure,
                .place = with([](Gpu& g, double v, std::int64_t t) { g.set("nvlink_replay_errors", t > 0 ? v : 0); })};
  const auto one = run(p, config, 1, p.lead_ms + hold);
  ASSERT_TRUE(one.has_value()) << "one error";
  EXPECT_EQ(one->severity, Severity::Warning);
  const auto none = run(p, config, 0, p.lead_ms + 2 * hold + 60'000, 0);
  EXPECT_FALSE(none) << show(none);
}

// The rules' windows: what happened just inside a window still counts, one step outside it no
// longer does.
class Window {
 public:
  explicit Window(int gpus = 1, RuleConfig c = {}) : engine_(c, procRoot().string()) {
    for (int i = 0; i < gpus; ++i) gpus_.emplace_back(static_cast<unsigned>(i));
  }
  // Observes at t (ms since the start) with `f` applied to GPU 0 first; true when `rule` is found.
  template <class F>
  bool at(std::int64_t t, const std::string& rule, F f) {
    f(gpus_[0]);
    engine_.observe(test::views(gpus_), kT0 + t);
    return found(t, rule);
  }
  bool found(std::int64_t t, const std::string& rule) {
    for (const Finding& f : engine_.evaluate(kT0 + t))
      if (f.rule == rule && f.gpu_index == 0) return true;
    return false;
  }
  RuleEngine& engine() { return engine_; }

 private:
  RuleEngine engine_;
  std::vector<Gpu> gpus_;
};

TEST(RuleWindows, SbeRiseCountsWithinTheWindowOnly) {
  const std::int64_t w = RuleConfig{}.sbe_window_ms;
  ASSERT_EQ(w, 600'000);
  Window x;
  x.at(0, "ecc_sbe_rising", [](Gpu& g) { g.set("ecc_sbe_volatile", 1000); });
  // +100 between the first and the second sample; each later sample repeats the second.
  for (std::int64_t t = 1000; t < w; t += 1000)
    x.at(t, "ecc_sbe_rising", [](Gpu& g) { g.set("ecc_sbe_volatile", 1100); });
  EXPECT_TRUE(x.at(w, "ecc_sbe_rising", [](Gpu&) {})) << "the first sample is exactly one window old";
  EXPECT_FALSE(x.at(w + 1000, "ecc_sbe_rising", [](Gpu&) {})) << "one second later it has left the window";
}

TEST(RuleWindows, NvlinkErrorRiseCountsWithinTheWindowOnly) {
  const std::int64_t w = RuleConfig{}.nvlink_window_ms;
  ASSERT_EQ(w, 300'000);
  Window x;
  x.at(0, "nvlink_errors", [](Gpu& g) { g.set("nvlink_replay_errors", 0); });
  for (std::int64_t t = 1000; t < w; t += 1000)
    x.at(t, "nvlink_errors", [](Gpu& g) { g.set("nvlink_replay_errors", 10); });
  EXPECT_TRUE(x.at(w, "nvlink_errors", [](Gpu&) {}));
  EXPECT_FALSE(x.at(w + 1000, "nvlink_errors", [](Gpu&) {}));
}

TEST(RuleWindows, AnXidStaysCurrentForXidActiveMs) {
  const std::int64_t active = RuleConfig{}.xid_active_ms;
  ASSERT_EQ(active, 600'000);
  Window x;
  x.at(0, "xid", [](Gpu&) {});
  x.engine().onEvent(xid13(kT0 + 1000));
  EXPECT_TRUE(x.found(1000 + active - 1000, "xid"));
  EXPECT_TRUE(x.found(1000 + active, "xid"));
  EXPECT_FALSE(x.found(1000 + active + 1000, "xid"));
}

// An application-fault Xid last seen exactly `xid_active_ms` ago still counts for the repeat
// escalation (docs/health.md: "within `xid_active_ms`"), on the GPU itself and on a peer: three on
// GPU 0 at the edge still make a warning, and one on a peer at the edge keeps GPU 0's at info.
TEST(RuleWindows, AppXidsAtExactlyXidActiveMsStillCountForTheRepeat) {
  const std::int64_t active = RuleConfig{}.xid_active_ms;
  ASSERT_EQ(active, 600'000);
  auto severityOnGpu0 = [](Window& x, std::int64_t t) {
    std::optional<Severity> s;
    for (const Finding& f : x.engine().evaluate(kT0 + t))
      if (f.rule == "xid" && f.gpu_index == 0) s = f.severity;
    return s;
  };
  auto peerXid = [](std::int64_t t) {
    events::GpuEvent e = xid13(t);
    e.gpu_index = 1;
    e.gpu_uuid = "GPU-00000001";
    return e;
  };
  {
    Window x(2);
    x.at(0, "xid", [](Gpu&) {});
    for (std::int64_t t : {998, 999, 1000}) x.engine().onEvent(xid13(kT0 + t));
    EXPECT_EQ(severityOnGpu0(x, 1000 + active), Severity::Warning) << "three, the last one xid_active_ms ago";
  }
  {
    Window x(2);
    x.at(0, "xid", [](Gpu&) {});
    x.engine().onEvent(peerXid(kT0 + 1000));
    for (std::int64_t t : {1998, 1999, 2000}) x.engine().onEvent(xid13(kT0 + t));
    EXPECT_EQ(severityOnGpu0(x, 1000 + active), Severity::Info) << "the peer's Xid is xid_active_ms old";
  }
}

// A replay counter read for less than half a window is never a rate.
TEST(RuleWindows, PcieReplayNeedsHalfAWindowOfHistory) {
  const RuleConfig c;
  ASSERT_EQ(c.pcie_replay_window_ms, 60'000);
  // 1000 replays right after the first sample: far over any allowance once there is a rate.
  auto replays = [](std::int64_t t) { return t == 0 ? 0.0 : 1000.0; };
  for (std::int64_t onset : {c.pcie_replay_window_ms / 2 - 1000, c.pcie_replay_window_ms / 2}) {
    Window x;
    for (std::int64_t t = 0; t <= onset; t += 1000)
      x.at(t, "pcie_replay", [&](Gpu& g) { g.set("pcie_replay_counter", replays(t)); });
    // The condition holds from the first observation with half a window behind it (30 s); the
    // finding comes a hold later.
    EXPECT_EQ(x.found(c.pcie_replay_window_ms / 2 + c.pcie_hold_ms, "pcie_replay"),
              onset >= c.pcie_replay_window_ms / 2)
        << "observed up to " << onset << " ms";
  }
}

// Starvation waits for 90 % of its window before it judges.
TEST(RuleWindows, StarvationJudgesOnlyWithNinetyPercentOfItsWindow) {
  const RuleConfig c;
  const std::int64_t need = c.starvation_window_ms * 9 / 10;
  ASSERT_EQ(need, 270'000);
  Window x;
  for (std::int64_t t = 0; t < need; t += 1000)
    EXPECT_FALSE(x.at(t, "starvation", [](Gpu& g) { g.set("gpu_util", 40); })) << t;
  EXPECT_TRUE(x.at(need, "starvation", [](Gpu& g) { g.set("gpu_util", 40); }));
}

// Starvation judges on at least ten utilisation readings in its window: nine (the rest unread) are
// too few, ten are enough.
TEST(RuleWindows, StarvationNeedsTenUtilisationReadingsInItsWindow) {
  RuleConfig c;
  c.workload = WorkloadClass::kTraining;
  const std::int64_t end = c.starvation_window_ms;
  for (const std::int64_t readings : {9, 10}) {
    Window x(1, c);
    bool fired = false;
    for (std::int64_t t = 0; t <= end; t += 1000)
      fired = x.at(t, "starvation", [&](Gpu& g) { g.set("gpu_util", t > end - readings * 1000 ? 40 : kNone); });
    EXPECT_EQ(fired, readings >= 10) << readings << " readings";
  }
}

// leftover_process, like starvation, waits for 90 % of its window; a busy sample anywhere in the
// window keeps it quiet until that sample has left the window.
TEST(RuleWindows, LeftoverJudgesOnlyWithNinetyPercentOfAnIdleWindow) {
  const RuleConfig c;
  const std::int64_t need = c.leftover_window_ms * 9 / 10;
  ASSERT_EQ(need, 540'000);
  Window x;
  auto idleWithMemory = [&](std::int64_t t, double util) {
    x.engine().observeProcesses(0, {{4242U, 8ULL << 30}}, kT0 + t);
    return x.at(t, "leftover_process", [&](Gpu& g) { g.set("gpu_util", util); });
  };
  for (std::int64_t t = 0; t < need; t += 1000) EXPECT_FALSE(idleWithMemory(t, 0)) << t;
  EXPECT_TRUE(idleWithMemory(need, 0));
  Window busy;
  auto busyOnce = [&](std::int64_t t) {
    busy.engine().observeProcesses(0, {{4242U, 8ULL << 30}}, kT0 + t);
    return busy.at(t, "leftover_process", [&](Gpu& g) { g.set("gpu_util", t == 100'000 ? 40 : 0); });
  };
  bool fired = false;
  std::int64_t first = -1;
  for (std::int64_t t = 0; t <= 720'000 && !fired; t += 1000)
    if ((fired = busyOnce(t))) first = t;
  // The process list is judged on the samples before it: the busy one has left the window at 701 s.
  EXPECT_EQ(first, 100'000 + c.leftover_window_ms + 1000);
}

// A cleared, non-sticky incident resolves a grace (2 min) after it was last seen, not before.
TEST(LimitBoundaries, IncidentGraceAtItsValueAndOneSecondEitherSide) {
  ASSERT_EQ(IncidentConfig{}.grace_ms, 120'000);
  for (std::int64_t after : {119'000, 120'000, 121'000}) {
    const auto dir = procRoot() / ("grace-" + std::to_string(after));
    std::filesystem::remove_all(dir);
    auto store = IncidentStore::open((dir / "incidents.db").string());
    ASSERT_TRUE(store) << store.error();
    Finding f;
    f.rule = "gpu_temperature";
    f.gpu_uuid = "GPU-00000000";
    f.gpu_index = 0;
    f.key = "gpu_temperature|GPU-00000000";
    f.summary = "hot";
    ASSERT_TRUE((*store)->apply({f}, kT0));
    ASSERT_TRUE((*store)->apply({}, kT0 + after));
    EXPECT_EQ((*store)->unresolved().size(), after < 120'000 ? 1u : 0u) << after << " ms after it was last seen";
  }
}

}  // namespace
}  // namespace gw::health

namespace gw::health {
namespace {

// Observations closer than kMinSampleGapMs (900 ms) are one sample (the newest values win), so a
// burst of passes cannot crowd the ring's ~12 minutes out; 900 ms apart they are two.
TEST(LimitBoundaries, SamplesCloserThanTheMinimumGapAreMerged) {
  GpuHistory g;
  auto at = [](std::int64_t t, double util) {
    Sample s;
    s.t = t;
    s.v[kUtil] = util;
    return s;
  };
  g.push(at(kT0, 10));
  g.push(at(kT0 + 899, 20));
  EXPECT_EQ(g.count, 1u);
  EXPECT_EQ(g.latest()->v[kUtil], 20);
  EXPECT_EQ(g.latest()->t, kT0 + 899);
  g.push(at(kT0 + 899 + 900, 30));
  EXPECT_EQ(g.count, 2u);
  EXPECT_EQ(g.latest()->v[kUtil], 30);
}

// The gap counts from a slot's first observation, not its newest: sampling every 500 ms fills one
// slot a second (it once merged every pass into one slot for ever, the rules seeing one sample).
TEST(LimitBoundaries, FastSamplingStillFillsTheRing) {
  GpuHistory g;
  for (std::int64_t t = 0; t < 10'000; t += 500) {
    Sample s;
    s.t = kT0 + t;
    s.v[kUtil] = static_cast<double>(t);
    g.push(s);
  }
  EXPECT_EQ(g.count, 10u);  // slots begun at 0, 1000, ..., 9000 ms; each half-second merged in
  EXPECT_EQ(g.latest()->t, kT0 + 9'500);
  EXPECT_EQ(g.latest()->v[kUtil], 9'500);
  // 899 ms after a slot began still merges, 900 ms begins the next.
  GpuHistory h;
  Sample a;
  a.t = kT0;
  h.push(a);
  a.t = kT0 + 450;
  h.push(a);
  a.t = kT0 + 899;
  h.push(a);
  EXPECT_EQ(h.count, 1u);
  a.t = kT0 + 900;
  h.push(a);
  EXPECT_EQ(h.count, 2u);
}

}  // namespace
}  // namespace gw::health
