// The agent's health composition (R15-R21, R26): the event bus with its sources (NVML event set
// on the sampler's session, the kernel log under the filesystem root), the merged event log
// (<data_dir>/events.jsonl), the rule engine fed from the sampler every fast interval, from the
// bus and from the process lists every ~10 s, and the incident store (<data_dir>/incidents.db).
// Serves /api/v1/incidents, /api/v1/events and /api/v1/health and appends the health series to
// /metrics. The Agent owns one; everything here is optional to the rest of the agent.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "alert/dispatcher.h"
#include "collect/sampler.h"
#include "common/result.h"
#include "events/event_log.h"
#include "events/gpu_event.h"
#include "events/kmsg_source.h"
#include "events/nvml_event_source.h"
#include "export/prometheus.h"
#include "health/incidents.h"
#include "health/rules.h"
#include "server/http_server.h"

namespace gw::server {

struct HealthServiceOptions {
  std::string data_dir;
  std::string root = "/";  // filesystem root of /dev/kmsg and /proc
  std::chrono::milliseconds interval{1000};
  std::chrono::milliseconds process_interval{10000};
  // Alerts (optional): incidents at or above min_severity are submitted to the dispatcher when
  // they open, again every `alert_resubmit` while open (the dispatcher drops repeats within its
  // repeat interval) and as resolved when they resolve. Not owned; outlives the service.
  alert::Dispatcher* alerts = nullptr;
  health::Severity alert_min_severity = health::Severity::Warning;
  std::chrono::milliseconds alert_resubmit{30000};
};

// The alert of an incident: id "<rule>/<gpu uuid>", labels alertname, severity, instance, gpu,
// UUID; annotations summary and action. `resolved_ms` > 0 makes it a resolved alert.
alert::Alert incidentAlert(const health::Incident& i, const std::string& hostname, std::int64_t resolved_ms = 0);

// health::Severity → the GPU health state it implies (info counts as healthy).
health::HealthState stateOfSeverity(health::Severity s);
nlohmann::json findingJson(const health::Finding& f);
nlohmann::json incidentJson(const health::Incident& i, bool with_context);
// The /api/v1/health document: {"status", "exit_code", "gpus": [{index, uuid, name, state,
// findings}], "node_findings": [...]}. A GPU's state is the worst of `states` (from incidents,
// when given) and its current findings; a GPU that is not up with nothing worse is unknown.
nlohmann::json healthReport(const std::vector<collect::GpuView>& views, const std::vector<health::Finding>& findings,
                            const std::vector<std::pair<collect::GpuIdentity, health::HealthState>>* states);

class HealthService {
 public:
  using SamplerFn = std::function<std::shared_ptr<collect::Sampler>()>;

  // Opens the incident store and the event log in the data directory; nothing runs yet.
  static Result<std::unique_ptr<HealthService>> create(HealthServiceOptions options, SamplerFn sampler);
  ~HealthService();
  HealthService(const HealthService&) = delete;
  HealthService& operator=(const HealthService&) = delete;

  // Starts the kernel-log source (an unreadable /dev/kmsg is logged once, not an error) and the
  // health thread. The NVML event source starts once the sampler has a session (see poll()).
  void start();
  void stop();
  // From the agent's monitor loop: (re)starts the NVML event source when the sampler's session is
  // new or the source stopped on a driver-level error.
  void poll();

  void registerRoutes(HttpServer& h);
  // Appends gpuwarden_gpu_health, gpuwarden_incidents_open and gpuwarden_xid_errors_total to the
  // sampled part of a /metrics page (exporter::renderSampledMetrics: no "# EOF" yet), with the
  // page's own views, agent stats and options, so that they carry the field series' labels.
  void appendMetrics(std::string& body, const std::vector<collect::GpuView>& views, const collect::AgentStats& agent,
                     const exporter::ExportOptions& o, exporter::Format fmt) const;
  // Changes whenever what appendMetrics prints for the same views would change (incidents opened,
  // resolved or worsened; Xids counted).
  std::uint64_t metricsKey() const;

 private:
  HealthService(HealthServiceOptions options, SamplerFn sampler);
  void run();
  void tick(std::int64_t now_ms, bool processes);
  void submitAlerts(std::int64_t now_ms, bool opened);
  std::string hostname() const;

  HealthServiceOptions opt_;
  SamplerFn sampler_;
  events::EventBus in_;   // sources publish here
  events::EventBus out_;  // the log republishes new (de-duplicated) events here
  std::unique_ptr<events::EventLog> log_;
  std::unique_ptr<health::RuleEngine> engine_;
  std::unique_ptr<health::IncidentStore> incidents_;
  std::unique_ptr<events::KmsgSource> kmsg_;

  std::mutex nvml_mu_;  // nvml_source_, nvml_session_, nvml_reinits_
  std::shared_ptr<nvml::Session> nvml_session_;
  std::unique_ptr<events::NvmlEventSource> nvml_source_;
  std::uint64_t nvml_reinits_ = 0;
  std::chrono::steady_clock::time_point nvml_retry_{};
  bool nvml_error_logged_ = false;

  mutable std::mutex mu_;  // findings_
  std::vector<health::Finding> findings_;
  bool evaluated_ = false;

  // Alerts (health thread only): the firing alerts by id, with the incident they came from.
  std::map<std::string, health::Incident> firing_;
  std::chrono::steady_clock::time_point next_alert_sweep_{};
  std::chrono::steady_clock::time_point next_resubmit_{};
  bool sim_processes_logged_ = false;

  std::atomic<bool> running_{false};
  std::mutex run_mu_;
  std::condition_variable run_cv_;
  std::thread thread_;
};

}  // namespace gw::server
