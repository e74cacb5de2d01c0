#include "node/monitor.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "node/health_json.h"
#include "nvml/nvml.h"
#include "platform/clock.h"
#include "platform/deadline.h"
#include "platform/fs_root.h"
#include "platform/log.h"
#include "platform/thread_guard.h"

namespace gw::node {

using json = nlohmann::json;

namespace {
// What the rules and the job accounts read is sampled whatever else is configured (an empty list
// samples every field already).
void addRequiredFields(std::vector<const fields::Field*>& f) {
  if (f.empty()) return;
  auto add = [&f](const std::vector<const fields::Field*>& need) {
    for (const auto* r : need)
      if (std::find(f.begin(), f.end(), r) == f.end()) f.push_back(r);
  };
  add(health::RuleEngine::requiredFields());
  add(JobGpuAccount::requiredFields());
}
}  // namespace

Result<std::unique_ptr<Monitor>> Monitor::create(MonitorOptions options) {
  std::unique_ptr<Monitor> m(new Monitor(std::move(options)));
  events::EventLogOptions lo;
  if (!m->opt_.data_dir.empty()) {
    const DataDir dir(m->opt_.data_dir);
    if (Status st = dir.create(); !st) return st;
    // A damaged file is moved aside by the store itself; one that still cannot open (a full disk
    // at start, no permission) costs incidents, not sampling, events or /metrics.
    auto inc = health::IncidentStore::open(dir.incidentsDb());
    if (!inc)
      m->logLine("error", "incident store: " + inc.error() + "; running without incidents until restart");
    else
      m->incidents_ = std::move(inc).value();
    lo.persist_path = dir.eventsLog();
    lo.counters_path = dir.xidCounters();
    lo.max_bytes = m->opt_.events_max_bytes;
  }
  {
    // Like incidents: a jobs database that cannot open costs job records, not monitoring.
    auto jobs = JobTracker::open(m->opt_.data_dir.empty() ? std::string() : DataDir(m->opt_.data_dir).jobsDb());
    if (!jobs) {
      m->logLine("error", "jobs: " + jobs.error() + "; jobs are kept in memory only until restart");
      jobs = JobTracker::open("");
    }
    m->jobs_ = std::move(jobs).value();
  }
  m->log_ = std::make_unique<events::EventLog>(lo, &m->out_);
  if (auto e = m->log_->loadError(); !e.empty()) m->logLine("warning", "event log " + lo.persist_path + ": " + e);
  m->log_->attach(m->in_);
  m->engine_ = std::make_unique<health::RuleEngine>(m->opt_.rules, m->opt_.root);
  health::RuleEngine* engine = m->engine_.get();
  m->out_.subscribe([engine](const events::GpuEvent& e) { engine->onEvent(e); });
  JobTracker* jobs = m->jobs_.get();
  m->out_.subscribe([jobs](const events::GpuEvent& e) { jobs->onEvent(e); });
  addRequiredFields(m->opt_.sampler.fields);
  return m;
}

Monitor::Monitor(MonitorOptions options) : opt_(std::move(options)) {
  if (!opt_.now_ms) opt_.now_ms = platform::wallMs;
}

Monitor::~Monitor() { stop(); }

void Monitor::logLine(const std::string& level, const std::string& message) const {
  if (opt_.log) platform::logLine(level, message);
}

Status Monitor::startSampler() {
  auto s = std::make_shared<collect::Sampler>(opt_.opener, opt_.sampler);
  if (opt_.sink) s->setSink(opt_.sink);
  Status st = Status::Ok();
  if (!opt_.synchronous) {
    st = s->start();
  } else {
    s->sampleOnce();
    if (!s->session()) st = Status::Error("NVML could not be opened");
  }
  std::lock_guard l(sampler_mu_);
  sampler_retry_ = std::chrono::steady_clock::now() + opt_.nvml_retry;
  if (!st) {
    sampler_error_ = st.message();
    // A library/driver version mismatch is a finding of its own (the rules say what to do).
    engine_->setNvmlInitError(st.nvmlCode() == NVML_ERROR_LIB_RM_VERSION_MISMATCH ? st.nvmlCode() : 0, opt_.now_ms());
    return st;
  }
  engine_->setNvmlInitError(0, opt_.now_ms());
  sampler_error_.clear();
  sampler_ = std::move(s);
  return Status::Ok();
}

std::shared_ptr<collect::Sampler> Monitor::sampler() const {
  std::lock_guard l(sampler_mu_);
  return sampler_;
}

std::chrono::milliseconds Monitor::callDeadline() const {
  std::lock_guard l(sampler_mu_);
  return opt_.sampler.call_deadline;
}

std::string Monitor::samplerError() const {
  std::lock_guard l(sampler_mu_);
  return sampler_error_;
}

void Monitor::reconfigure(const collect::SamplerConfig& config) {
  collect::SamplerConfig c = config;
  addRequiredFields(c.fields);
  std::shared_ptr<collect::Sampler> s;
  {
    std::lock_guard l(sampler_mu_);
    opt_.sampler = c;
    s = sampler_;
  }
  if (s) s->reconfigure(c);
}

void Monitor::setRules(const health::RuleConfig& rules) { engine_->setConfig(rules); }

void Monitor::setWorkload(const std::string& gpu_uuid, std::optional<health::WorkloadClass> cls) {
  engine_->setWorkload(gpu_uuid, cls);
}

void Monitor::start() {
  if (running_.exchange(true)) return;
  if (opt_.synchronous) {
    if (Status st = startSampler(); !st) logLine("error", "NVML is not available: " + st.message());
    return;  // evaluateNow() does the rest, on the caller's thread
  }
  if (Status st = startSampler(); !st) {
    logLine("error", "NVML is not available: " + st.message() + " (retrying every " +
                         std::to_string(opt_.nvml_retry.count() / 1000) + " s)");
  } else if (auto s = sampler()) {
    logLine("info",
            "sampling " + std::to_string(s->snapshot().size()) + " devices, driver " + s->agentStats().driver_version);
  }
  if (!opt_.data_dir.empty()) {
    events::KmsgSourceOptions ko;
    ko.position_path = DataDir(opt_.data_dir).kmsgPosition();
    ko.lookup = [this](const std::string& bus_id) -> std::pair<int, std::string> {
      auto s = sampler();
      if (!s) return {-1, ""};
      const std::string want = nvml::normalizeBusId(bus_id);
      for (const auto& v : s->snapshot())
        if (!v.id.is_mig && nvml::normalizeBusId(v.id.pci_bus_id) == want)
          return {static_cast<int>(v.id.index), v.id.uuid};
      return {-1, ""};
    };
    kmsg_ = std::make_unique<events::KmsgSource>(platform::FsRoot(opt_.root), &in_, ko);
    if (Status st = kmsg_->start(); !st) {
      logLine("warning", "kernel log not followed (" + st.message() +
                             "); Xids are heard from NVML only. Give the agent read access to /dev/kmsg to add them");
      kmsg_.reset();
    } else {
      logLine("info", "following the kernel log " + platform::FsRoot(opt_.root).path("/dev/kmsg"));
    }
  }
  pollEvents();
  thread_ = std::thread(platform::guardedThread("monitor", [this] { run(); }));
}

void Monitor::stop() {
  if (!running_.exchange(false)) return;
  run_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (kmsg_) kmsg_->stop();
  if (Status st = jobs_->checkpoint(); !st) logLine("warning", "jobs: " + st.message());
  {
    std::lock_guard l(nvml_mu_);
    if (nvml_source_) nvml_source_->stop();
    nvml_source_.reset();
    nvml_session_.reset();
  }
  std::shared_ptr<collect::Sampler> s;
  {
    std::lock_guard l(sampler_mu_);
    s = std::move(sampler_);
  }
  if (s) s->stop();
}

bool Monitor::nvmlEventsHealthy() const {
  std::lock_guard l(nvml_mu_);
  return nvml_source_ != nullptr && nvml_source_->healthy();
}

void Monitor::pollSampler() {
  auto s = sampler();
  if (!s) {
    bool due = false;
    {
      std::lock_guard l(sampler_mu_);
      due = std::chrono::steady_clock::now() >= sampler_retry_;
    }
    if (due && startSampler()) logLine("info", "NVML is available now; sampling started");
    return;
  }
  auto stats = s->agentStats();
  if (stats.driver_up != driver_up_) {
    logLine(stats.driver_up ? "info" : "error",
            stats.driver_up ? "driver is back" : "driver went away; re-initialising");
    driver_up_ = stats.driver_up;
  }
  if (stats.nvml_reinits != reinits_seen_) {
    logLine("info", "NVML re-initialised (" + std::to_string(stats.nvml_reinits) + " so far)");
    reinits_seen_ = stats.nvml_reinits;
  }
  for (const auto& v : s->snapshot()) {
    auto it = gpu_states_.find(v.id.uuid);
    if (it != gpu_states_.end() && it->second == v.state) continue;
    if (it != gpu_states_.end() || v.state != collect::GpuState::Up)
      logLine(v.state == collect::GpuState::Up ? "info" : "warning",
              "GPU " + std::to_string(v.id.index) + " (" + v.id.uuid + ") " +
                  (it == gpu_states_.end() ? std::string("new") : collect::stateName(it->second)) + " -> " +
                  collect::stateName(v.state) + (v.state_reason.empty() ? "" : ": " + v.state_reason));
    gpu_states_[v.id.uuid] = v.state;
  }
}

void Monitor::pollEvents() {
  auto s = sampler();
  if (!s) return;
  auto stats = s->agentStats();
  if (!stats.driver_up) {
    // Let go of the old session at once: NVML is reference counted, and the sampler can only
    // re-initialise the driver once every holder of the old initialisation has shut it down.
    std::lock_guard l(nvml_mu_);
    if (nvml_source_) nvml_source_->stop();
    nvml_source_.reset();
    nvml_session_.reset();
    return;
  }
  auto session = s->session();
  if (!session) return;
  // GPUs that do not answer now are left out of the event set (registering one would block for
  // as long as it hangs) and added once they answer again.
  std::set<unsigned> not_up;
  for (const auto& v : s->snapshot())
    if (!v.id.is_mig && v.state != collect::GpuState::Up) not_up.insert(v.id.index);
  std::lock_guard l(nvml_mu_);
  const bool fresh = session != nvml_session_ || stats.nvml_reinits != nvml_reinits_;
  const bool broken = nvml_source_ && !nvml_source_->healthy();
  bool recovered = false;
  if (nvml_source_)
    for (int i : nvml_source_->stats().skipped) recovered = recovered || !not_up.count(static_cast<unsigned>(i));
  if (nvml_source_ && !fresh && !broken && !recovered) return;
  if (!fresh && std::chrono::steady_clock::now() < nvml_retry_) return;
  if (nvml_source_) {
    if (broken) logLine("warning", "NVML events stopped: " + nvml_source_->lastError() + "; restarting");
    nvml_source_->stop();
    nvml_source_.reset();
  }
  nvml_session_ = session;
  nvml_reinits_ = stats.nvml_reinits;
  events::NvmlEventSourceOptions eo;
  eo.skip = [not_up](unsigned index) { return not_up.count(index) > 0; };
  eo.thread = !opt_.synchronous;
  auto src = std::make_unique<events::NvmlEventSource>(*nvml_session_, in_, eo);
  if (Status st = src->start(); !st) {
    if (!nvml_error_logged_) logLine("warning", "NVML events unavailable: " + st.message() + " (retrying every 10 s)");
    nvml_error_logged_ = true;
    nvml_retry_ = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    return;
  }
  nvml_error_logged_ = false;
  // A source that left GPUs out is renewed (at most every 10 s) until they are back.
  nvml_retry_ = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  const auto es = src->stats();
  logLine("info", "NVML events: " + std::to_string(es.registered.size()) + " GPUs registered" +
                      (es.skipped.empty() ? "" : ", " + std::to_string(es.skipped.size()) + " not answering left out"));
  nvml_source_ = std::move(src);
}

void Monitor::run() {
  auto next_processes = std::chrono::steady_clock::now();
  std::unique_lock lock(run_mu_);
  while (running_) {
    run_cv_.wait_for(lock, opt_.interval, [&] { return !running_.load(); });
    if (!running_) break;
    pollSampler();
    pollEvents();
    log_->retryPersist();  // events the disk refused (full) go out once it takes them again
    bool processes = std::chrono::steady_clock::now() >= next_processes;
    if (processes) next_processes = std::chrono::steady_clock::now() + opt_.process_interval;
    tick(opt_.now_ms(), processes);
  }
}

void Monitor::evaluateNow(bool processes) {
  if (opt_.synchronous) {
    if (auto s = sampler()) s->sampleOnce();
  }
  pollEvents();
  if (opt_.synchronous) {
    std::lock_guard l(nvml_mu_);
    if (nvml_source_) nvml_source_->drain();
  }
  tick(opt_.now_ms(), processes);
}

void Monitor::tick(std::int64_t now_ms, bool processes) {
  auto s = sampler();
  if (s) {
    auto views = s->snapshot();
    engine_->observe(views, now_ms);
    if (!opt_.job_map_dir.empty() && now_ms >= next_job_map_poll_ms_) {
      next_job_map_poll_ms_ = now_ms + kJobMapPollMs;
      const std::string complaint = jobs_->pollMappingDir(opt_.job_map_dir, views, now_ms);
      if (complaint != job_map_complaint_ && !complaint.empty()) logLine("warning", complaint);
      job_map_complaint_ = complaint;
    }
    jobs_->observe(views, now_ms);
    if (processes && s->agentStats().driver_up) {
      auto session = s->session();
      if (session && session->isSimulator() && platform::FsRoot(opt_.root).isHostRoot()) {
        // The simulated GPUs' processes are not this host's: against the host's /proc every one
        // would look like a zombie. With --root the check runs on the given tree.
        if (!sim_processes_logged_)
          logLine("info",
                  "process checks (zombie_process) off: simulated GPUs report pids that are not this host's "
                  "(give --root DIR to check them against a prepared /proc)");
        sim_processes_logged_ = true;
        session.reset();
      }
      if (session) {
        // Each GPU's process list under the call deadline: a GPU that starts hanging must not
        // hold up the health evaluation of the others.
        std::vector<unsigned> up;
        for (const auto& v : views)
          if (!v.id.is_mig && v.state == collect::GpuState::Up) up.push_back(v.id.index);
        struct Procs {
          bool read = false;  // NVML answered (an empty list is an answer)
          std::vector<health::ProcessSample> list;
        };
        auto lists = platform::runEachWithDeadline<Procs>(
            up.size(),
            [session, up](std::size_t k) {
              Procs out;
              auto dev = session->deviceByIndex(up[k]);
              if (!dev) return out;
              auto procs = dev->computeProcesses();
              if (!procs) return out;
              out.read = true;
              for (const auto& p : *procs) out.list.push_back({p.pid, p.used_bytes});
              return out;
            },
            callDeadline());
        for (std::size_t k = 0; k < up.size(); ++k)
          if (lists[k] && lists[k]->read) engine_->observeProcesses(up[k], lists[k]->list, now_ms);
      }
    }
  }
  auto findings = engine_->evaluate(now_ms);
  std::lock_guard l(mu_);
  if (incidents_) {
    auto opened = incidents_->apply(findings, now_ms, engine_.get());
    if (!opened) {
      // Once per episode: a full disk fails every evaluation pass until space returns.
      if (incident_error_.empty()) logLine("error", "incident store: " + opened.error() + " (retried every pass)");
      incident_error_ = opened.error();
    } else {
      if (!incident_error_.empty()) logLine("info", "incident store: writing again");
      incident_error_.clear();
      for (const auto& i : *opened)
        logLine(i.severity >= health::Severity::Critical ? "error" : "warning",
                "incident " + std::to_string(i.id) + (i.escalated ? " escalated" : " opened") + ": " + i.rule +
                    " on GPU " + std::to_string(i.gpu_index) + " (" + std::string(health::severityName(i.severity)) +
                    "): " + i.summary + " -> " + i.action);
    }
    submitAlerts(now_ms, opened && !opened->empty());
  }
  findings_ = std::move(findings);
  evaluated_ = true;
}

Status Monitor::acknowledge(std::int64_t id, const std::string& by) {
  std::lock_guard l(mu_);
  if (!incidents_) return Status::Error("no incident store (standalone)");
  Status st = incidents_->acknowledge(id, opt_.now_ms());
  if (st) logLine("info", "incident " + std::to_string(id) + " acknowledged by " + by);
  return st;
}

Status Monitor::resolve(std::int64_t id, const std::string& by) {
  std::lock_guard l(mu_);
  if (!incidents_) return Status::Error("no incident store (standalone)");
  Status st = incidents_->resolve(id, opt_.now_ms(), "operator " + by);
  if (st) logLine("info", "incident " + std::to_string(id) + " resolved by " + by);
  return st;
}

Result<int> Monitor::setHealthy(const std::string& uuid, const std::string& by) {
  std::lock_guard l(mu_);
  if (!incidents_) return Status::Error("no incident store (standalone)");
  auto n = incidents_->markHealthy(uuid, opt_.now_ms(), "mark-healthy by " + by);
  if (n) logLine("info", std::to_string(*n) + " incident(s) of " + uuid + " resolved as healthy by " + by);
  return n;
}

std::string Monitor::hostname() const {
  // Without a sampler (NVML not opened) the dispatcher fills in the host's name itself.
  if (auto s = sampler()) return s->agentStats().hostname;
  return {};
}

void Monitor::submitAlerts(std::int64_t now_ms, bool opened) {
  if (!opt_.alerts) return;
  const auto now = std::chrono::steady_clock::now();
  if (!opened && now < next_alert_sweep_) return;
  next_alert_sweep_ = now + std::chrono::seconds(2);
  const bool resubmit = now >= next_resubmit_;
  if (resubmit) next_resubmit_ = now + opt_.alert_resubmit;
  const AlertLabelling how{.hostname = hostname(), .runbook_base = opt_.runbook_base};
  // One alert per rule and GPU (and Xid code): the worst of its unresolved incidents.
  std::map<std::string, health::Incident> current;
  for (auto& i : incidents_->unresolved()) {
    if (i.severity < opt_.alert_min_severity) continue;
    const std::string id = alertId(i);
    auto it = current.find(id);
    if (it == current.end() || i.severity > it->second.severity) current[id] = std::move(i);
  }
  for (const auto& [id, inc] : current) {
    const bool fresh = firing_.count(id) == 0;
    if (!fresh && !resubmit) continue;
    auto r = opt_.alerts->submit(incidentAlert(inc, how));
    if (!r)
      logLine("error", "alert " + id + " not queued: " + r.error());
    else if (fresh && *r)
      logLine("info", "alert " + id + " firing (" + std::string(health::severityName(inc.severity)) + ")");
  }
  for (const auto& [id, inc] : firing_) {
    if (current.count(id)) continue;
    std::int64_t resolved = now_ms;
    if (auto stored = incidents_->get(inc.id); stored && stored->resolved_ms > 0) resolved = stored->resolved_ms;
    auto r = opt_.alerts->submit(incidentAlert(inc, how, resolved));
    if (!r)
      logLine("error", "resolved alert " + id + " not queued: " + r.error());
    else
      logLine("info", "alert " + id + " resolved");
  }
  firing_ = std::move(current);
}

std::vector<health::Finding> Monitor::findings() const {
  std::lock_guard l(mu_);
  return findings_;
}

json Monitor::healthReport() const {
  auto s = sampler();
  std::vector<collect::GpuView> views;
  if (s) views = s->snapshot();
  std::vector<health::Finding> findings;
  bool evaluated = false;
  {
    std::lock_guard l(mu_);
    findings = findings_;
    evaluated = evaluated_;
  }
  std::vector<std::pair<collect::GpuIdentity, health::HealthState>> states;
  if (incidents_) states = incidents_->healthStates(views);
  json j = healthVerdict(views, findings, incidents_ ? &states : nullptr);
  // What the rules take each GPU to run, and who said so: utilisation means different things for
  // training and inference.
  const std::int64_t now = opt_.now_ms();
  for (auto& g : j["gpus"]) {
    const health::WorkloadView w = engine_->workloadOf(g.value("uuid", ""), now);
    g["workload"] = json{{"class", std::string(health::workloadName(w.cls))}, {"source", w.source}};
  }
  // A verdict needs an evaluation; without NVML only node findings (a driver mismatch) can judge.
  if (!evaluated || (!s && j["node_findings"].empty())) {
    j["status"] = "unknown";
    j["exit_code"] = health::healthExitCode(health::HealthState::Unknown);
    j["reason"] = !s ? "NVML is not available: " + samplerError() : "no evaluation yet";
  } else if (!s) {
    j["reason"] = "NVML is not available: " + samplerError();
  }
  json open = json::array();
  if (incidents_)
    for (const auto& i : incidents_->unresolved()) open.push_back(incidentJson(i, false));
  j["open_incidents"] = open;
  j["timestamp_ms"] = opt_.now_ms();
  return j;
}

void Monitor::appendMetrics(std::string& body, const std::vector<collect::GpuView>& views,
                            const collect::AgentStats& agent, const exporter::ExportOptions& o,
                            exporter::Format fmt) const {
  using health::HealthState;
  exporter::HealthSeries h;
  for (HealthState s :
       {HealthState::Healthy, HealthState::Warning, HealthState::Critical, HealthState::Fatal, HealthState::Unknown})
    h.states.emplace_back(health::healthStateName(s));
  if (incidents_) {
    for (const auto& [id, state] : incidents_->healthStates(views))
      h.gpus.push_back({id.uuid, std::string(health::healthStateName(state))});
    for (const auto& i : incidents_->unresolved())
      if (!i.gpu_uuid.empty())
        h.findings.push_back({i.gpu_uuid, i.rule, std::string(health::severityName(i.severity))});
    for (const auto& [severity, n] : incidents_->openCountBySeverity())
      h.open_incidents.emplace_back(health::severityName(severity), static_cast<std::uint64_t>(n));
  }
  {
    std::lock_guard l(xid_mu_);
    const std::int64_t now = opt_.now_ms();
    for (const auto& c : log_->xidCounts()) {
      const bool held = now < xidBornLocked(c, now) + opt_.xid_zero_hold.count();
      h.xids.push_back({c.gpu_index, c.gpu_uuid, c.code, held ? 0 : c.count, c.last_ms});
    }
    xid_seen_ = true;
  }
  exporter::renderHealthMetrics(body, h, views, agent, o, fmt);
}

std::int64_t Monitor::xidBornLocked(const events::XidCount& c, std::int64_t now) const {
  // Counters there at the first page (loaded from the data folder, or counted while starting) are
  // old news: Prometheus may have seen them before a restart, and holding them back would only
  // make increase() report them again.
  auto [it, added] = xid_born_.try_emplace({c.gpu_index, c.gpu_uuid, c.code}, xid_seen_ ? now : INT64_MIN / 2);
  (void)added;
  return it->second;
}

std::uint64_t Monitor::metricsKey() const {
  // A counter's hold ending changes the page as much as a new Xid does.
  // Counters are noted here too: a counter first met while the page is made would otherwise be
  // born after the key was taken, and the page showing its 0 would stand after the hold.
  std::uint64_t held = 0;
  {
    std::lock_guard l(xid_mu_);
    const std::int64_t now = opt_.now_ms();
    for (const auto& c : log_->xidCounts()) held += now < xidBornLocked(c, now) + opt_.xid_zero_hold.count();
  }
  std::uint64_t pods = 0;
  {
    std::lock_guard l(pods_mu_);
    pods = pods_generation_;
  }
  return ((((incidents_ ? incidents_->healthDigest() : 0) * 31 + log_->xidTotal()) * 31 + held) * 31 +
          jobs_->generation()) *
             31 +
         pods;
}

void Monitor::labelWorkloads(std::vector<collect::GpuView>& views) const {
  const auto jobs = jobs_->gpuJobLabels();
  for (auto& v : views) {
    // A MIG device runs what its GPU runs when the job was given the whole GPU.
    auto it = jobs.find(v.id.uuid);
    if (it == jobs.end() && v.id.is_mig) it = jobs.find(v.id.parent_uuid);
    if (it != jobs.end()) v.workload_labels.emplace_back(exporter::kHpcJobLabel, it->second);
  }
  std::lock_guard l(pods_mu_);
  if (pod_labels_.empty()) return;
  for (auto& v : views) {
    // Likewise a container given a whole GPU in MIG mode (the device plugin's "none" strategy).
    auto it = pod_labels_.find(v.id.uuid);
    if (it == pod_labels_.end() && v.id.is_mig) it = pod_labels_.find(v.id.parent_uuid);
    if (it != pod_labels_.end())
      v.workload_labels.insert(v.workload_labels.end(), it->second.begin(), it->second.end());
  }
}

void Monitor::setPodLabels(GpuLabels labels) {
  std::lock_guard l(pods_mu_);
  if (labels == pod_labels_) return;
  pod_labels_ = std::move(labels);
  ++pods_generation_;
}

Result<Monitor::GpuProcesses> Monitor::gpuProcesses(const std::vector<std::string>& uuids) const {
  auto s = sampler();
  auto session = s ? s->session() : nullptr;
  if (!session) return Status::Error("NVML is not available: " + samplerError());
  GpuProcesses out;
  out.simulated = session->isSimulator();
  struct One {
    bool read = false;
    unsigned index = 0;
    std::vector<nvml::ProcessInfo> list;
  };
  auto lists = platform::runEachWithDeadline<One>(
      uuids.size(),
      [session, uuids](std::size_t k) {
        One o;
        auto dev = session->deviceByUuid(uuids[k]);
        if (!dev) return o;
        if (auto idx = dev->index()) o.index = *idx;
        auto procs = dev->computeProcesses();
        if (!procs) return o;
        o.read = true;
        o.list = std::move(*procs);
        return o;
      },
      callDeadline());
  for (std::size_t k = 0; k < uuids.size(); ++k) {
    if (!lists[k] || !lists[k]->read) {
      out.unread.push_back(uuids[k]);
      continue;
    }
    for (const auto& p : lists[k]->list) out.processes.push_back({uuids[k], lists[k]->index, p.pid, p.used_bytes});
  }
  return out;
}

}  // namespace gw::node
