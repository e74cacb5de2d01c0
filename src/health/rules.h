// Health rules: named detectors over the sampler's GpuViews, the process lists and GPU events.
// The engine keeps a fixed-size ring buffer per GPU (~10 minutes of the fields the rules need),
// tracks for every (rule, GPU) how long its condition has held, and reports a Finding once the
// condition has held for the rule's hold time, so single-sample noise never fires (R15-R21, R26,
// R33). Findings are the *current* conditions: incidents.h turns them into a lifecycle.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "collect/gpu_view.h"
#include "common/result.h"
#include "events/gpu_event.h"
#include "fields/catalog.h"

namespace YAML {
class Node;
}

namespace gw::health {

enum class Severity { Info = 0, Warning = 1, Critical = 2, Fatal = 3 };
std::string_view severityName(Severity s);
std::optional<Severity> parseSeverity(std::string_view s);

struct Finding {
  std::string rule;      // detector name, e.g. "thermal_slowdown"
  int gpu_index = -1;    // -1: node-wide (gpu_count, driver_mismatch)
  std::string gpu_uuid;  // "" for node-wide findings
  Severity severity = Severity::Warning;
  std::string summary;        // one sentence
  std::string action;         // what to do
  std::string kb_id;          // knowledge-base entry, "" if none
  std::string evidence;       // the numbers behind it
  std::string key;            // identity of the condition: rule|uuid[|detail]; one incident per key
  bool sticky = false;        // the incident stays open until an operator resolves it
  std::int64_t since_ms = 0;  // when the condition started
  int xid = 0;                // the Xid code, for rule "xid"
};

// What a rule sees on one look: the finding it would make, before its hold time has passed.
struct Condition {
  Severity severity = Severity::Warning;
  std::string summary{}, action{}, evidence{};
  // For a rule whose findings differ by their detail (xid: by code); unset means the rule's own.
  std::optional<bool> sticky{};
  std::optional<std::string> kb_id{};
};

// What a GPU is used for (seed 001 §1.1: training keeps it full for hours, inference swings with
// the requests, interactive work is bursts between idle stretches). Rules that read utilisation
// judge it by the class: a starved input pipeline is a training problem only.
enum class WorkloadClass { kUnknown, kTraining, kInference, kInteractive, kIdle };
std::string_view workloadName(WorkloadClass c);
std::optional<WorkloadClass> parseWorkloadClass(std::string_view s);  // not "unknown"

// A GPU's class and where it came from: "scheduler" (RuleEngine::setWorkload), "configured"
// (health.workload_by_gpu, then health.workload) or "inferred" from its utilisation, with the
// numbers behind the inference in `basis`.
struct WorkloadView {
  WorkloadClass cls = WorkloadClass::kUnknown;
  std::string source{};
  std::string basis{};
  std::string describe() const;  // "training (inferred: ...)", "inference (configured)"
};

// Every threshold of every rule. Defaults follow the requirements (R16-R21) and the seed handbook.
struct RuleConfig {
  std::set<std::string> disabled;  // rule names switched off

  // The workload class of the node's GPUs (unset: inferred per GPU) and per GPU, by index ("0")
  // or UUID; a GPU's own entry wins.
  std::optional<WorkloadClass> workload;
  std::map<std::string, WorkloadClass> workload_by_gpu;

  // A GPU is "under load" at or above this utilisation (%); "full load" for the power rule.
  double load_util = 60;
  double full_load_util = 90;
  double idle_util = 2;  // at or below: idle

  // temperature
  double gpu_temp_c = 85;
  double memory_temp_c = 95;
  std::int64_t temperature_hold_ms = 30'000;
  std::int64_t thermal_hold_ms = 15'000;
  double thermal_clock_drop = 0.10;  // clocks at least this fraction below max (or below the last minute)

  // power
  // Power below this fraction of the enforced limit at full load. Compute-bound work at ≥ 90 %
  // utilisation sits at 80-100 % of the limit; the seed's example of a fault, 180 W on a 300 W
  // card, is 60 %. 65 % reports that with margin and leaves memory-bound work (65-80 %) alone.
  double low_power_fraction = 0.65;
  std::int64_t low_power_hold_ms = 60'000;
  double idle_power_w = 100;
  std::int64_t idle_power_hold_ms = 120'000;
  std::int64_t power_slowdown_hold_ms = 10'000;
  double power_cap_fraction = 0.9;  // enforced limit below this fraction of the default: capped
  std::int64_t power_cap_hold_ms = 60'000;

  // memory
  double retired_pages_max = 63;         // sbe + dbe retired pages at or above: replace
  double remap_uncorrectable_max = 512;  // uncorrectable remapped rows at or above: replace
  std::int64_t memory_hold_ms = 0;       // counters and flags are exact: no noise to hold out
  double sbe_rise_max = 100;             // volatile SBE increase within sbe_window_ms
  std::int64_t sbe_window_ms = 600'000;

  // PCIe
  std::int64_t pcie_hold_ms = 30'000;
  // Allowed replays per minute for link generation 1..5 (index gen-1); 6+ use the last.
  std::array<double, 5> pcie_replay_per_min{5, 5, 10, 20, 40};
  std::int64_t pcie_replay_window_ms = 60'000;

  // NVLink
  std::int64_t nvlink_hold_ms = 10'000;
  double nvlink_error_max = 10;  // CRC/replay/recovery increase within nvlink_window_ms
  std::int64_t nvlink_window_ms = 300'000;
  // A GPU registers with the NVSwitch fabric seconds after nvidia-fabricmanager starts at boot.
  std::int64_t fabric_hold_ms = 60'000;

  // P-state
  double pstate_slow = 8;  // P8 or higher under load
  std::int64_t pstate_hold_ms = 30'000;

  // fan
  // A fan at 0 % on a board this warm is broken. Not lower: zero-RPM boards (GeForce, workstation)
  // stop their fans while cool and start them by 50-60 °C, so 0 % at 47 °C idle is normal.
  double fan_min_temp_c = 65;
  std::int64_t fan_hold_ms = 30'000;

  // utilisation starvation (R16)
  std::int64_t starvation_window_ms = 300'000;
  double starvation_util_max = 70;   // sustained below this ...
  double swing_low = 3;              // ... and at or above this (a job is running)
  double swing_high = 20;            // all of it at or below this: "swinging between 3 % and 20 %"
  double starvation_fraction = 0.9;  // of the window's samples inside the band
  // A GPU whose class is neither set nor scheduled is inferred from the same window: utilisation
  // spread (90th minus 10th percentile) at or above this many points is inference (30-80 % swings
  // are normal there, seed 001 §1.2); a steadier one is training.
  double inference_spread = 25;

  // straggler
  double straggler_idle_util = 5;
  double straggler_peer_util = 50;
  std::int64_t straggler_hold_ms = 60'000;
  int straggler_min_peers = 2;

  // leftover processes (R17)
  std::int64_t zombie_hold_ms = 30'000;
  // A live process holding at least this much memory on a GPU idle (≤ idle_util) for the whole
  // window: a finished job that never exited. Ten minutes outlasts a checkpoint save or an
  // evaluation pass on the CPU.
  double leftover_min_gib = 1;
  std::int64_t leftover_window_ms = 600'000;

  // GPU state
  std::int64_t lost_hold_ms = 0;
  std::int64_t stalled_hold_ms = 30'000;
  int expected_gpus = 0;  // 0: not checked
  std::int64_t gpu_count_hold_ms = 30'000;
  bool require_persistence = true;
  std::int64_t persistence_hold_ms = 10'000;

  // Xid
  std::int64_t xid_active_ms = 600'000;  // an Xid stays a current finding this long after it was seen
  int app_xid_repeat = 3;                // app-fault Xids on one GPU within xid_active_ms ...
                                         // ... while peers see none: escalate to warning
};

// YAML (all keys optional; the names are the struct's, listed with their ranges in
// rule_config.cpp and docs/health.md). Errors name file:line and the key.
Result<RuleConfig> parseRuleConfig(std::string_view yaml, std::string_view file = "<rules>");
// The same for a mapping inside a larger document (the agent's `health:`): lines are the
// document's, keys are named `prefix.key`.
Result<RuleConfig> parseRuleConfigNode(const YAML::Node& node, std::string_view file, std::string_view prefix);
// The configuration keys, for docs/health.md (markdown table rows).
std::string renderConfigKeyTableMarkdown();

// The rule names the engine knows, for documentation and config validation (from the registry,
// rule_registry.h).
const std::vector<std::string>& ruleNames();

// One process holding memory on a GPU, as NVML lists it.
struct ProcessSample {
  unsigned pid = 0;
  std::uint64_t used_bytes = 0;
};

class RuleEngine {
 public:
  // proc_root: the filesystem root whose /proc says which pids exist ("/" on a host).
  explicit RuleEngine(RuleConfig config = {}, std::string proc_root = "/");

  // The numeric fields the rules read; give the sampler at least these.
  static std::vector<const fields::Field*> requiredFields();

  void observe(const std::vector<collect::GpuView>& views, std::int64_t now_ms);
  void onEvent(const events::GpuEvent& e);
  void observeProcesses(unsigned gpu_index, const std::vector<ProcessSample>& processes, std::int64_t now_ms);
  // nvmlInit's error code when it failed (18 = LIB_RM_VERSION_MISMATCH); 0 clears it.
  void setNvmlInitError(int nvml_code, std::int64_t now_ms);

  std::vector<Finding> evaluate(std::int64_t now_ms);

  // A new configuration (a reload): thresholds and holds apply from the next evaluation; what the
  // engine has learnt (history, latched events, conditions under way) is kept.
  void setConfig(RuleConfig config);
  // The workload class a scheduler says the GPU (by UUID) runs; it wins over the configuration
  // and the inference. nullopt forgets it.
  void setWorkload(const std::string& gpu_uuid, std::optional<WorkloadClass> cls);
  // The GPU's class as the rules see it now.
  WorkloadView workloadOf(const std::string& gpu_uuid, std::int64_t now_ms) const;

  // The GPU's recent signals as JSON: {"at": {...latest...}, "series": {field: [[t_ms, v], ...]}}
  // over window_ms before now_ms. Empty object when the GPU is unknown.
  nlohmann::json contextSnapshot(const std::string& uuid, std::int64_t now_ms, std::int64_t window_ms = 60'000) const;

  RuleConfig config() const;

  static constexpr std::size_t kRingCapacity = 720;     // 12 min at one sample per second
  static constexpr std::int64_t kMinSampleGapMs = 900;  // faster observations are merged

 private:
  struct GpuState;
  struct Current {
    Condition cond;
    std::int64_t since = 0;
  };

  GpuState& gpu(const collect::GpuIdentity& id);
  void setCondition(std::map<std::string, Current>& active, const std::string& rule, std::optional<Condition> c,
                    std::int64_t now);
  void evaluateNode(std::int64_t now);
  bool applyEvent(const events::GpuEvent& e);  // false: GPU not known yet
  Finding makeFinding(const GpuState* g, const std::string& rule, const Current& c) const;

  RuleConfig config_;
  std::string proc_root_;
  mutable std::mutex mu_;
  std::map<std::string, GpuState*> by_uuid_;
  std::vector<std::unique_ptr<GpuState>> gpus_;
  int visible_gpus_ = -1;
  int nvml_init_error_ = 0;
  std::map<std::string, Current> node_active_;  // node-wide conditions true now, by rule
  std::int64_t last_now_ = 0;
  std::vector<events::GpuEvent> unmatched_events_;
  std::map<std::string, WorkloadClass> scheduled_;  // by UUID (setWorkload)

 public:
  ~RuleEngine();
  RuleEngine(const RuleEngine&) = delete;
  RuleEngine& operator=(const RuleEngine&) = delete;
};

}  // namespace gw::health
