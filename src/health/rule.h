// The rule interface: what a health rule is (its facts, RuleInfo) and how it looks at a GPU
// (evaluate over a RuleContext). Each rule family lives in its own rules_<family>.cpp and carries its
// own facts next to its logic; rule_registry.cpp joins the families into the one list the engine,
// config validation, ruleNames() and the docs derive from. Internal to health/: the rest of the
// program sees RuleEngine (rules.h) and the registry (rule_registry.h).
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "collect/gpu_view.h"
#include "health/rules.h"

namespace gw::health {

// The fields the rules read, in ring-buffer column order.
enum Col : std::size_t {
  kUtil,
  kTemp,
  kMemTemp,
  kPower,
  kPowerLimit,
  kEnforced,
  kDefaultLimit,
  kSmClock,
  kMaxSm,
  kReasons,
  kPstate,
  kPcieGen,
  kPcieWidth,
  kPcieMaxGen,
  kPcieMaxWidth,
  kReplay,
  kSbeVol,
  kDbeVol,
  kRetSbe,
  kRetDbe,
  kRetPending,
  kRemapUnc,
  kRemapPending,
  kRemapFailure,
  kNvlActive,
  kNvlCrcFlit,
  kNvlCrcData,
  kNvlReplay,
  kNvlRecovery,
  kPersistence,
  kFan,
  kFbUsed,
  kSlowdownTemp,
  kRecovery,
  kFabric,
  kFabricHealth,
  kColCount
};
// The field catalog key of each column.
inline constexpr std::array<std::string_view, kColCount> kColKeys{"gpu_util",
                                                                  "gpu_temp",
                                                                  "memory_temp",
                                                                  "power_usage",
                                                                  "power_limit",
                                                                  "enforced_power_limit",
                                                                  "power_default_limit",
                                                                  "sm_clock",
                                                                  "max_sm_clock",
                                                                  "clock_event_reasons",
                                                                  "pstate",
                                                                  "pcie_link_gen",
                                                                  "pcie_link_width",
                                                                  "pcie_max_link_gen",
                                                                  "pcie_max_link_width",
                                                                  "pcie_replay_counter",
                                                                  "ecc_sbe_volatile",
                                                                  "ecc_dbe_volatile",
                                                                  "retired_pages_sbe",
                                                                  "retired_pages_dbe",
                                                                  "retired_pages_pending",
                                                                  "remapped_rows_uncorrectable",
                                                                  "row_remap_pending",
                                                                  "row_remap_failure",
                                                                  "nvlink_active_links",
                                                                  "nvlink_crc_flit_errors",
                                                                  "nvlink_crc_data_errors",
                                                                  "nvlink_replay_errors",
                                                                  "nvlink_recovery_errors",
                                                                  "persistence_mode",
                                                                  "fan_speed",
                                                                  "fb_used",
                                                                  "slowdown_temp",
                                                                  "recovery_action",
                                                                  "fabric_status",
                                                                  "fabric_health"};

// Clock event reason bits (nvmlClocksEventReason*).
inline constexpr std::uint64_t kSwPowerCap = 0x4, kHwSlowdown = 0x8, kSwThermal = 0x20, kHwThermal = 0x40,
                               kHwPowerBrake = 0x80;

// One observation of a GPU; a field NVML did not give is NaN.
struct Sample {
  std::int64_t t = 0;
  std::array<double, kColCount> v{};
};

// What the engine remembers about one GPU: ~12 minutes of samples, facts latched from events, and
// maxima learnt over its life (a downtrained link is only visible against the best seen).
struct GpuHistory {
  collect::GpuIdentity id;
  collect::GpuState state = collect::GpuState::Up;
  std::array<Sample, RuleEngine::kRingCapacity> ring{};
  std::size_t head = 0;  // next write
  std::size_t count = 0;
  // When the newest slot's first observation came: observations closer than kMinSampleGapMs to it
  // merge into it (its time and values become the newest), so a pass faster than that fills one
  // slot per kMinSampleGapMs and never stalls the ring on one slot.
  std::int64_t slot_start = 0;
  struct XidSeen {
    std::int64_t first = 0, last = 0;
    int count = 0;
    std::string message;
  };
  std::map<int, XidSeen> xids;
  std::int64_t dbe_event_ms = -1;
  std::int64_t fell_off_bus_ms = -1;
  double max_pcie_gen = 0, max_pcie_width = 0, max_sm_clock = 0, nvlink_baseline = -1;

  const Sample* latest() const;
  // Samples with t >= since, oldest first.
  template <class F>
  void forEachSince(std::int64_t since, F&& f) const {
    for (std::size_t k = 0; k < count; ++k) {
      const Sample& s = ring[(head + ring.size() - count + k) % ring.size()];
      if (s.t >= since) f(s);
    }
  }
  // The oldest sample at or after `since`, or null.
  const Sample* firstSince(std::int64_t since) const;
  void push(const Sample& s);
};

// Node-wide facts, for the rules about the node rather than one GPU.
struct NodeFacts {
  int visible_gpus = -1;  // -1: nothing observed yet
  int nvml_init_error = 0;
};

// Where a rule looks, which decides when the engine asks it.
enum class RuleScope {
  kSample,     // a GPU's latest sample, on each observation while the GPU answers
  kGpuState,   // a GPU's state (lost, stalled), on each observation whatever the state
  kProcesses,  // a GPU's process list, when one is observed
  kXid,        // one recent Xid code of a GPU, when findings are asked for; one finding per code
  kNode,       // the node as a whole, on each observation and when NVML's init error changes
};

// What a rule gets to look at. Only the members of its scope are set.
struct RuleContext {
  const RuleConfig& config;
  std::int64_t now = 0;
  const GpuHistory* gpu = nullptr;         // all but kNode
  const collect::GpuView* view = nullptr;  // kSample, kGpuState
  // kSample: the other GPUs observed in the same pass; kXid: every other GPU known.
  std::span<const GpuHistory* const> peers{};
  const std::vector<ProcessSample>* processes = nullptr;  // kProcesses
  std::string_view proc_root{};                           // kProcesses: whose /proc says which pids exist
  int xid = 0;                                            // kXid: the code
  const NodeFacts* node = nullptr;                        // kNode
  const WorkloadView* workload = nullptr;                 // kSample, kProcesses: what the GPU runs

  // kSample only: the latest sample (the engine asks only when there is one) and its column c.
  const Sample& latest() const { return *gpu->latest(); }
  double at(Col c) const { return latest().v[c]; }
  std::string gpuName() const { return "GPU " + std::to_string(gpu->id.index); }
};

// How a signal is compared with its threshold.
enum class Cmp { kAtLeast, kAbove, kAtMost, kBelow, kEqual };

// One threshold of a rule, as a specification: the rule's code compares on its own, and
// tests/health/boundary_test.cpp holds the code to this table by putting the signal at the
// threshold and one step either side. docs/health.md's boundary table and the {N} marks of
// `fires_when` are rendered from it, so what the docs promise is what the tests check.
struct Threshold {
  std::string_view signal{};  // what is compared: "core temperature"
  Cmp cmp = Cmp::kAtLeast;
  // The threshold under a configuration; null when it is the GPU's own (then `against` says what).
  double (*value)(const RuleConfig&) = nullptr;
  std::string_view against{};     // "the most active links seen", when value is null
  std::string_view unit{};        // printed after the value: " °C", " %", " W", "" (a count)
  bool percent = false;           // a fraction (0.9) shown as a percentage (90 %) before `unit`
  double step = 1;                // the smallest change of the signal worth telling apart
  std::string_view config_key{};  // the YAML key that sets it; "" when fixed
  // What crossing it does: the severity of the condition beyond it (a lower one may hold on the
  // other side, as below a GPU's slowdown temperature) ...
  Severity severity = Severity::Warning;
  // ... or, when set, only this word appears in the summary (the rule fires on both sides).
  std::string_view marks{};
};

// "≥ 85 °C", "< the most active links seen", "> 0": a threshold as the docs show it.
std::string describeThreshold(const Threshold& t, const RuleConfig& config);
// `fires_when` with each {N} replaced by its threshold under `config`.
std::string describeFiresWhen(std::string_view fires_when, std::span<const Threshold> thresholds,
                              const RuleConfig& config);

// A rule's facts: everything about it except how it decides.
struct RuleInfo {
  std::string_view name{};                   // "thermal_slowdown"; unique, used in `disabled:`
  std::string_view config_key{};             // YAML key of its hold time; "" when it has none
  std::int64_t RuleConfig::*hold = nullptr;  // how long the condition must hold; null: at once
  std::string_view kb_id{};                  // knowledge-base entry; "" if none (xid: per code)
  bool sticky = false;                       // its incident stays open until an operator resolves it
  Severity severity = Severity::Warning;     // the severity it usually reports (docs; a condition may differ)
  std::string_view fires_when{};             // docs/health.md: when it fires; {N} is thresholds[N]
  std::span<const Threshold> thresholds{};   // every threshold it compares with (boundary-tested)
};

struct Rule {
  RuleInfo info;
  RuleScope scope = RuleScope::kSample;
  std::optional<Condition> (*evaluate)(const RuleContext&) = nullptr;
};

// The families, one per rules_<family>.cpp; rule_registry.cpp joins them.
std::span<const Rule> thermalRules();
std::span<const Rule> powerRules();
std::span<const Rule> memoryRules();
std::span<const Rule> linkRules();
std::span<const Rule> workloadRules();
std::span<const Rule> stateRules();

// Shared by the rule families for their text.
inline bool valid(double v) { return !std::isnan(v); }
std::string fmt(double v, int decimals = 0);
// 700 -> "700", 312.5 -> "312.5": at most max_decimals, no trailing zeros (limits, thresholds).
std::string trimmed(double v, int max_decimals = 2);
std::string hex(double v);
std::string gib(std::uint64_t bytes);

}  // namespace gw::health
