// One JSON shape for each health object, whether it leaves through HTTP, the control socket or a
// command's --json: findings, incidents, the health verdict, and an incident as an alert.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "alert/alert.h"
#include "collect/gpu_view.h"
#include "health/incidents.h"
#include "health/rules.h"

namespace gw::node {

// health::Severity -> the GPU health state it implies (info counts as healthy).
health::HealthState stateOfSeverity(health::Severity s);
nlohmann::json findingJson(const health::Finding& f);
nlohmann::json incidentJson(const health::Incident& i, bool with_context);
// {"status", "exit_code", "gpus": [{index, uuid, name, pci_bus_id, gpu_state, state, findings}],
// "node_findings": [...]}. A GPU's state is the worst of `states` (from incidents, when given)
// and its current findings; a GPU that is not up with nothing worse is unknown.
nlohmann::json healthVerdict(const std::vector<collect::GpuView>& views, const std::vector<health::Finding>& findings,
                             const std::vector<std::pair<collect::GpuIdentity, health::HealthState>>* states);
// The alert of an incident, labelled as Prometheus labels the same condition through
// deploy/prometheus/gpuwarden-rules.yml and the alert_relabel_configs of deploy/prometheus/prometheus.yml,
// so that Alertmanager de-duplicates the two routes: alertname (health::alertName), severity,
// component="gpu", instance (the host name), gpu (index), UUID, and code for an Xid. Annotations
// summary, action, kb_id and runbook_url (`runbook_base` + "#" + the knowledge-base entry).
// `resolved_ms` > 0 makes it a resolved alert.
struct AlertLabelling {
  std::string hostname;
  std::string runbook_base{alert::kDefaultRunbookBase};
};
alert::Alert incidentAlert(const health::Incident& i, const AlertLabelling& how, std::int64_t resolved_ms = 0);
// One alert per rule and GPU (the worst of its unresolved incidents), and per Xid code:
// "<rule>/<gpu uuid>[/<code>]".
std::string alertId(const health::Incident& i);

}  // namespace gw::node
