// The health configuration: every key of RuleConfig once, with its type, range and meaning. The
// parser (a standalone rules file, or the agent's `health:` section), the error messages and
// docs/health.md's key table all read this one table.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "health/rule.h"
#include "health/rule_registry.h"

namespace gw::health {

std::string_view workloadName(WorkloadClass c) {
  switch (c) {
    case WorkloadClass::kTraining:
      return "training";
    case WorkloadClass::kInference:
      return "inference";
    case WorkloadClass::kInteractive:
      return "interactive";
    case WorkloadClass::kIdle:
      return "idle";
    case WorkloadClass::kUnknown:
      break;
  }
  return "unknown";
}

std::optional<WorkloadClass> parseWorkloadClass(std::string_view s) {
  for (auto c :
       {WorkloadClass::kTraining, WorkloadClass::kInference, WorkloadClass::kInteractive, WorkloadClass::kIdle})
    if (workloadName(c) == s) return c;
  return std::nullopt;
}

std::string WorkloadView::describe() const {
  std::string out(workloadName(cls));
  if (!source.empty()) out += " (" + source + (basis.empty() ? "" : ": " + basis) + ")";
  return out;
}

namespace {

// Windows are read from the ring buffer, so none may be longer than it holds at the fastest
// sampling it keeps apart.
constexpr double kMaxWindowMs = RuleEngine::kRingCapacity * RuleEngine::kMinSampleGapMs;
constexpr double kMaxHoldMs = 7.0 * 86'400'000;

enum class Kind { kNumber, kMillis, kCount, kBool };

struct Key {
  std::string_view name;
  Kind kind = Kind::kNumber;
  double RuleConfig::*d = nullptr;
  std::int64_t RuleConfig::*ms = nullptr;
  int RuleConfig::*i = nullptr;
  bool RuleConfig::*b = nullptr;
  double min = 0, max = 0;
  std::string_view unit{};  // shown after the default and the range
  std::string_view meaning{};
};

constexpr Key pct(std::string_view name, double RuleConfig::*m, std::string_view meaning) {
  return {.name = name, .d = m, .min = 0, .max = 100, .unit = " %", .meaning = meaning};
}
constexpr Key frac(std::string_view name, double RuleConfig::*m, std::string_view meaning) {
  return {.name = name, .d = m, .min = 0, .max = 1, .meaning = meaning};
}
constexpr Key celsius(std::string_view name, double RuleConfig::*m, std::string_view meaning) {
  return {.name = name, .d = m, .min = 0, .max = 150, .unit = " °C", .meaning = meaning};
}
constexpr Key count(std::string_view name, double RuleConfig::*m, double max, std::string_view meaning) {
  return {.name = name, .d = m, .min = 0, .max = max, .meaning = meaning};
}
constexpr Key hold(std::string_view name, std::int64_t RuleConfig::*m, std::string_view meaning) {
  return {.name = name, .kind = Kind::kMillis, .ms = m, .min = 0, .max = kMaxHoldMs, .unit = " ms", .meaning = meaning};
}
constexpr Key window(std::string_view name, std::int64_t RuleConfig::*m, std::string_view meaning) {
  return {.name = name,
          .kind = Kind::kMillis,
          .ms = m,
          .min = 10'000,
          .max = kMaxWindowMs,
          .unit = " ms",
          .meaning = meaning};
}

using C = RuleConfig;

const std::vector<Key>& keys() {
  static const std::vector<Key> k = {
      pct("load_util", &C::load_util, "a GPU at or above this utilisation is under load"),
      pct("full_load_util", &C::full_load_util, "full load, for `power_low_under_load`"),
      pct("idle_util", &C::idle_util, "a GPU at or below this utilisation is idle"),
      celsius("gpu_temp_c", &C::gpu_temp_c, "core temperature warning"),
      celsius("memory_temp_c", &C::memory_temp_c, "memory (HBM) temperature warning"),
      hold("temperature_hold_ms", &C::temperature_hold_ms, "hold of `gpu_temperature` and `memory_temperature`"),
      hold("thermal_hold_ms", &C::thermal_hold_ms, "hold of `thermal_slowdown`"),
      frac("thermal_clock_drop", &C::thermal_clock_drop, "share of the SM clock lost that makes a thermal slowdown"),
      frac("low_power_fraction", &C::low_power_fraction, "power below this share of the enforced limit at full load"),
      hold("low_power_hold_ms", &C::low_power_hold_ms, "hold of `power_low_under_load`"),
      {.name = "idle_power_w",
       .d = &C::idle_power_w,
       .min = 0,
       .max = 2000,
       .unit = " W",
       .meaning = "power of an idle GPU above which `idle_power_high` fires"},
      hold("idle_power_hold_ms", &C::idle_power_hold_ms, "hold of `idle_power_high`"),
      hold("power_slowdown_hold_ms", &C::power_slowdown_hold_ms, "hold of `power_slowdown`"),
      frac("power_cap_fraction", &C::power_cap_fraction, "enforced limit below this share of the default: capped"),
      hold("power_cap_hold_ms", &C::power_cap_hold_ms, "hold of `power_capped`"),
      count("retired_pages_max", &C::retired_pages_max, 1e6, "retired pages (SBE + DBE) that call for a replacement"),
      count("remap_uncorrectable_max", &C::remap_uncorrectable_max, 1e6,
            "rows remapped for uncorrectable errors that call for a replacement"),
      hold("memory_hold_ms", &C::memory_hold_ms, "hold of the ECC, retired-page, row-remap and recovery-action rules"),
      count("sbe_rise_max", &C::sbe_rise_max, 1e9, "volatile SBE rise within `sbe_window_ms`"),
      window("sbe_window_ms", &C::sbe_window_ms, "window of `sbe_rise_max`"),
      hold("pcie_hold_ms", &C::pcie_hold_ms, "hold of `pcie_downtrain` and `pcie_replay`"),
      window("pcie_replay_window_ms", &C::pcie_replay_window_ms, "window the PCIe replay rate is measured over"),
      hold("nvlink_hold_ms", &C::nvlink_hold_ms, "hold of `nvlink_down` and `nvlink_errors`"),
      count("nvlink_error_max", &C::nvlink_error_max, 1e9, "NVLink error rise within `nvlink_window_ms`"),
      window("nvlink_window_ms", &C::nvlink_window_ms, "window of `nvlink_error_max`"),
      hold("fabric_hold_ms", &C::fabric_hold_ms, "hold of `fabric`"),
      {.name = "pstate_slow",
       .d = &C::pstate_slow,
       .min = 1,
       .max = 15,
       .meaning = "P-state at or above which a GPU under load is in a power-saving state"},
      hold("pstate_hold_ms", &C::pstate_hold_ms, "hold of `pstate_under_load`"),
      celsius("fan_min_temp_c", &C::fan_min_temp_c, "a stopped fan on a board at least this warm is broken"),
      hold("fan_hold_ms", &C::fan_hold_ms, "hold of `fan_failure`"),
      window("starvation_window_ms", &C::starvation_window_ms,
             "window of `starvation` (its hold) and of the workload inference"),
      pct("starvation_util_max", &C::starvation_util_max, "training sustained below this is starved"),
      pct("swing_low", &C::swing_low, "low edge of the starvation band (below: nothing runs)"),
      pct("swing_high", &C::swing_high, "a band at or below this is \"swinging\" (3-20 %)"),
      frac("starvation_fraction", &C::starvation_fraction, "share of the window's samples that must be in the band"),
      {.name = "inference_spread",
       .d = &C::inference_spread,
       .min = 0,
       .max = 100,
       .unit = " points",
       .meaning = "utilisation spread (p90 − p10) at or above which an unconfigured GPU is inferred to serve "
                  "inference"},
      pct("straggler_idle_util", &C::straggler_idle_util, "a straggler's utilisation"),
      pct("straggler_peer_util", &C::straggler_peer_util, "a busy peer's utilisation"),
      hold("straggler_hold_ms", &C::straggler_hold_ms, "hold of `straggler`"),
      {.name = "straggler_min_peers",
       .kind = Kind::kCount,
       .i = &C::straggler_min_peers,
       .min = 1,
       .max = 1024,
       .meaning = "busy peers needed at least"},
      hold("zombie_hold_ms", &C::zombie_hold_ms, "hold of `zombie_process`"),
      {.name = "leftover_min_gib",
       .d = &C::leftover_min_gib,
       .min = 0,
       .max = 4096,
       .unit = " GiB",
       .meaning = "memory live processes must hold on an idle GPU for `leftover_process`"},
      window("leftover_window_ms", &C::leftover_window_ms, "how long the GPU must be idle (the rule's hold)"),
      hold("lost_hold_ms", &C::lost_hold_ms, "hold of `gpu_lost`"),
      hold("stalled_hold_ms", &C::stalled_hold_ms, "hold of `gpu_stalled`"),
      {.name = "expected_gpus",
       .kind = Kind::kCount,
       .i = &C::expected_gpus,
       .min = 0,
       .max = 1024,
       .meaning = "GPUs the node must show; fewer is critical (`gpu_count`); 0: not checked"},
      hold("gpu_count_hold_ms", &C::gpu_count_hold_ms, "hold of `gpu_count`"),
      {.name = "require_persistence",
       .kind = Kind::kBool,
       .b = &C::require_persistence,
       .meaning = "`persistence_off` fires on a GPU with persistence mode off"},
      hold("persistence_hold_ms", &C::persistence_hold_ms, "hold of `persistence_off`"),
      {.name = "xid_active_ms",
       .kind = Kind::kMillis,
       .ms = &C::xid_active_ms,
       .min = 0,
       .max = kMaxHoldMs,
       .unit = " ms",
       .meaning = "an Xid stays a current finding this long after it was seen"},
      {.name = "app_xid_repeat",
       .kind = Kind::kCount,
       .i = &C::app_xid_repeat,
       .min = 1,
       .max = 1'000'000,
       .meaning = "application-fault Xids on one GPU (peers clean) that make a warning"},
  };
  return k;
}

std::string num(double v) { return trimmed(v, 3); }

std::string defaultText(const Key& k) {
  const RuleConfig d;
  switch (k.kind) {
    case Kind::kNumber:
      return num(d.*(k.d)) + std::string(k.unit);
    case Kind::kMillis:
      return std::to_string(d.*(k.ms)) + std::string(k.unit);
    case Kind::kCount:
      return std::to_string(d.*(k.i));
    case Kind::kBool:
      return d.*(k.b) ? "true" : "false";
  }
  return "";
}

std::string rangeText(const Key& k) {
  if (k.kind == Kind::kBool) return "true, false";
  return num(k.min) + " – " + num(k.max) + std::string(k.unit);
}

std::string between(const Key& k) {
  return "must be between " + num(k.min) + " and " + num(k.max) + std::string(k.unit);
}

std::string classList() { return "training, inference, interactive or idle"; }

// Reads one scalar into the key's member; "" or the reason it cannot.
std::string readKey(const Key& k, const YAML::Node& v, RuleConfig& c) {
  const std::string& s = v.Scalar();
  switch (k.kind) {
    case Kind::kBool:
      if (s == "true" || s == "yes" || s == "on") {
        c.*(k.b) = true;
      } else if (s == "false" || s == "no" || s == "off") {
        c.*(k.b) = false;
      } else {
        return "expected true or false, got '" + s + "'";
      }
      return "";
    case Kind::kMillis:
    case Kind::kCount: {
      long long x = 0;
      auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), x);
      if (ec != std::errc() || p != s.data() + s.size())
        return std::string("expected a whole number") + (k.kind == Kind::kMillis ? " of milliseconds" : "") +
               ", got '" + s + "'";
      if (static_cast<double>(x) < k.min || static_cast<double>(x) > k.max) return between(k) + ", got " + s;
      if (k.kind == Kind::kMillis)
        c.*(k.ms) = x;
      else
        c.*(k.i) = static_cast<int>(x);
      return "";
    }
    case Kind::kNumber: {
      double x = 0;
      try {
        x = v.as<double>();
      } catch (const YAML::Exception&) {
        return "expected a number, got '" + s + "'";
      }
      // NaN compares false with everything: a rule with a NaN threshold would never fire.
      if (!(x >= k.min && x <= k.max)) return between(k) + ", got " + s;
      c.*(k.d) = x;
      return "";
    }
  }
  return "internal: no reader";
}

}  // namespace

Result<RuleConfig> parseRuleConfigNode(const YAML::Node& root, std::string_view file, std::string_view prefix) {
  RuleConfig c;
  auto at = [&](const YAML::Node& n, const std::string& field, const std::string& msg) {
    const int line = n.IsDefined() ? n.Mark().line + 1 : 0;
    std::string name = prefix.empty() ? field : std::string(prefix) + (field.empty() ? "" : "." + field);
    return Status::Error(std::string(file) + ":" + std::to_string(line > 0 ? line : 1) + ": " +
                         (name.empty() ? "" : name + ": ") + msg);
  };
  if (!root || root.IsNull()) return c;
  if (!root.IsMap()) return at(root, "", "expected a mapping of health settings");
  for (auto it = root.begin(); it != root.end(); ++it) {
    const YAML::Node keyNode = it->first;  // copies: the iterator's pair is a temporary
    const YAML::Node v = it->second;
    // A list or mapping as a key (`? [a]`) names no setting.
    if (!keyNode.IsScalar()) return at(keyNode, "", "expected a setting name, got a collection");
    const std::string name = keyNode.Scalar();
    if (name == "disabled") {
      if (!v.IsSequence()) return at(v, name, "expected a list of rule names");
      for (const auto& r : v) {
        if (!r.IsScalar()) return at(r, name, "expected a rule name");
        if (!findRule(r.Scalar())) return at(r, name, "unknown rule '" + r.Scalar() + "' (see docs/health.md)");
        c.disabled.insert(r.Scalar());
      }
      continue;
    }
    if (name == "pcie_replay_per_min") {
      if (!v.IsSequence() || v.size() != c.pcie_replay_per_min.size())
        return at(v, name, "expected a list of 5 numbers (Gen1..Gen5)");
      for (std::size_t k = 0; k < v.size(); ++k) {
        double x = -1;
        try {
          x = v[k].as<double>();
        } catch (const YAML::Exception&) {
        }
        if (!(x >= 0 && x <= 1e9))  // NaN too: a NaN limit is never exceeded
          return at(v[k], name + "[" + std::to_string(k) + "]", "expected a number between 0 and 1000000000");
        c.pcie_replay_per_min[k] = x;
      }
      continue;
    }
    if (name == "workload") {
      if (!v.IsScalar()) return at(v, name, "expected " + classList());
      auto cls = parseWorkloadClass(v.Scalar());
      if (!cls) return at(v, name, "expected " + classList() + ", got '" + v.Scalar() + "'");
      c.workload = *cls;
      continue;
    }
    if (name == "workload_by_gpu") {
      if (!v.IsMap()) return at(v, name, "expected a mapping of GPU (index or UUID) to workload class");
      for (const auto& kv : v) {
        if (!kv.first.IsScalar()) return at(kv.first, name, "expected a GPU index or UUID");
        const std::string gpu = kv.first.Scalar();
        unsigned index = 0;
        auto [p, ec] = std::from_chars(gpu.data(), gpu.data() + gpu.size(), index);
        const bool isIndex = ec == std::errc() && p == gpu.data() + gpu.size() && index < 1024;
        if (!isIndex && !gpu.starts_with("GPU-"))
          return at(kv.first, name, "'" + gpu + "' is neither a GPU index (0-1023) nor a GPU UUID (GPU-...)");
        const std::string field = name + "." + gpu;
        if (!kv.second.IsScalar()) return at(kv.second, field, "expected " + classList());
        auto cls = parseWorkloadClass(kv.second.Scalar());
        if (!cls) return at(kv.second, field, "expected " + classList() + ", got '" + kv.second.Scalar() + "'");
        const std::string key = isIndex ? std::to_string(index) : gpu;  // "07" is GPU 7
        if (!c.workload_by_gpu.emplace(key, *cls).second) return at(kv.first, field, "GPU given twice");
      }
      continue;
    }
    auto k = std::find_if(keys().begin(), keys().end(), [&](const Key& x) { return x.name == name; });
    if (k == keys().end()) return at(keyNode, name, "unknown key (see docs/health.md for the keys)");
    if (!v.IsScalar()) return at(v, name, "expected a single value");
    if (std::string why = readKey(*k, v, c); !why.empty()) return at(v, name, why);
  }
  // Orders that the rules assume: the starvation band and its swinging part, idle below load.
  auto node = [&](std::string_view key) { return root[std::string(key)] ? root[std::string(key)] : root; };
  if (!(c.swing_low < c.swing_high && c.swing_high <= c.starvation_util_max))
    return at(node("swing_high"), "swing_high",
              "needs swing_low < swing_high ≤ starvation_util_max (" + num(c.swing_low) + ", " + num(c.swing_high) +
                  ", " + num(c.starvation_util_max) + ")");
  if (!(c.idle_util < c.load_util && c.load_util <= c.full_load_util))
    return at(node("load_util"), "load_util",
              "needs idle_util < load_util ≤ full_load_util (" + num(c.idle_util) + ", " + num(c.load_util) + ", " +
                  num(c.full_load_util) + ")");
  return c;
}

Result<RuleConfig> parseRuleConfig(std::string_view yaml, std::string_view file) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    return Status::Error(std::string(file) + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  return parseRuleConfigNode(root, file, "");
}

std::string renderConfigKeyTableMarkdown() {
  // Which rules read each key: from the registry, so the column cannot disagree with the rules.
  auto usedBy = [](std::string_view key) {
    std::string out;
    for (const Rule* r : ruleRegistry()) {
      const std::string quoted = "`" + std::string(key) + "`";
      bool uses = r->info.config_key == key || r->info.fires_when.find(quoted) != std::string_view::npos;
      for (const Threshold& t : r->info.thresholds) {
        // "thermal_clock_drop (1 − it)", "pcie_replay_per_min[2]": the key and how it is read.
        const bool named =
            t.config_key.starts_with(key) &&
            (t.config_key.size() == key.size() || t.config_key[key.size()] == ' ' || t.config_key[key.size()] == '[');
        uses = uses || named || t.signal.find(quoted) != std::string_view::npos ||
               t.against.find(quoted) != std::string_view::npos;
      }
      if (uses) out += (out.empty() ? "" : ", ") + std::string(r->info.name);
    }
    return out.empty() ? std::string("—") : out;
  };
  std::string md = "| key | default | range | meaning | rules |\n| --- | --- | --- | --- | --- |\n";
  md += "| `disabled` | `[]` | rule names | rules switched off | any |\n";
  md += "| `workload` | inferred | " + classList() +
        " | the workload class of every GPU of the node (see [Workload classes](#workload-classes)) | starvation, "
        "leftover_process |\n";
  md +=
      "| `workload_by_gpu` | — | GPU index or UUID → class | a GPU's own class; wins over `workload` | "
      "starvation, leftover_process |\n";
  md +=
      "| `pcie_replay_per_min` | `[5, 5, 10, 20, 40]` | 5 numbers ≥ 0 | allowed replays a minute at Gen1..Gen5 "
      "(Gen6 uses Gen5's) | pcie_replay |\n";
  for (const Key& k : keys())
    md += "| `" + std::string(k.name) + "` | " + defaultText(k) + " | " + rangeText(k) + " | " +
          std::string(k.meaning) + " | " + usedBy(k.name) + " |\n";
  return md;
}

}  // namespace gw::health
