#include "health/rules.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "health/rule.h"
#include "health/rule_registry.h"

namespace gw::health {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

const std::vector<const fields::Field*>& colFields() {
  static const std::vector<const fields::Field*> f = [] {
    std::vector<const fields::Field*> v;
    for (auto k : kColKeys) v.push_back(fields::findByKey(k));
    return v;
  }();
  return f;
}

}  // namespace

std::string fmt(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string trimmed(double v, int max_decimals) {
  std::string s = fmt(v, max_decimals);
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s;
}

std::string hex(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string gib(std::uint64_t bytes) { return fmt(static_cast<double>(bytes) / (1024.0 * 1024 * 1024), 1) + " GiB"; }

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
    // A list or mapping as a key (`? [a]`) names no setting (as<string> would throw past here).
    if (!keyNode.IsScalar()) return Status::Error(where(keyNode) + "expected a setting name, got a collection");
    const std::string name = keyNode.Scalar();
    try {
      if (name == "disabled") {
        if (!v.IsSequence()) return Status::Error(where(v) + "disabled: expected a list of rule names");
        for (const auto& r : v) {
          auto rn = r.as<std::string>();
          if (!findRule(rn)) return Status::Error(where(r) + "disabled: unknown rule '" + rn + "'");
          c.disabled.insert(rn);
        }
        continue;
      }
      if (name == "pcie_replay_per_min") {
        if (!v.IsSequence() || v.size() != c.pcie_replay_per_min.size())
          return Status::Error(where(v) + "pcie_replay_per_min: expected a list of 5 numbers (Gen1..Gen5)");
        for (std::size_t k = 0; k < v.size(); ++k) {
          c.pcie_replay_per_min[k] = v[k].as<double>();
          if (!(c.pcie_replay_per_min[k] >= 0))  // NaN too: a NaN limit is never exceeded
            return Status::Error(where(v[k]) + name + ": must be a number, not negative");
        }
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
      // .nan passes `< 0` and turns every comparison with the threshold false: the rule never fires.
      if (k->d && std::isnan(*k->d)) return Status::Error(where(v) + name + ": must be a number, not .nan");
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

const Sample* GpuHistory::latest() const { return count ? &ring[(head + ring.size() - 1) % ring.size()] : nullptr; }

const Sample* GpuHistory::firstSince(std::int64_t since) const {
  for (std::size_t k = 0; k < count; ++k) {
    const Sample& s = ring[(head + ring.size() - count + k) % ring.size()];
    if (s.t >= since) return &s;
  }
  return nullptr;
}

void GpuHistory::push(const Sample& s) {
  const Sample* last = latest();
  if (last && s.t - last->t < RuleEngine::kMinSampleGapMs && s.t >= last->t) {
    ring[(head + ring.size() - 1) % ring.size()] = s;  // merge: keep the newest values
    return;
  }
  ring[head] = s;
  head = (head + 1) % ring.size();
  if (count < ring.size()) ++count;
}

struct RuleEngine::GpuState : GpuHistory {
  std::map<std::string, Current> active;  // conditions true now, by rule
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
  auto it = by_uuid_.find(id.key());
  if (it != by_uuid_.end()) {
    it->second->id = id;
    return *it->second;
  }
  gpus_.push_back(std::make_unique<GpuState>());
  GpuState* g = gpus_.back().get();
  g->id = id;
  by_uuid_[id.key()] = g;
  return *g;
}

void RuleEngine::setCondition(std::map<std::string, Current>& active, const std::string& rule,
                              std::optional<Condition> c, std::int64_t now) {
  if (!c || config_.disabled.count(rule)) {
    active.erase(rule);
    return;
  }
  auto it = active.find(rule);
  if (it == active.end()) {
    active.emplace(rule, Current{std::move(*c), now});
  } else {
    it->second.cond = std::move(*c);
  }
}

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
    if (v.id.is_mig) continue;
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
  // 2. evaluate each GPU against its peers in this pass
  for (auto& [g, v] : seen) {
    std::vector<const GpuHistory*> peers;
    for (auto& [o, ov] : seen)
      if (o != g) peers.push_back(o);
    RuleContext ctx{.config = config_, .now = now, .gpu = g, .view = v, .peers = peers};
    for (const Rule* r : ruleRegistry())
      if (r->scope == RuleScope::kGpuState) setCondition(g->active, std::string(r->info.name), r->evaluate(ctx), now);
    if (v->state != collect::GpuState::Up) {
      // Values are stale: clear the value-based conditions that are not latched facts.
      for (auto it = g->active.begin(); it != g->active.end();) {
        const Rule* r = findRule(it->first);
        if (r && (r->scope == RuleScope::kGpuState || r->info.sticky))
          ++it;
        else
          it = g->active.erase(it);
      }
      continue;
    }
    if (!g->latest()) continue;
    for (const Rule* r : ruleRegistry())
      if (r->scope == RuleScope::kSample) setCondition(g->active, std::string(r->info.name), r->evaluate(ctx), now);
  }
  evaluateNode(now);
}

void RuleEngine::evaluateNode(std::int64_t now) {
  const NodeFacts node{.visible_gpus = visible_gpus_, .nvml_init_error = nvml_init_error_};
  const RuleContext ctx{.config = config_, .now = now, .node = &node};
  for (const Rule* r : ruleRegistry())
    if (r->scope == RuleScope::kNode) setCondition(node_active_, std::string(r->info.name), r->evaluate(ctx), now);
}

void RuleEngine::observeProcesses(unsigned gpu_index, const std::vector<ProcessSample>& processes, std::int64_t now) {
  std::lock_guard lock(mu_);
  GpuState* g = nullptr;
  for (auto& p : gpus_)
    if (!p->id.is_mig && p->id.index == gpu_index) g = p.get();
  if (!g) return;
  const RuleContext ctx{.config = config_, .now = now, .gpu = g, .processes = &processes, .proc_root = proc_root_};
  for (const Rule* r : ruleRegistry())
    if (r->scope == RuleScope::kProcesses) setCondition(g->active, std::string(r->info.name), r->evaluate(ctx), now);
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
  nvml_init_error_ = nvml_code;
  evaluateNode(now);
}

// ---------------------------------------------------------------------------------------------
// Evaluation

Finding RuleEngine::makeFinding(const GpuState* g, const std::string& rule, const Current& cur) const {
  const Rule* r = findRule(rule);
  Finding f;
  f.rule = rule;
  if (g) {
    f.gpu_index = static_cast<int>(g->id.index);
    f.gpu_uuid = g->id.uuid;
  }
  f.severity = cur.cond.severity;
  f.summary = cur.cond.summary;
  f.action = cur.cond.action;
  f.evidence = cur.cond.evidence;
  f.kb_id = cur.cond.kb_id ? *cur.cond.kb_id : std::string(r ? r->info.kb_id : "");
  f.key = rule + "|" + (g ? g->id.key() : std::string("node"));
  f.sticky = cur.cond.sticky ? *cur.cond.sticky : r && r->info.sticky;
  f.since_ms = cur.since;
  return f;
}

std::vector<Finding> RuleEngine::evaluate(std::int64_t now) {
  std::lock_guard lock(mu_);
  std::vector<Finding> out;
  auto held = [&](const std::string& rule, const Current& cur) {
    const Rule* r = findRule(rule);
    const std::int64_t hold = r && r->info.hold ? config_.*(r->info.hold) : 0;
    return now - cur.since >= hold;
  };
  for (const auto& gp : gpus_) {
    const GpuState& g = *gp;
    for (const auto& [rule, cur] : g.active)
      if (held(rule, cur)) out.push_back(makeFinding(&g, rule, cur));
    std::vector<const GpuHistory*> peers;
    for (const auto& o : gpus_)
      if (o.get() != &g) peers.push_back(o.get());
    for (const Rule* r : ruleRegistry()) {
      if (r->scope != RuleScope::kXid || config_.disabled.count(std::string(r->info.name))) continue;
      for (const auto& [code, x] : g.xids) {
        const RuleContext ctx{.config = config_, .now = now, .gpu = &g, .peers = peers, .xid = code};
        auto c = r->evaluate(ctx);
        if (!c) continue;
        Finding f = makeFinding(&g, std::string(r->info.name), Current{std::move(*c), x.first});
        f.key += "|" + std::to_string(code);
        f.xid = code;
        out.push_back(std::move(f));
      }
    }
  }
  for (const auto& [rule, cur] : node_active_)
    if (held(rule, cur)) out.push_back(makeFinding(nullptr, rule, cur));
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
