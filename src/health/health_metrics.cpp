#include "health/health_metrics.h"

namespace gw::health {

namespace {

std::string escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

}  // namespace

std::string renderHealthMetrics(const HealthMetricsInput& in) {
  std::string out;
  out += "# HELP gpuwarden_gpu_health GPU health derived from open incidents: 1 for the GPU's current state.\n";
  out += "# TYPE gpuwarden_gpu_health gauge\n";
  static constexpr HealthState kStates[] = {HealthState::Healthy, HealthState::Warning, HealthState::Critical,
                                            HealthState::Fatal, HealthState::Unknown};
  for (const auto& [id, state] : in.gpus) {
    std::string labels;
    if (in.native_labels) {
      labels = "gpu=\"" + std::to_string(id.index) + "\",uuid=\"" + escape(id.uuid) + "\",pci_bus_id=\"" +
               escape(id.pci_bus_id) + "\",model=\"" + escape(id.name) + "\"";
      if (!in.hostname.empty()) labels += ",hostname=\"" + escape(in.hostname) + "\"";
    } else {
      labels = "gpu=\"" + std::to_string(id.index) + "\",UUID=\"" + escape(id.uuid) + "\",pci_bus_id=\"" +
               escape(id.pci_bus_id) + "\",device=\"" + escape(id.device) + "\",modelName=\"" + escape(id.name) + "\"";
      if (!in.hostname.empty()) labels += ",Hostname=\"" + escape(in.hostname) + "\"";
    }
    for (HealthState s : kStates)
      out += "gpuwarden_gpu_health{" + labels + ",state=\"" + std::string(healthStateName(s)) + "\"} " +
             (s == state ? "1" : "0") + "\n";
  }
  out += "# HELP gpuwarden_incidents_open Unresolved (open or acknowledged) health incidents by severity.\n";
  out += "# TYPE gpuwarden_incidents_open gauge\n";
  for (Severity s : {Severity::Info, Severity::Warning, Severity::Critical, Severity::Fatal}) {
    auto it = in.open_by_severity.find(s);
    out += "gpuwarden_incidents_open{severity=\"" + std::string(severityName(s)) + "\"} " +
           std::to_string(it == in.open_by_severity.end() ? 0 : it->second) + "\n";
  }
  return out;
}

std::string renderHealthMetrics(const IncidentStore& store, const std::vector<collect::GpuView>& views,
                                const std::string& hostname, bool native_labels) {
  HealthMetricsInput in;
  in.native_labels = native_labels;
  in.gpus = store.healthStates(views);
  in.open_by_severity = store.openCountBySeverity();
  in.hostname = hostname;
  return renderHealthMetrics(in);
}

}  // namespace gw::health
