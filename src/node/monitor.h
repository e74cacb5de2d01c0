// The monitor: the one wiring of sampler, event sources, rule engine, incidents and alert
// dispatch, used alike by the agent (`gpuwarden serve`) and by a standalone health check
// (`gpuwarden health --standalone`, a scheduler's health program). The agent owns node state
// through it: incident changes from the control socket are made here, on the same objects the
// health thread uses, so nothing writes behind the owner's back.
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
#include <tuple>
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
#include "node/data_dir.h"
#include "node/jobs.h"

namespace gw::node {

struct MonitorOptions {
  collect::SessionOpener opener;        // the real driver or the simulator
  collect::SamplerConfig sampler;       // the rules' fields are added to it
  collect::SampleSink* sink = nullptr;  // history; not owned
  // The data folder; empty: standalone, nothing persisted (no incidents, no event log file, no
  // kernel-log position) and the kernel log not followed.
  std::string data_dir;
  // events.jsonl is rotated (to events.jsonl.1) when an append would take it past this.
  std::size_t events_max_bytes = 16 << 20;
  std::string root = "/";  // filesystem root of /dev/kmsg and /proc
  std::chrono::milliseconds interval{1000};
  std::chrono::milliseconds process_interval{10000};
  std::chrono::milliseconds nvml_retry{5000};  // NVML not there at start: try again this often
  health::RuleConfig rules;
  // Alerts (optional): incidents at or above min_severity are submitted when they open, again
  // every `alert_resubmit` while open, and as resolved when they resolve. Not owned.
  alert::Dispatcher* alerts = nullptr;
  health::Severity alert_min_severity = health::Severity::Warning;
  std::chrono::milliseconds alert_resubmit{30000};
  std::string runbook_base{alert::kDefaultRunbookBase};  // alerts' runbook_url: this + "#" + the KB entry
  // A new (GPU, Xid code) counter shows 0 this long before its count, so that every scraper sees
  // the series before its first increase: increase() sees nothing of the sample that creates a
  // series, and a counter born at 1 would hide the first Xid of each code from an alert. At least
  // twice the scrape interval.
  std::chrono::milliseconds xid_zero_hold{120000};
  bool log = true;  // lifecycle lines on stderr (the agent); a CLI check stays quiet
  // The clock of evaluation and incident stamps; platform::wallMs when empty.
  std::function<std::int64_t()> now_ms;
  // Nothing runs on its own: start() opens NVML, and each evaluateNow() samples every GPU once,
  // publishes the pending NVML events and evaluates, all on the caller's thread; the kernel log is
  // not followed. With the simulator's manual clock (and now_ms following it) a rule's hold costs
  // no wall time, so tests can run past every hold and over simulated hours.
  bool synchronous = false;
  // A dcgm-exporter job-mapping folder (--hpc-job-mapping-dir), read every kJobMapPollMs; "" off.
  std::string job_map_dir;
};

inline constexpr std::int64_t kJobMapPollMs = 5000;

class Monitor {
 public:
  // Opens the incident store and the event log (agent mode); nothing runs yet.
  static Result<std::unique_ptr<Monitor>> create(MonitorOptions options);
  ~Monitor();
  Monitor(const Monitor&) = delete;
  Monitor& operator=(const Monitor&) = delete;

  // Starts sampling (NVML missing at start is not an error: it is retried), the event sources
  // and the health thread.
  void start();
  void stop();

  // One evaluation pass now, on the caller's thread (standalone checks; the health thread does
  // the same every interval; a synchronous monitor samples first).
  void evaluateNow(bool processes);

  std::shared_ptr<collect::Sampler> sampler() const;
  // Why sampling is not running ("" when it is).
  std::string samplerError() const;
  void reconfigure(const collect::SamplerConfig& config);
  // New rule settings (a reload), from the next evaluation on.
  void setRules(const health::RuleConfig& rules);
  // The workload class a scheduler gives a GPU (by UUID); nullopt forgets it.
  void setWorkload(const std::string& gpu_uuid, std::optional<health::WorkloadClass> cls);

  // The health document (docs/api.md): {"status", "exit_code", "gpus", "node_findings",
  // "open_incidents", "timestamp_ms"[, "reason"]}.
  nlohmann::json healthReport() const;
  std::vector<health::Finding> findings() const;

  // Incidents: null in standalone mode.
  health::IncidentStore* incidents() const { return incidents_.get(); }
  Status acknowledge(std::int64_t id, const std::string& by);
  Status resolve(std::int64_t id, const std::string& by);
  Result<int> setHealthy(const std::string& uuid, const std::string& by);

  const events::EventLog& eventLog() const { return *log_; }
  JobTracker& jobs() const { return *jobs_; }
  // The compute processes on these GPUs now (NVML, under the call deadline), for an epilog that
  // looks for what a job left behind. `simulated`: the pids come from the simulator, not this host.
  struct GpuProcess {
    std::string uuid;
    unsigned index = 0;
    unsigned pid = 0;
    std::uint64_t used_bytes = 0;
  };
  struct GpuProcesses {
    bool simulated = false;
    std::vector<GpuProcess> processes;
    std::vector<std::string> unread;  // UUIDs whose list NVML did not give
  };
  Result<GpuProcesses> gpuProcesses(const std::vector<std::string>& uuids) const;
  // Adds the node's workload labels (hpc_job of the job running on a GPU; the pod, namespace and
  // container holding it) to views about to be exported.
  void labelWorkloads(std::vector<collect::GpuView>& views) const;
  // The pod labels of each GPU by UUID (cluster/pod_resources.h), replacing the previous ones;
  // empty: none.
  using GpuLabels = std::map<std::string, std::vector<std::pair<std::string, std::string>>>;
  void setPodLabels(GpuLabels labels);
  bool kernelLogFollowed() const { return kmsg_ != nullptr; }
  bool nvmlEventsHealthy() const;

  // Appends gpuwarden_gpu_health, gpuwarden_incidents_open and gpuwarden_xid_errors_total to the
  // sampled part of a /metrics page.
  void appendMetrics(std::string& body, const std::vector<collect::GpuView>& views, const collect::AgentStats& agent,
                     const exporter::ExportOptions& options, exporter::Format fmt) const;
  // Changes whenever appendMetrics would print something else for the same views.
  std::uint64_t metricsKey() const;

 private:
  explicit Monitor(MonitorOptions options);
  Status startSampler();
  std::chrono::milliseconds callDeadline() const;
  void run();
  void pollSampler();  // retry NVML, follow driver and GPU state changes
  void pollEvents();   // (re)start the NVML event source on a new session
  void tick(std::int64_t now_ms, bool processes);
  void submitAlerts(std::int64_t now_ms, bool opened);
  std::string hostname() const;
  void logLine(const std::string& level, const std::string& message) const;

  MonitorOptions opt_;
  events::EventBus in_;   // sources publish here
  events::EventBus out_;  // the log republishes new (de-duplicated) events here
  std::unique_ptr<events::EventLog> log_;
  std::unique_ptr<health::RuleEngine> engine_;
  std::unique_ptr<health::IncidentStore> incidents_;
  std::unique_ptr<events::KmsgSource> kmsg_;
  std::unique_ptr<JobTracker> jobs_;
  mutable std::mutex pods_mu_;
  GpuLabels pod_labels_;
  std::uint64_t pods_generation_ = 0;      // changes whenever pod_labels_ does (metricsKey)
  std::int64_t next_job_map_poll_ms_ = 0;  // health thread only
  std::string job_map_complaint_;          // health thread only

  mutable std::mutex sampler_mu_;  // sampler_, sampler_error_
  std::shared_ptr<collect::Sampler> sampler_;
  std::string sampler_error_;
  std::chrono::steady_clock::time_point sampler_retry_{};
  std::map<std::string, collect::GpuState> gpu_states_;  // health thread only
  bool driver_up_ = true;
  std::uint64_t reinits_seen_ = 0;

  mutable std::mutex nvml_mu_;  // nvml_source_, nvml_session_, nvml_reinits_
  std::shared_ptr<nvml::Session> nvml_session_;
  std::unique_ptr<events::NvmlEventSource> nvml_source_;
  std::uint64_t nvml_reinits_ = 0;
  std::chrono::steady_clock::time_point nvml_retry_{};
  bool nvml_error_logged_ = false;

  mutable std::mutex mu_;       // findings_, evaluated_; also serialises evaluation with incident edits
  std::string incident_error_;  // the incident store's last write error ("" when writing); under mu_
  std::vector<health::Finding> findings_;
  bool evaluated_ = false;

  std::map<std::string, health::Incident> firing_;  // alerts (health thread only)
  // When appendMetrics first saw each Xid counter (the monitor's clock); see xid_zero_hold.
  std::int64_t xidBornLocked(const events::XidCount& c, std::int64_t now) const;
  mutable std::mutex xid_mu_;
  mutable std::map<std::tuple<int, std::string, int>, std::int64_t> xid_born_;
  mutable bool xid_seen_ = false;  // a page has been made: counters from now on are new
  std::chrono::steady_clock::time_point next_alert_sweep_{};
  std::chrono::steady_clock::time_point next_resubmit_{};
  bool sim_processes_logged_ = false;

  std::atomic<bool> running_{false};
  std::mutex run_mu_;
  std::condition_variable run_cv_;
  std::thread thread_;
};

}  // namespace gw::node
