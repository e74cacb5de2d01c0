#include "health/rules.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "knowledge/knowledge_base.h"
#include "knowledge/xid_catalog.h"
#include "platform/fs_root.h"

namespace gw::health {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

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
  kColCount
};
constexpr std::array<std::string_view, kColCount> kColKeys{"gpu_util",
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
                                                           "slowdown_temp"};

// Clock event reason bits (nvmlClocksEventReason*).
constexpr std::uint64_t kSwPowerCap = 0x4, kHwSlowdown = 0x8, kSwThermal = 0x20, kHwThermal = 0x40,
                        kHwPowerBrake = 0x80;

const std::vector<const fields::Field*>& colFields() {
  static const std::vector<const fields::Field*> f = [] {
    std::vector<const fields::Field*> v;
    for (auto k : kColKeys) v.push_back(fields::findByKey(k));
    return v;
  }();
  return f;
}

bool valid(double v) { return !std::isnan(v); }

std::string fmt(double v, int decimals = 0) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string hex(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string gib(std::uint64_t bytes) { return fmt(static_cast<double>(bytes) / (1024.0 * 1024 * 1024), 1) + " GiB"; }

bool stickyRule(std::string_view rule) {
  return rule == "ecc_dbe" || rule == "row_remap" || rule == "retired_pages" || rule == "gpu_lost";
}

}  // namespace

std::string_view severityName(Severity s) {
  switch (s) {
    case Severity::Info:
      return "info";
    case Severity::Warning:
      return "warning";
    case Severity::Critical:
      return "critical";
    case Severity::Fatal:
      return "fatal";
  }
  return "warning";
}

std::optional<Severity> parseSeverity(std::string_view s) {
  if (s == "info") return Severity::Info;
  if (s == "warning") return Severity::Warning;
  if (s == "critical") return Severity::Critical;
  if (s == "fatal") return Severity::Fatal;
  return std::nullopt;
}

const std::vector<std::string>& ruleNames() {
  static const std::vector<std::string> names{"gpu_temperature",  "memory_temperature",
                                              "thermal_slowdown", "power_low_under_load",
                                              "idle_power_high",  "power_slowdown",
                                              "power_capped",     "ecc_dbe",
                                              "ecc_sbe_rising",   "retired_pages",
                                              "row_remap",        "pcie_downtrain",
                                              "pcie_replay",      "nvlink_down",
                                              "nvlink_errors",    "pstate_under_load",
                                              "fan_failure",      "starvation",
                                              "straggler",        "zombie_process",
                                              "gpu_lost",         "gpu_stalled",
                                              "gpu_count",        "persistence_off",
                                              "driver_mismatch",  "xid"};
  return names;
}

// ---------------------------------------------------------------------------------------------
// Configuration

namespace {

struct ConfigKey {
  std::string_view name;
  double* d = nullptr;
  std::int64_t* ms = nullptr;
  int* i = nullptr;
  bool* b = nullptr;
};

std::vector<ConfigKey> configKeys(RuleConfig& c) {
  return {
      {"load_util", &c.load_util},
      {"full_load_util", &c.full_load_util},
      {"idle_util", &c.idle_util},
      {"gpu_temp_c", &c.gpu_temp_c},
      {"memory_temp_c", &c.memory_temp_c},
      {"temperature_hold_ms", nullptr, &c.temperature_hold_ms},
      {"thermal_hold_ms", nullptr, &c.thermal_hold_ms},
      {"thermal_clock_drop", &c.thermal_clock_drop},
      {"low_power_fraction", &c.low_power_fraction},
      {"low_power_hold_ms", nullptr, &c.low_power_hold_ms},
      {"idle_power_w", &c.idle_power_w},
      {"idle_power_hold_ms", nullptr, &c.idle_power_hold_ms},
      {"power_slowdown_hold_ms", nullptr, &c.power_slowdown_hold_ms},
      {"power_cap_fraction", &c.power_cap_fraction},
      {"power_cap_hold_ms", nullptr, &c.power_cap_hold_ms},
      {"retired_pages_max", &c.retired_pages_max},
      {"remap_uncorrectable_max", &c.remap_uncorrectable_max},
      {"memory_hold_ms", nullptr, &c.memory_hold_ms},
      {"sbe_rise_max", &c.sbe_rise_max},
      {"sbe_window_ms", nullptr, &c.sbe_window_ms},
      {"pcie_hold_ms", nullptr, &c.pcie_hold_ms},
      {"pcie_replay_window_ms", nullptr, &c.pcie_replay_window_ms},
      {"nvlink_hold_ms", nullptr, &c.nvlink_hold_ms},
      {"nvlink_error_max", &c.nvlink_error_max},
      {"nvlink_window_ms", nullptr, &c.nvlink_window_ms},
      {"pstate_slow", &c.pstate_slow},
      {"pstate_hold_ms", nullptr, &c.pstate_hold_ms},
      {"fan_min_temp_c", &c.fan_min_temp_c},
      {"fan_hold_ms", nullptr, &c.fan_hold_ms},
      {"starvation_window_ms", nullptr, &c.starvation_window_ms},
      {"starvation_util_max", &c.starvation_util_max},
      {"swing_low", &c.swing_low},
      {"swing_high", &c.swing_high},
      {"starvation_fraction", &c.starvation_fraction},
      {"straggler_idle_util", &c.straggler_idle_util},
      {"straggler_peer_util", &c.straggler_peer_util},
      {"straggler_hold_ms", nullptr, &c.straggler_hold_ms},
      {"straggler_min_peers", nullptr, nullptr, &c.straggler_min_peers},
      {"zombie_hold_ms", nullptr, &c.zombie_hold_ms},
      {"lost_hold_ms", nullptr, &c.lost_hold_ms},
      {"stalled_hold_ms", nullptr, &c.stalled_hold_ms},
      {"expected_gpus", nullptr, nullptr, &c.expected_gpus},
      {"gpu_count_hold_ms", nullptr, &c.gpu_count_hold_ms},
      {"require_persistence", nullptr, nullptr, nullptr, &c.require_persistence},
      {"persistence_hold_ms", nullptr, &c.persistence_hold_ms},
      {"xid_active_ms", nullptr, &c.xid_active_ms},
      {"app_xid_repeat", nullptr, nullptr, &c.app_xid_repeat},
  };
}

}  // namespace

Result<RuleConfig> parseRuleConfig(std::string_view yaml, std::string_view file) {
  RuleConfig c;
  auto where = [&](const YAML::Node& n) { return std::string(file) + ":" + std::to_string(n.Mark().line + 1) + ": "; };
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    return Status::Error(std::string(file) + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  if (!root || root.IsNull()) return c;
  if (!root.IsMap()) return Status::Error(where(root) + "expected a map of rule settings");
  auto keys = configKeys(c);
  for (auto it = root.begin(); it != root.end(); ++it) {
    const YAML::Node keyNode = it->first;  // copies: the iterator's pair is a temporary
    const YAML::Node v = it->second;
    const std::string name = keyNode.as<std::string>();
    try {
      if (name == "disabled") {
        if (!v.IsSequence()) return Status::Error(where(v) + "disabled: expected a list of rule names");
        for (const auto& r : v) {
          auto rn = r.as<std::string>();
          const auto& all = ruleNames();
          if (std::find(all.begin(), all.end(), rn) == all.end())
            return Status::Error(where(r) + "disabled: unknown rule '" + rn + "'");
          c.disabled.insert(rn);
        }
        continue;
      }
      if (name == "pcie_replay_per_min") {
        if (!v.IsSequence() || v.size() != c.pcie_replay_per_min.size())
          return Status::Error(where(v) + "pcie_replay_per_min: expected a list of 5 numbers (Gen1..Gen5)");
        for (std::size_t k = 0; k < v.size(); ++k) c.pcie_replay_per_min[k] = v[k].as<double>();
        continue;
      }
      auto k = std::find_if(keys.begin(), keys.end(), [&](const ConfigKey& ck) { return ck.name == name; });
      if (k == keys.end()) return Status::Error(where(keyNode) + "unknown key '" + name + "'");
      if (!v.IsScalar()) return Status::Error(where(v) + name + ": expected a scalar");
      if (k->d) *k->d = v.as<double>();
      if (k->ms) *k->ms = v.as<std::int64_t>();
      if (k->i) *k->i = v.as<int>();
      if (k->b) *k->b = v.as<bool>();
      if ((k->d && *k->d < 0) || (k->ms && *k->ms < 0) || (k->i && *k->i < 0))
        return Status::Error(where(v) + name + ": must not be negative");
    } catch (const YAML::Exception&) {
      return Status::Error(where(v) + name + ": wrong type");
    }
  }
  return c;
}

Result<RuleConfig> loadRuleConfig(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::Error(path + ": cannot open");
  std::stringstream ss;
  ss << in.rdbuf();
  return parseRuleConfig(ss.str(), path);
}

// ---------------------------------------------------------------------------------------------
// Per-GPU state

struct RuleEngine::Sample {
  std::int64_t t = 0;
  std::array<double, kColCount> v{};
};

struct RuleEngine::GpuState {
  collect::GpuIdentity id;
  collect::GpuState state = collect::GpuState::Up;
  std::array<Sample, kRingCapacity> ring{};
  std::size_t head = 0;  // next write
  std::size_t count = 0;
  std::map<std::string, Current> active;  // conditions true now, by rule
  // latched from events
  struct XidSeen {
    std::int64_t first = 0, last = 0;
    int count = 0;
    std::string message;
  };
  std::map<int, XidSeen> xids;
  std::int64_t dbe_event_ms = -1;
  std::int64_t fell_off_bus_ms = -1;
  // learnt maxima
  double max_pcie_gen = 0, max_pcie_width = 0, max_sm_clock = 0, nvlink_baseline = -1;

  const Sample* latest() const { return count ? &ring[(head + kRingCapacity - 1) % kRingCapacity] : nullptr; }
  // Samples with t >= since, oldest first.
  template <class F>
  void forEachSince(std::int64_t since, F&& f) const {
    for (std::size_t k = 0; k < count; ++k) {
      const Sample& s = ring[(head + kRingCapacity - count + k) % kRingCapacity];
      if (s.t >= since) f(s);
    }
  }
  // The oldest sample at or after `since`, or null.
  const Sample* firstSince(std::int64_t since) const {
    for (std::size_t k = 0; k < count; ++k) {
      const Sample& s = ring[(head + kRingCapacity - count + k) % kRingCapacity];
      if (s.t >= since) return &s;
    }
    return nullptr;
  }
  void push(const Sample& s) {
    const Sample* last = latest();
    if (last && s.t - last->t < kMinSampleGapMs && s.t >= last->t) {
      ring[(head + kRingCapacity - 1) % kRingCapacity] = s;  // merge: keep the newest values
      return;
    }
    ring[head] = s;
    head = (head + 1) % kRingCapacity;
    if (count < kRingCapacity) ++count;
  }
};

RuleEngine::RuleEngine(RuleConfig config, std::string proc_root)
    : config_(std::move(config)), proc_root_(std::move(proc_root)) {}
RuleEngine::~RuleEngine() = default;

std::vector<const fields::Field*> RuleEngine::requiredFields() {
  std::vector<const fields::Field*> out;
  for (const auto* f : colFields())
    if (f) out.push_back(f);
  return out;
}

RuleEngine::GpuState& RuleEngine::gpu(const collect::GpuIdentity& id) {
  auto it = by_uuid_.find(id.uuid);
  if (it != by_uuid_.end()) {
    it->second->id = id;
    return *it->second;
  }
  gpus_.push_back(std::make_unique<GpuState>());
  GpuState* g = gpus_.back().get();
  g->id = id;
  by_uuid_[id.uuid] = g;
  return *g;
}

void RuleEngine::setCondition(GpuState& g, const std::string& rule, std::optional<Condition> c, std::int64_t now) {
  if (!c || config_.disabled.count(rule)) {
    g.active.erase(rule);
    return;
  }
  auto it = g.active.find(rule);
  if (it == g.active.end()) {
    g.active.emplace(rule, Current{std::move(*c), now});
  } else {
    it->second.cond = std::move(*c);
  }
}

namespace {

std::int64_t holdFor(const RuleConfig& c, const std::string& rule) {
  if (rule == "gpu_temperature" || rule == "memory_temperature") return c.temperature_hold_ms;
  if (rule == "thermal_slowdown") return c.thermal_hold_ms;
  if (rule == "power_low_under_load") return c.low_power_hold_ms;
  if (rule == "idle_power_high") return c.idle_power_hold_ms;
  if (rule == "power_slowdown") return c.power_slowdown_hold_ms;
  if (rule == "power_capped") return c.power_cap_hold_ms;
  if (rule == "ecc_dbe" || rule == "ecc_sbe_rising" || rule == "retired_pages" || rule == "row_remap")
    return c.memory_hold_ms;
  if (rule == "pcie_downtrain" || rule == "pcie_replay") return c.pcie_hold_ms;
  if (rule == "nvlink_down" || rule == "nvlink_errors") return c.nvlink_hold_ms;
  if (rule == "pstate_under_load") return c.pstate_hold_ms;
  if (rule == "fan_failure") return c.fan_hold_ms;
  if (rule == "straggler") return c.straggler_hold_ms;
  if (rule == "zombie_process") return c.zombie_hold_ms;
  if (rule == "gpu_lost") return c.lost_hold_ms;
  if (rule == "gpu_stalled") return c.stalled_hold_ms;
  if (rule == "persistence_off") return c.persistence_hold_ms;
  if (rule == "gpu_count") return c.gpu_count_hold_ms;
  return 0;  // starvation: its window is its hold
}

std::string kbFor(const std::string& rule) {
  if (rule == "gpu_temperature" || rule == "memory_temperature" || rule == "thermal_slowdown") return "hot-and-loud";
  if (rule == "fan_failure") return "fans-not-spinning";
  if (rule == "power_low_under_load" || rule == "power_slowdown" || rule == "power_capped" ||
      rule == "pstate_under_load")
    return "low-power-under-load";
  if (rule == "ecc_dbe" || rule == "ecc_sbe_rising") return "ecc-rising";
  if (rule == "retired_pages" || rule == "row_remap") return "xid63-row-remap";
  if (rule == "starvation") return "low-utilization-input-bound";
  if (rule == "straggler") return "one-gpu-idle";
  if (rule == "zombie_process" || rule == "idle_power_high") return "oom-free-memory";
  if (rule == "gpu_lost") return "xid79-fell-off-bus";
  if (rule == "gpu_count") return "no-devices";
  if (rule == "driver_mismatch") return "driver-lib-mismatch";
  return "";
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Observation

void RuleEngine::observe(const std::vector<collect::GpuView>& views, std::int64_t now) {
  std::lock_guard lock(mu_);
  last_now_ = std::max(last_now_, now);
  const auto& cols = colFields();
  // 1. record samples and learn identities
  std::vector<std::pair<GpuState*, const collect::GpuView*>> seen;
  int visible = 0;
  for (const auto& v : views) {
    if (v.id.is_mig || v.id.uuid.empty()) continue;
    ++visible;
    GpuState& g = gpu(v.id);
    g.state = v.state;
    seen.emplace_back(&g, &v);
    if (v.state != collect::GpuState::Up) continue;
    Sample s;
    s.t = now;
    for (std::size_t c = 0; c < kColCount; ++c) {
      s.v[c] = kNaN;
      if (!cols[c]) continue;
      std::size_t idx = fields::indexOf(*cols[c]);
      if (idx < v.values.size() && v.values[idx].valid) s.v[c] = v.values[idx].value;
    }
    g.push(s);
    if (valid(s.v[kPcieGen])) g.max_pcie_gen = std::max(g.max_pcie_gen, s.v[kPcieGen]);
    if (valid(s.v[kPcieWidth])) g.max_pcie_width = std::max(g.max_pcie_width, s.v[kPcieWidth]);
    if (valid(s.v[kSmClock])) g.max_sm_clock = std::max(g.max_sm_clock, s.v[kSmClock]);
    if (valid(s.v[kNvlActive])) g.nvlink_baseline = std::max(g.nvlink_baseline, s.v[kNvlActive]);
  }
  visible_gpus_ = visible;
  // events that arrived before their GPU was known
  if (!unmatched_events_.empty()) {
    auto pending = std::move(unmatched_events_);
    unmatched_events_.clear();
    for (const auto& e : pending)
      if (!applyEvent(e) && unmatched_events_.size() < 256) unmatched_events_.push_back(e);
  }
  // 2. evaluate
  for (auto& [g, v] : seen) {
    int busy = 0, others = 0;
    for (auto& [o, ov] : seen) {
      if (o == g || ov->state != collect::GpuState::Up) continue;
      ++others;
      const Sample* s = o->latest();
      if (s && valid(s->v[kUtil]) && s->v[kUtil] >= config_.straggler_peer_util) ++busy;
    }
    evaluateGpu(*g, *v, now, busy, others);
  }
  if (config_.expected_gpus > 0 && visible < config_.expected_gpus) {
    if (count_short_since_ < 0) count_short_since_ = now;
  } else {
    count_short_since_ = -1;
  }
}

void RuleEngine::evaluateGpu(GpuState& g, const collect::GpuView& v, std::int64_t now, int busy_peers, int others) {
  const RuleConfig& c = config_;
  using C = std::optional<Condition>;
  auto cond = [](Severity s, std::string summary, std::string action, std::string evidence) {
    return C(Condition{s, std::move(summary), std::move(action), std::move(evidence), ""});
  };

  // GPU state
  const bool lost = v.state == collect::GpuState::Lost || g.fell_off_bus_ms >= 0;
  setCondition(g, "gpu_lost",
               lost ? cond(Severity::Fatal,
                           "GPU " + std::to_string(g.id.index) +
                               " is lost: it no longer answers (fallen off the bus or needs a reset).",
                           "Drain the node and reboot it; if the GPU is lost again, reseat or replace it (check PCIe, "
                           "power and temperature at the time).",
                           "state=" + std::string(collect::stateName(v.state)) +
                               (v.state_reason.empty() ? "" : " (" + v.state_reason + ")"))
                    : C(),
               now);
  setCondition(
      g, "gpu_stalled",
      v.state == collect::GpuState::Stalled
          ? cond(Severity::Critical, "NVML calls on GPU " + std::to_string(g.id.index) + " hang past their deadline.",
                 "Check the kernel log for Xids; stop the GPU's processes and reset it (nvidia-smi -r), or reboot the "
                 "node.",
                 v.state_reason)
          : C(),
      now);
  if (v.state != collect::GpuState::Up) {
    // Values are stale: clear the value-based conditions that are not latched facts.
    for (auto it = g.active.begin(); it != g.active.end();) {
      if (it->first == "gpu_lost" || it->first == "gpu_stalled" || stickyRule(it->first))
        ++it;
      else
        it = g.active.erase(it);
    }
    return;
  }

  const Sample* sp = g.latest();
  if (!sp) return;
  const auto& s = sp->v;
  const std::string gpuName = "GPU " + std::to_string(g.id.index);
  const double util = s[kUtil];
  const bool underLoad = valid(util) && util >= c.load_util;
  const std::uint64_t reasons = valid(s[kReasons]) ? static_cast<std::uint64_t>(s[kReasons]) : 0;
  const double maxSm = valid(s[kMaxSm]) && s[kMaxSm] > 0 ? s[kMaxSm] : g.max_sm_clock;

  // temperature (R19)
  if (valid(s[kTemp]) && s[kTemp] >= c.gpu_temp_c) {
    const bool slowdown = valid(s[kSlowdownTemp]) && s[kSlowdownTemp] > 0 && s[kTemp] >= s[kSlowdownTemp];
    setCondition(g, "gpu_temperature",
                 cond(slowdown ? Severity::Critical : Severity::Warning,
                      gpuName + " core temperature is " + fmt(s[kTemp]) + " °C, at or above the " + fmt(c.gpu_temp_c) +
                          " °C alert threshold.",
                      "Check cooling: inlet air temperature, airflow, fans and blocked heatsinks; reduce the load or "
                      "drain the GPU if it keeps rising.",
                      "gpu_temp=" + fmt(s[kTemp]) + " threshold=" + fmt(c.gpu_temp_c) +
                          (valid(s[kSlowdownTemp]) ? " slowdown_temp=" + fmt(s[kSlowdownTemp]) : "")),
                 now);
  } else {
    setCondition(g, "gpu_temperature", C(), now);
  }
  setCondition(g, "memory_temperature",
               valid(s[kMemTemp]) && s[kMemTemp] >= c.memory_temp_c
                   ? cond(Severity::Warning,
                          gpuName + " memory temperature is " + fmt(s[kMemTemp]) + " °C, at or above the " +
                              fmt(c.memory_temp_c) + " °C alert threshold.",
                          "Check cooling and airflow; HBM this hot throttles and ages faster.",
                          "memory_temp=" + fmt(s[kMemTemp]) + " threshold=" + fmt(c.memory_temp_c))
                   : C(),
               now);

  // thermal slowdown: HW/SW thermal reasons and clocks that fell
  {
    C r;
    if (reasons & (kSwThermal | kHwThermal)) {
      double minuteMax = 0;
      g.forEachSince(now - 60'000, [&](const Sample& x) {
        if (valid(x.v[kSmClock])) minuteMax = std::max(minuteMax, x.v[kSmClock]);
      });
      const double sm = s[kSmClock];
      const bool fell = valid(sm) && ((maxSm > 0 && sm < maxSm * (1 - c.thermal_clock_drop)) ||
                                      (minuteMax > 0 && sm < minuteMax * (1 - c.thermal_clock_drop)));
      if (fell)
        r = cond(reasons & kHwThermal ? Severity::Critical : Severity::Warning,
                 gpuName + " is slowing its clocks to protect itself from heat (" +
                     (reasons & kHwThermal ? "hardware" : "software") + " thermal slowdown).",
                 "Check cooling (inlet temperature, airflow, fans, heatsink contact); drain the GPU if the slowdown "
                 "persists.",
                 "clock_event_reasons=" + hex(static_cast<double>(reasons)) + " sm_clock=" + fmt(sm) +
                     " max_sm_clock=" + fmt(maxSm) + (valid(s[kTemp]) ? " gpu_temp=" + fmt(s[kTemp]) : ""));
    }
    setCondition(g, "thermal_slowdown", std::move(r), now);
  }

  // power (R18)
  {
    const double limit = valid(s[kEnforced]) && s[kEnforced] > 0 ? s[kEnforced] : s[kPowerLimit];
    const bool explained = reasons & (kHwSlowdown | kHwPowerBrake | kSwThermal | kHwThermal);
    setCondition(g, "power_low_under_load",
                 valid(util) && util >= c.full_load_util && valid(s[kPower]) && valid(limit) && limit > 0 &&
                         s[kPower] < c.low_power_fraction * limit && !explained
                     ? cond(Severity::Warning,
                            gpuName + " draws " + fmt(s[kPower]) + " W at " + fmt(util) +
                                " % utilisation, far below its " + fmt(limit) + " W limit.",
                            "Check the power cables and the power limit (nvidia-smi -q -d POWER,PERFORMANCE); the work "
                            "may be memory-bound or the GPU capped.",
                            "power_usage=" + fmt(s[kPower], 1) + " limit=" + fmt(limit) + " gpu_util=" + fmt(util))
                     : C(),
                 now);
    // An idle board normally drops to P8; one still in P0 has its clocks held up (a leftover
    // `nvidia-smi -lgc`/`-lmc`, an application-clock setting, or a context keeping it awake).
    const bool stuckP0 = valid(s[kPstate]) && s[kPstate] == 0;
    setCondition(
        g, "idle_power_high",
        valid(util) && util <= c.idle_util && valid(s[kPower]) && s[kPower] > c.idle_power_w
            ? cond(Severity::Warning,
                   gpuName + " draws " + fmt(s[kPower]) + " W while idle" +
                       (stuckP0 ? ", held in P0" +
                                      (valid(s[kSmClock]) ? " at " + fmt(s[kSmClock]) + " MHz" : std::string()) +
                                      " instead of dropping to its idle clocks."
                                : " (normal is 20-90 W depending on the board)."),
                   stuckP0 ? "Check for locked clocks (nvidia-smi -q -d CLOCK,PERFORMANCE) and reset them with "
                             "nvidia-smi -rgc and -rmc; "
                             "look for a leftover process keeping a context (nvidia-smi "
                             "--query-compute-apps=pid,used_memory)."
                           : "Look for a leftover process holding the GPU (nvidia-smi "
                             "--query-compute-apps=pid,used_memory); enable persistence mode or reset the GPU.",
                   "power_usage=" + fmt(s[kPower], 1) + " gpu_util=" + fmt(util) + " threshold=" + fmt(c.idle_power_w) +
                       (valid(s[kPstate]) ? " pstate=" + fmt(s[kPstate]) : std::string()) +
                       (valid(s[kSmClock]) ? " sm_clock=" + fmt(s[kSmClock]) : std::string()))
            : C(),
        now);
    const bool brake = reasons & kHwPowerBrake;
    const bool hwSlow = (reasons & kHwSlowdown) && !(reasons & (kSwThermal | kHwThermal));
    setCondition(g, "power_slowdown",
                 brake || hwSlow
                     ? cond(Severity::Critical,
                            gpuName + (brake ? " is held down by the power brake (external power-brake signal)."
                                             : " is slowed by hardware (HW slowdown without a thermal cause)."),
                            "Check the node's power supplies, power cables and the BMC's power-brake events; drain the "
                            "node if it persists.",
                            "clock_event_reasons=" + hex(static_cast<double>(reasons)) +
                                (valid(s[kSmClock]) ? " sm_clock=" + fmt(s[kSmClock]) : "") +
                                (valid(s[kPower]) ? " power_usage=" + fmt(s[kPower], 1) : ""))
                     : C(),
                 now);
    const bool capped = underLoad && (reasons & kSwPowerCap) && valid(s[kEnforced]) && valid(s[kDefaultLimit]) &&
                        s[kDefaultLimit] > 0 && s[kEnforced] < c.power_cap_fraction * s[kDefaultLimit];
    setCondition(g, "power_capped",
                 capped ? cond(Severity::Warning,
                               gpuName + " is power-capped at " + fmt(s[kEnforced]) + " W, below its default " +
                                   fmt(s[kDefaultLimit]) + " W limit, while under load.",
                               "Restore the power limit (nvidia-smi -pl) unless the cap is intended.",
                               "enforced_power_limit=" + fmt(s[kEnforced]) + " default=" + fmt(s[kDefaultLimit]) +
                                   " reasons=" + hex(static_cast<double>(reasons)))
                        : C(),
                 now);
  }

  // memory (R20)
  {
    const bool dbe = (valid(s[kDbeVol]) && s[kDbeVol] > 0) || g.dbe_event_ms >= 0;
    setCondition(g, "ecc_dbe",
                 dbe ? cond(Severity::Critical, gpuName + " reported uncorrectable (double-bit) ECC errors.",
                            "Drain the GPU and reset it (or reboot) so row remapping takes effect; if uncorrectable "
                            "errors recur, RMA the GPU.",
                            "ecc_dbe_volatile=" + (valid(s[kDbeVol]) ? fmt(s[kDbeVol]) : std::string("n/a")) +
                                (g.dbe_event_ms >= 0 ? " (DBE event seen)" : ""))
                     : C(),
                 now);
    C sbe;
    if (valid(s[kSbeVol])) {
      const Sample* old = g.firstSince(now - c.sbe_window_ms);
      if (old && valid(old->v[kSbeVol]) && s[kSbeVol] - old->v[kSbeVol] >= c.sbe_rise_max)
        sbe = cond(Severity::Warning, gpuName + " correctable (single-bit) ECC errors are rising fast.",
                   "Watch for uncorrectable errors and row remapping; schedule a reset and field diagnostics.",
                   "ecc_sbe_volatile " + fmt(old->v[kSbeVol]) + " -> " + fmt(s[kSbeVol]) + " in " +
                       fmt((now - old->t) / 1000.0) + " s");
    }
    setCondition(g, "ecc_sbe_rising", std::move(sbe), now);

    C ret;
    const double retired = (valid(s[kRetSbe]) ? s[kRetSbe] : 0) + (valid(s[kRetDbe]) ? s[kRetDbe] : 0);
    const std::string retEv = "retired_pages sbe=" + (valid(s[kRetSbe]) ? fmt(s[kRetSbe]) : "n/a") +
                              " dbe=" + (valid(s[kRetDbe]) ? fmt(s[kRetDbe]) : "n/a") +
                              " pending=" + (valid(s[kRetPending]) ? fmt(s[kRetPending]) : "n/a");
    if (retired >= c.retired_pages_max)
      ret =
          cond(Severity::Critical, gpuName + " has " + fmt(retired) + " retired memory pages, at the retirement limit.",
               "Drain the node and replace the GPU (RMA).", retEv);
    else if (valid(s[kRetPending]) && s[kRetPending] > 0)
      ret = cond(Severity::Warning, gpuName + " has memory pages waiting to be retired.",
                 "Drain the GPU and reset it (or reboot) so the pending pages are retired.", retEv);
    setCondition(g, "retired_pages", std::move(ret), now);

    C remap;
    const std::string remapEv = "remapped_rows_uncorrectable=" + (valid(s[kRemapUnc]) ? fmt(s[kRemapUnc]) : "n/a") +
                                " pending=" + (valid(s[kRemapPending]) ? fmt(s[kRemapPending]) : "n/a") +
                                " failure=" + (valid(s[kRemapFailure]) ? fmt(s[kRemapFailure]) : "n/a");
    if (valid(s[kRemapFailure]) && s[kRemapFailure] > 0)
      remap = cond(Severity::Critical, gpuName + " failed to remap a memory row: no spare rows are left.",
                   "Drain the node and replace the GPU (RMA).", remapEv);
    else if (valid(s[kRemapUnc]) && s[kRemapUnc] >= c.remap_uncorrectable_max)
      remap =
          cond(Severity::Critical, gpuName + " has " + fmt(s[kRemapUnc]) + " rows remapped for uncorrectable errors.",
               "Drain the node and replace the GPU (RMA).", remapEv);
    else if (valid(s[kRemapPending]) && s[kRemapPending] > 0)
      remap = cond(Severity::Warning, gpuName + " has a row remapping pending.",
                   "Drain the GPU and reset it (nvidia-smi -r) or reboot so the remapping takes effect.", remapEv);
    setCondition(g, "row_remap", std::move(remap), now);
  }

  // PCIe
  {
    const double maxGen = valid(s[kPcieMaxGen]) && s[kPcieMaxGen] > 0 ? s[kPcieMaxGen] : g.max_pcie_gen;
    const double maxWidth = valid(s[kPcieMaxWidth]) && s[kPcieMaxWidth] > 0 ? s[kPcieMaxWidth] : g.max_pcie_width;
    const bool down =
        underLoad && valid(s[kPcieGen]) && valid(s[kPcieWidth]) && (s[kPcieGen] < maxGen || s[kPcieWidth] < maxWidth);
    setCondition(g, "pcie_downtrain",
                 down ? cond(Severity::Warning,
                             gpuName + " PCIe link runs at Gen" + fmt(s[kPcieGen]) + " x" + fmt(s[kPcieWidth]) +
                                 " under load, below its Gen" + fmt(maxGen) + " x" + fmt(maxWidth) + " maximum.",
                             "Reseat the GPU or riser, check the slot, cables and BIOS PCIe settings; host-device "
                             "transfers are slower until fixed.",
                             "pcie_link_gen=" + fmt(s[kPcieGen]) + "/" + fmt(maxGen) + " pcie_link_width=" +
                                 fmt(s[kPcieWidth]) + "/" + fmt(maxWidth) + " gpu_util=" + fmt(util))
                      : C(),
                 now);
    C replay;
    if (valid(s[kReplay])) {
      const Sample* old = g.firstSince(now - c.pcie_replay_window_ms);
      if (old && valid(old->v[kReplay]) && now - old->t >= c.pcie_replay_window_ms / 2) {
        const double perMin = (s[kReplay] - old->v[kReplay]) * 60'000.0 / static_cast<double>(now - old->t);
        const int gen = valid(s[kPcieGen]) ? static_cast<int>(s[kPcieGen]) : 5;
        const double allowed = c.pcie_replay_per_min[static_cast<std::size_t>(std::clamp(gen, 1, 5) - 1)];
        if (perMin > allowed)
          replay = cond(Severity::Warning,
                        gpuName + " PCIe link is replaying " + fmt(perMin, 1) + " packets a minute, above the Gen" +
                            std::to_string(gen) + " allowance of " + fmt(allowed) + ".",
                        "Reseat the GPU or riser and check the slot; a marginal link corrupts packets and can drop the "
                        "GPU off the bus.",
                        "pcie_replay_counter " + fmt(old->v[kReplay]) + " -> " + fmt(s[kReplay]) + " in " +
                            fmt((now - old->t) / 1000.0) + " s");
      }
    }
    setCondition(g, "pcie_replay", std::move(replay), now);
  }

  // NVLink
  {
    setCondition(g, "nvlink_down",
                 valid(s[kNvlActive]) && g.nvlink_baseline > 0 && s[kNvlActive] < g.nvlink_baseline
                     ? cond(Severity::Critical,
                            gpuName + " has " + fmt(g.nvlink_baseline - s[kNvlActive]) + " NVLink link(s) down (" +
                                fmt(s[kNvlActive]) + " of " + fmt(g.nvlink_baseline) + " active).",
                            "Drain the node and reset the GPU / fabric; if the link stays down, inspect the NVLink / "
                            "NVSwitch hardware.",
                            "nvlink_active_links=" + fmt(s[kNvlActive]) + " baseline=" + fmt(g.nvlink_baseline))
                     : C(),
                 now);
    C errs;
    const Sample* old = g.firstSince(now - c.nvlink_window_ms);
    if (old && old != sp) {
      double rise = 0;
      for (Col k : {kNvlCrcFlit, kNvlCrcData, kNvlReplay, kNvlRecovery})
        if (valid(s[k]) && valid(old->v[k])) rise += s[k] - old->v[k];
      if (rise >= c.nvlink_error_max && rise > 0)
        errs = cond(Severity::Warning, gpuName + " NVLink error counters (CRC / replay / recovery) are increasing.",
                    "Schedule a drain and NVLink diagnostics (dcgmi diag -r 3); reseat or replace the part if errors "
                    "keep rising.",
                    "nvlink errors +" + fmt(rise) + " in " + fmt((now - old->t) / 1000.0) + " s");
    }
    setCondition(g, "nvlink_errors", std::move(errs), now);
  }

  // P-state (R21)
  setCondition(
      g, "pstate_under_load",
      underLoad && valid(s[kPstate]) && s[kPstate] >= c.pstate_slow && s[kPstate] < 32
          ? cond(Severity::Warning,
                 gpuName + " is in power-saving state P" + fmt(s[kPstate]) + " while " + fmt(util) + " % busy.",
                 "Check clocks and power limits (nvidia-smi -q -d PERFORMANCE,CLOCK); reset application clocks or the "
                 "GPU.",
                 "pstate=" + fmt(s[kPstate]) + " gpu_util=" + fmt(util))
          : C(),
      now);

  // fans
  setCondition(g, "fan_failure",
               valid(s[kFan]) && s[kFan] <= 1 && valid(s[kTemp]) && s[kTemp] >= c.fan_min_temp_c
                   ? cond(Severity::Critical,
                          gpuName + " fan is at " + fmt(s[kFan]) + " % while the GPU is at " + fmt(s[kTemp]) +
                              " °C: the fan has failed.",
                          "Drain the GPU and replace its fan or board before it overheats.",
                          "fan_speed=" + fmt(s[kFan]) + " gpu_temp=" + fmt(s[kTemp]))
                   : C(),
               now);

  // persistence
  setCondition(
      g, "persistence_off",
      c.require_persistence && valid(s[kPersistence]) && s[kPersistence] == 0
          ? cond(Severity::Warning,
                 gpuName + " has persistence mode off: the driver tears down and re-initialises it between jobs.",
                 "Enable persistence mode (nvidia-smi -pm 1) or run nvidia-persistenced.", "persistence_mode=0")
          : C(),
      now);

  // starvation (R16): over the window, nearly every sample in [swing_low, util_max)
  {
    C st;
    const Sample* old = g.firstSince(now - c.starvation_window_ms);
    if (old && now - old->t >= c.starvation_window_ms * 9 / 10) {
      int n = 0, inBand = 0, low = 0;
      double sum = 0, lo = 1e9, hi = -1;
      g.forEachSince(now - c.starvation_window_ms, [&](const Sample& x) {
        if (!valid(x.v[kUtil])) return;
        const double u = x.v[kUtil];
        ++n;
        sum += u;
        lo = std::min(lo, u);
        hi = std::max(hi, u);
        if (u >= c.swing_low && u < c.starvation_util_max) ++inBand;
        if (u >= c.swing_low && u <= c.swing_high) ++low;
      });
      if (n >= 10 && inBand >= c.starvation_fraction * n) {
        const bool swinging = low >= c.starvation_fraction * n;
        st = cond(Severity::Warning,
                  swinging
                      ? gpuName + " utilisation swings between " + fmt(lo) + " % and " + fmt(hi) +
                            " %: the job is starved (input pipeline, data loading or communication)."
                      : gpuName + " utilisation has stayed under " + fmt(c.starvation_util_max) + " % (mean " +
                            fmt(sum / n) + " %): the job is starved (input pipeline, data loading or communication).",
                  "Profile the input pipeline: more data-loader workers, pinned memory, faster storage, larger "
                  "batches; check NCCL communication.",
                  "gpu_util mean=" + fmt(sum / n, 1) + " min=" + fmt(lo) + " max=" + fmt(hi) + " over " +
                      fmt((now - old->t) / 1000.0) + " s (" + std::to_string(n) + " samples)");
      }
    }
    setCondition(g, "starvation", std::move(st), now);
  }

  // straggler: idle while (almost) every peer is busy
  {
    const int need = std::max(c.straggler_min_peers, (others * 3 + 3) / 4);
    setCondition(
        g, "straggler",
        valid(util) && util <= c.straggler_idle_util && others > 0 && busy_peers >= need
            ? cond(Severity::Warning,
                   gpuName + " is idle (" + fmt(util) + " %) while " + std::to_string(busy_peers) + " of its " +
                       std::to_string(others) + " peers are busy.",
                   "Check the job's placement and this rank (hung rank, CUDA_VISIBLE_DEVICES, failed worker); the "
                   "whole job runs at the straggler's pace.",
                   "gpu_util=" + fmt(util) + " busy_peers=" + std::to_string(busy_peers) + "/" + std::to_string(others))
            : C(),
        now);
  }
}

void RuleEngine::observeProcesses(unsigned gpu_index, const std::vector<ProcessSample>& processes, std::int64_t now) {
  std::lock_guard lock(mu_);
  GpuState* g = nullptr;
  for (auto& p : gpus_)
    if (!p->id.is_mig && p->id.index == gpu_index) g = p.get();
  if (!g) return;
  platform::FsRoot root(proc_root_);
  std::uint64_t bytes = 0;
  std::string pids;
  for (const auto& p : processes) {
    if (p.pid == 0 || root.exists("/proc/" + std::to_string(p.pid))) continue;
    bytes += p.used_bytes;
    pids += (pids.empty() ? "" : ",") + std::to_string(p.pid);
  }
  std::optional<Condition> c;
  if (!pids.empty())
    c = Condition{Severity::Warning,
                  "GPU " + std::to_string(g->id.index) + " memory (" + gib(bytes) +
                      ") is held by process(es) that no longer exist (pid " + pids + ").",
                  "Find and kill the leftover process (fuser -v /dev/nvidia*), or reset the GPU (nvidia-smi -r) once "
                  "it is free; jobs see 'CUDA out of memory' until then.",
                  "pids=" + pids + " used_bytes=" + std::to_string(bytes), ""};
  setCondition(*g, "zombie_process", std::move(c), now);
}

void RuleEngine::onEvent(const events::GpuEvent& e) {
  std::lock_guard lock(mu_);
  if (!applyEvent(e) && unmatched_events_.size() < 256) unmatched_events_.push_back(e);
}

bool RuleEngine::applyEvent(const events::GpuEvent& e) {
  GpuState* g = nullptr;
  if (!e.gpu_uuid.empty()) {
    auto it = by_uuid_.find(e.gpu_uuid);
    if (it != by_uuid_.end()) g = it->second;
  }
  if (!g && e.gpu_index >= 0)
    for (auto& p : gpus_)
      if (!p->id.is_mig && static_cast<int>(p->id.index) == e.gpu_index) g = p.get();
  if (!g && !e.pci_bus_id.empty())
    for (auto& p : gpus_)
      if (!p->id.is_mig && p->id.pci_bus_id == e.pci_bus_id) g = p.get();
  if (!g) return false;
  switch (e.kind) {
    case events::EventKind::Xid: {
      auto& x = g->xids[e.code];
      if (x.count == 0) x.first = e.timestamp_ms;
      x.last = std::max(x.last, e.timestamp_ms);
      ++x.count;
      x.message = e.message;
      if (e.code == 79) g->fell_off_bus_ms = e.timestamp_ms;
      break;
    }
    case events::EventKind::FallenOffBus:
      g->fell_off_bus_ms = e.timestamp_ms;
      break;
    case events::EventKind::EccDoubleBit:
      g->dbe_event_ms = e.timestamp_ms;
      break;
    default:
      break;
  }
  return true;
}

void RuleEngine::setNvmlInitError(int nvml_code, std::int64_t now) {
  std::lock_guard lock(mu_);
  if (nvml_code != nvml_init_error_) nvml_init_error_since_ = now;
  nvml_init_error_ = nvml_code;
}

// ---------------------------------------------------------------------------------------------
// Evaluation

Finding RuleEngine::makeFinding(const GpuState& g, const std::string& rule, const Current& cur) const {
  Finding f;
  f.rule = rule;
  f.gpu_index = static_cast<int>(g.id.index);
  f.gpu_uuid = g.id.uuid;
  f.severity = cur.cond.severity;
  f.summary = cur.cond.summary;
  f.action = cur.cond.action;
  f.evidence = cur.cond.evidence;
  f.kb_id = kbFor(rule);
  f.key = rule + "|" + g.id.uuid;
  f.sticky = stickyRule(rule);
  f.since_ms = cur.since;
  return f;
}

std::vector<Finding> RuleEngine::evaluate(std::int64_t now) {
  std::lock_guard lock(mu_);
  std::vector<Finding> out;
  // app-fault Xid counts per GPU, for the repeat escalation
  std::map<const GpuState*, int> appXids;
  for (const auto& g : gpus_)
    for (const auto& [code, x] : g->xids)
      if (knowledge::lookupXid(code).applicationFault && now - x.last <= config_.xid_active_ms)
        appXids[g.get()] += x.count;

  for (const auto& gp : gpus_) {
    const GpuState& g = *gp;
    for (const auto& [rule, cur] : g.active)
      if (now - cur.since >= holdFor(config_, rule)) out.push_back(makeFinding(g, rule, cur));
    if (config_.disabled.count("xid")) continue;
    for (const auto& [code, x] : g.xids) {
      if (now - x.last > config_.xid_active_ms) continue;
      const knowledge::XidInfo info = knowledge::lookupXid(code);
      Finding f;
      f.rule = "xid";
      f.xid = code;
      f.gpu_index = static_cast<int>(g.id.index);
      f.gpu_uuid = g.id.uuid;
      f.key = "xid|" + g.id.uuid + "|" + std::to_string(code);
      f.since_ms = x.first;
      const auto sev = info.severity;
      f.severity = sev == knowledge::XidSeverity::kInfo       ? Severity::Info
                   : sev == knowledge::XidSeverity::kWarning  ? Severity::Warning
                   : sev == knowledge::XidSeverity::kCritical ? Severity::Critical
                                                              : Severity::Fatal;
      f.summary =
          "Xid " + std::to_string(code) + " on GPU " + std::to_string(g.id.index) + ": " + std::string(info.meaning);
      f.action = std::string(knowledge::describe(info.action));
      f.evidence = "xid=" + std::to_string(code) + " count=" + std::to_string(x.count) +
                   (x.message.empty() ? "" : " message=\"" + x.message + "\"");
      f.sticky = !info.applicationFault;
      if (info.applicationFault) {
        f.severity = Severity::Info;  // the application's fault: never marks the GPU bad alone
        int peersWithApp = 0;
        for (const auto& [pg, n] : appXids)
          if (pg != &g && n > 0) ++peersWithApp;
        if (config_.app_xid_repeat > 0 && appXids[&g] >= config_.app_xid_repeat && peersWithApp == 0 &&
            gpus_.size() > 1) {
          f.severity = Severity::Warning;
          f.summary +=
              " It repeats on this GPU only (" + std::to_string(appXids[&g]) + " times) while its peers run clean.";
          f.action = std::string(knowledge::describe(info.escalation));
        }
      }
      auto ex = knowledge::explainXid(code);
      if (!ex.related.empty()) f.kb_id = std::string(ex.related.front()->id);
      out.push_back(std::move(f));
    }
  }
  // node-wide
  if (!config_.disabled.count("gpu_count") && count_short_since_ >= 0 &&
      now - count_short_since_ >= config_.gpu_count_hold_ms) {
    Finding f;
    f.rule = "gpu_count";
    f.severity = Severity::Critical;
    f.summary = "The node shows " + std::to_string(visible_gpus_) + " GPUs, fewer than the " +
                std::to_string(config_.expected_gpus) + " expected.";
    f.action =
        "Check lspci and the kernel log for GPUs that fell off the bus or failed to initialise; reseat or replace the "
        "missing GPU.";
    f.evidence = "visible=" + std::to_string(visible_gpus_) + " expected=" + std::to_string(config_.expected_gpus);
    f.kb_id = kbFor("gpu_count");
    f.key = "gpu_count|node";
    f.since_ms = count_short_since_;
    out.push_back(std::move(f));
  }
  if (!config_.disabled.count("driver_mismatch") && nvml_init_error_ == 18) {
    Finding f;
    f.rule = "driver_mismatch";
    f.severity = Severity::Critical;
    f.summary = "The NVIDIA kernel module and the user-space NVML library are different versions.";
    f.action =
        "Reboot the node (or reload the nvidia kernel modules) so the module matches the library; do not mix driver "
        "packages.";
    f.evidence = "nvmlInit returned 18 (NVML_ERROR_LIB_RM_VERSION_MISMATCH)";
    f.kb_id = kbFor("driver_mismatch");
    f.key = "driver_mismatch|node";
    f.since_ms = nvml_init_error_since_;
    out.push_back(std::move(f));
  }
  std::sort(out.begin(), out.end(), [](const Finding& a, const Finding& b) {
    if (a.severity != b.severity) return a.severity > b.severity;
    return a.key < b.key;
  });
  return out;
}

nlohmann::json RuleEngine::contextSnapshot(const std::string& uuid, std::int64_t now, std::int64_t window_ms) const {
  std::lock_guard lock(mu_);
  nlohmann::json j = nlohmann::json::object();
  auto it = by_uuid_.find(uuid);
  if (it == by_uuid_.end()) return j;
  const GpuState& g = *it->second;
  static constexpr std::array<Col, 15> kCtx{kTemp,  kMemTemp, kPower,  kEnforced, kSmClock,
                                            kMaxSm, kReasons, kPstate, kPcieGen,  kPcieWidth,
                                            kUtil,  kFbUsed,  kSbeVol, kDbeVol,   kReplay};
  j["gpu_index"] = g.id.index;
  j["gpu_uuid"] = g.id.uuid;
  j["state"] = collect::stateName(g.state);
  j["taken_ms"] = now;
  j["window_ms"] = window_ms;
  nlohmann::json at = nlohmann::json::object();
  nlohmann::json series = nlohmann::json::object();
  if (const Sample* s = g.latest()) {
    at["t_ms"] = s->t;
    for (Col c : kCtx)
      if (valid(s->v[c])) at[std::string(kColKeys[c])] = s->v[c];
  }
  for (Col c : kCtx) series[std::string(kColKeys[c])] = nlohmann::json::array();
  g.forEachSince(now - window_ms, [&](const Sample& s) {
    if (s.t > now) return;
    for (Col c : kCtx)
      if (valid(s.v[c])) series[std::string(kColKeys[c])].push_back({s.t, s.v[c]});
  });
  j["at"] = std::move(at);
  j["series"] = std::move(series);
  return j;
}

}  // namespace gw::health
