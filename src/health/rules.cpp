#include "health/rules.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

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
// Workload class

namespace {

// From the utilisation over the starvation window (the same samples the starvation rule judges):
// nearly all below the band is idle; a wide spread is inference, whose load follows the requests;
// a steady level is training. Interactive work is never inferred (bursts between idle stretches
// look like a sparse inference server) and has no rule of its own to change: it is set.
WorkloadView inferWorkload(const GpuHistory& g, const RuleConfig& c, std::int64_t now) {
  WorkloadView w{.source = "inferred"};
  const Sample* old = g.firstSince(now - c.starvation_window_ms);
  std::vector<double> u;
  g.forEachSince(now - c.starvation_window_ms, [&](const Sample& s) {
    if (valid(s.v[kUtil])) u.push_back(s.v[kUtil]);
  });
  if (!(old && now - old->t >= c.starvation_window_ms * 9 / 10 && u.size() >= 10)) {
    w.basis = "too little history";
    return w;
  }
  std::sort(u.begin(), u.end());
  // Nearest-rank percentiles: a value that was observed, never an interpolation.
  auto pct = [&](double p) {
    const auto rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(u.size())));
    return u[std::clamp<std::size_t>(rank, 1, u.size()) - 1];
  };
  const double p10 = pct(0.1), p90 = pct(0.9);
  const auto below = std::count_if(u.begin(), u.end(), [&](double x) { return x < c.swing_low; });
  const std::string spread = "util p10-p90 " + fmt(p10) + "-" + fmt(p90) + " %";
  if (static_cast<double>(below) >= 0.9 * static_cast<double>(u.size())) {
    w.cls = WorkloadClass::kIdle;
    w.basis = spread + ", below " + trimmed(c.swing_low) + " %";
  } else if (p90 - p10 >= c.inference_spread) {
    w.cls = WorkloadClass::kInference;
    w.basis = spread + ", spread ≥ " + trimmed(c.inference_spread);
  } else {
    w.cls = WorkloadClass::kTraining;
    w.basis = spread + ", steady (spread < " + trimmed(c.inference_spread) + ")";
  }
  return w;
}

WorkloadView resolveWorkload(const std::map<std::string, WorkloadClass>& scheduled, const RuleConfig& c,
                             const GpuHistory& g, std::int64_t now) {
  if (auto it = scheduled.find(g.id.uuid); it != scheduled.end()) return {.cls = it->second, .source = "scheduler"};
  for (const std::string& key : {g.id.uuid, std::to_string(g.id.index)})
    if (auto it = c.workload_by_gpu.find(key); it != c.workload_by_gpu.end())
      return {.cls = it->second, .source = "configured"};
  if (c.workload) return {.cls = *c.workload, .source = "configured"};
  return inferWorkload(g, c, now);
}

}  // namespace

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
  if (last && s.t - slot_start < RuleEngine::kMinSampleGapMs && s.t >= last->t) {
    ring[(head + ring.size() - 1) % ring.size()] = s;  // merge: keep the newest values
    return;
  }
  slot_start = s.t;
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
    const WorkloadView workload = resolveWorkload(scheduled_, config_, *g, now);
    RuleContext ctx{.config = config_, .now = now, .gpu = g, .view = v, .peers = peers, .workload = &workload};
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
  const WorkloadView workload = resolveWorkload(scheduled_, config_, *g, now);
  const RuleContext ctx{
      .config = config_, .now = now, .gpu = g, .processes = &processes, .proc_root = proc_root_, .workload = &workload};
  for (const Rule* r : ruleRegistry())
    if (r->scope == RuleScope::kProcesses) setCondition(g->active, std::string(r->info.name), r->evaluate(ctx), now);
}

RuleConfig RuleEngine::config() const {
  std::lock_guard lock(mu_);
  return config_;
}

void RuleEngine::setConfig(RuleConfig config) {
  std::lock_guard lock(mu_);
  config_ = std::move(config);
  // A rule switched off stops reporting now, not at its GPU's next observation.
  for (auto& g : gpus_)
    for (const auto& name : config_.disabled) g->active.erase(name);
  for (const auto& name : config_.disabled) node_active_.erase(name);
}

void RuleEngine::setWorkload(const std::string& gpu_uuid, std::optional<WorkloadClass> cls) {
  std::lock_guard lock(mu_);
  if (cls && *cls != WorkloadClass::kUnknown)
    scheduled_[gpu_uuid] = *cls;
  else
    scheduled_.erase(gpu_uuid);
}

WorkloadView RuleEngine::workloadOf(const std::string& gpu_uuid, std::int64_t now) const {
  std::lock_guard lock(mu_);
  auto it = by_uuid_.find(gpu_uuid);
  if (it == by_uuid_.end()) return {};
  return resolveWorkload(scheduled_, config_, *it->second, now);
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
