#include "node/health_json.h"

#include <algorithm>

#include "health/rule_registry.h"
#include "platform/clock.h"
#include "platform/bounded_json.h"

namespace gw::node {

using json = nlohmann::json;

health::HealthState stateOfSeverity(health::Severity s) {
  switch (s) {
    case health::Severity::Info:
      return health::HealthState::Healthy;
    case health::Severity::Warning:
      return health::HealthState::Warning;
    case health::Severity::Critical:
      return health::HealthState::Critical;
    case health::Severity::Fatal:
      return health::HealthState::Fatal;
  }
  return health::HealthState::Unknown;
}

json findingJson(const health::Finding& f) {
  return json{{"rule", f.rule},         {"gpu_index", f.gpu_index},
              {"gpu_uuid", f.gpu_uuid}, {"severity", std::string(health::severityName(f.severity))},
              {"summary", f.summary},   {"action", f.action},
              {"kb_id", f.kb_id},       {"evidence", f.evidence},
              {"key", f.key},           {"sticky", f.sticky},
              {"since_ms", f.since_ms}, {"xid", f.xid}};
}

json incidentJson(const health::Incident& i, bool with_context) {
  json j{{"id", i.id},
         {"key", i.key},
         {"rule", i.rule},
         {"gpu_index", i.gpu_index},
         {"gpu_uuid", i.gpu_uuid},
         {"severity", std::string(health::severityName(i.severity))},
         {"status", std::string(health::statusName(i.status))},
         {"summary", i.summary},
         {"action", i.action},
         {"kb_id", i.kb_id},
         {"evidence", i.evidence},
         {"xid", i.xid},
         {"sticky", i.sticky},
         {"escalated", i.escalated},
         {"opened_ms", i.opened_ms},
         {"opened", platform::formatRfc3339(i.opened_ms)},
         {"last_seen_ms", i.last_seen_ms},
         {"updated_ms", i.updated_ms},
         {"resolved_ms", i.resolved_ms},
         {"resolved_by", i.resolved_by},
         {"occurrences", i.occurrences}};
  if (with_context) {
    json ctx = json::object();
    if (!i.context_json.empty()) {
      auto parsed = platform::parseBounded(i.context_json);
      ctx = parsed ? std::move(parsed).value() : json(i.context_json);
    }
    j["context"] = ctx;
  }
  return j;
}

std::string alertId(const health::Incident& i) {
  std::string id = i.rule + "/" + i.gpu_uuid;
  if (i.xid != 0) id += "/" + std::to_string(i.xid);
  return id;
}

alert::Alert incidentAlert(const health::Incident& i, const AlertLabelling& how, std::int64_t resolved_ms) {
  alert::Alert a;
  a.id = alertId(i);
  a.rule = i.rule;
  a.severity = std::string(health::severityName(i.severity));
  a.summary = i.summary;
  a.action = i.action;
  a.gpu_uuid = i.gpu_uuid;
  a.gpu_index = i.gpu_index;
  a.hostname = how.hostname;
  a.labels["alertname"] = health::alertName(i.rule);
  a.labels["severity"] = a.severity;
  a.labels["component"] = "gpu";
  if (!how.hostname.empty()) a.labels["instance"] = how.hostname;
  if (i.gpu_index >= 0) a.labels["gpu"] = std::to_string(i.gpu_index);
  if (!i.gpu_uuid.empty()) a.labels["UUID"] = i.gpu_uuid;
  if (i.xid != 0) a.labels["code"] = std::to_string(i.xid);
  a.annotations["summary"] = i.summary;
  a.annotations["action"] = i.action;
  if (!i.kb_id.empty()) {
    a.annotations["kb_id"] = i.kb_id;
    if (!how.runbook_base.empty()) a.annotations["runbook_url"] = how.runbook_base + "#" + i.kb_id;
  }
  a.starts_at_ms = i.opened_ms;
  a.ends_at_ms = resolved_ms;
  return a;
}

json healthVerdict(const std::vector<collect::GpuView>& views, const std::vector<health::Finding>& findings,
                   const std::vector<std::pair<collect::GpuIdentity, health::HealthState>>* states) {
  using health::HealthState;
  HealthState overall = HealthState::Healthy;
  json gpus = json::array();
  for (const auto& v : views) {
    if (v.id.is_mig) continue;
    HealthState st = HealthState::Healthy;
    if (states) {
      for (const auto& [id, s] : *states)
        if (id.key() == v.id.key()) st = s;
    }
    json fj = json::array();
    HealthState from_findings = HealthState::Healthy;
    for (const auto& f : findings) {
      if (!v.id.names(f.gpu_uuid, f.gpu_index)) continue;
      fj.push_back(findingJson(f));
      from_findings = health::worstOf(from_findings, stateOfSeverity(f.severity));
    }
    if (st == HealthState::Unknown) {
      if (from_findings != HealthState::Healthy) st = from_findings;
    } else {
      st = health::worstOf(st, from_findings);
      if (st == HealthState::Healthy && v.state != collect::GpuState::Up) st = HealthState::Unknown;
    }
    overall = health::worstOf(overall, st);
    gpus.push_back(json{{"index", v.id.index},
                        {"uuid", v.id.uuid},
                        {"name", v.id.name},
                        {"pci_bus_id", v.id.pci_bus_id},
                        {"gpu_state", collect::stateName(v.state)},
                        {"state", std::string(health::healthStateName(st))},
                        {"findings", fj}});
  }
  json node = json::array();
  for (const auto& f : findings) {
    bool matched = std::any_of(views.begin(), views.end(), [&](const collect::GpuView& v) {
      return !v.id.is_mig && v.id.names(f.gpu_uuid, f.gpu_index);
    });
    if (matched) continue;
    node.push_back(findingJson(f));
    overall = health::worstOf(overall, stateOfSeverity(f.severity));
  }
  if (views.empty() && node.empty()) overall = HealthState::Unknown;
  return json{{"status", std::string(health::healthStateName(overall))},
              {"exit_code", health::healthExitCode(overall)},
              {"gpus", gpus},
              {"node_findings", node}};
}

}  // namespace gw::node
