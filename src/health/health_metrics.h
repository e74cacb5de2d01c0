// Health metrics in Prometheus text format 0.0.4: one gpuwarden_gpu_health series per GPU and
// state (1 for the current state, 0 for the others) and gpuwarden_incidents_open by severity.
// Appended to the exporter's page by the agent.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "collect/gpu_view.h"
#include "health/incidents.h"

namespace gw::health {

struct HealthMetricsInput {
  std::vector<std::pair<collect::GpuIdentity, HealthState>> gpus;  // IncidentStore::healthStates
  std::map<Severity, int> open_by_severity;                        // IncidentStore::openCountBySeverity
  std::string hostname;                                            // Hostname label, omitted if empty
  // Label names as the exporter's naming has them: dcgm-exporter's (UUID, modelName, Hostname)
  // or the native snake_case ones (uuid, model, hostname) that promtool accepts.
  bool native_labels = false;
};

std::string renderHealthMetrics(const HealthMetricsInput& in);
// Convenience: from the store and the sampler's views.
std::string renderHealthMetrics(const IncidentStore& store, const std::vector<collect::GpuView>& views,
                                const std::string& hostname = "", bool native_labels = false);

}  // namespace gw::health
