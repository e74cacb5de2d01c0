#include "server/health_service.h"

#include <httplib.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "health/health_metrics.h"
#include "nvml/nvml.h"
#include "platform/clock.h"
#include "platform/fs_root.h"
#include "server/api_params.h"
#include "server/log.h"

namespace gw::server {

using json = nlohmann::json;

namespace {

using platform::wallMs;

void sendJson(httplib::Response& res, const json& j, int status = 200) {
  res.status = status;
  res.set_content(j.dump() + "\n", "application/json");
}

bool onlyKnown(const httplib::Request& req, httplib::Response& res, std::initializer_list<const char*> known) {
  for (const auto& [k, v] : req.params) {
    if (std::none_of(known.begin(), known.end(), [&](const char* n) { return k == n; })) {
      jsonError(res, 400, "unknown parameter '" + k + "'", k);
      return false;
    }
  }
  return true;
}

}  // namespace

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
      try {
        ctx = json::parse(i.context_json);
      } catch (const std::exception&) {
        ctx = i.context_json;
      }
    }
    j["context"] = ctx;
  }
  return j;
}

alert::Alert incidentAlert(const health::Incident& i, const std::string& hostname, std::int64_t resolved_ms) {
  alert::Alert a;
  a.id = i.rule + "/" + i.gpu_uuid;
  a.rule = i.rule;
  a.severity = std::string(health::severityName(i.severity));
  a.summary = i.summary;
  a.action = i.action;
  a.gpu_uuid = i.gpu_uuid;
  a.gpu_index = i.gpu_index;
  a.hostname = hostname;
  a.labels["alertname"] = i.rule;
  a.labels["severity"] = a.severity;
  if (!hostname.empty()) a.labels["instance"] = hostname;
  if (i.gpu_index >= 0) a.labels["gpu"] = std::to_string(i.gpu_index);
  if (!i.gpu_uuid.empty()) a.labels["UUID"] = i.gpu_uuid;
  a.annotations["summary"] = i.summary;
  a.annotations["action"] = i.action;
  if (!i.kb_id.empty()) a.annotations["kb_id"] = i.kb_id;
  a.starts_at_ms = i.opened_ms;
  a.ends_at_ms = resolved_ms;
  return a;
}

json healthReport(const std::vector<collect::GpuView>& views, const std::vector<health::Finding>& findings,
                  const std::vector<std::pair<collect::GpuIdentity, health::HealthState>>* states) {
  using health::HealthState;
  HealthState overall = HealthState::Healthy;
  json gpus = json::array();
  for (const auto& v : views) {
    if (v.id.is_mig) continue;
    HealthState st = HealthState::Healthy;
    if (states) {
      for (const auto& [id, s] : *states)
        if (id.uuid == v.id.uuid) st = s;
    }
    json fj = json::array();
    HealthState from_findings = HealthState::Healthy;
    for (const auto& f : findings) {
      if (f.gpu_uuid != v.id.uuid) continue;
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
    bool matched = std::any_of(views.begin(), views.end(),
                               [&](const collect::GpuView& v) { return !v.id.is_mig && v.id.uuid == f.gpu_uuid; });
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

Result<std::unique_ptr<HealthService>> HealthService::create(HealthServiceOptions options, SamplerFn sampler) {
  std::unique_ptr<HealthService> s(new HealthService(std::move(options), std::move(sampler)));
  std::error_code ec;
  std::filesystem::create_directories(s->opt_.data_dir, ec);
  if (ec) return Status::Error("cannot create data directory " + s->opt_.data_dir + ": " + ec.message());
  auto inc = health::IncidentStore::open(s->opt_.data_dir);
  if (!inc) return Status::Error("incident store: " + inc.error());
  s->incidents_ = std::move(inc).value();
  events::EventLogOptions lo;
  lo.persist_path = s->opt_.data_dir + "/events.jsonl";
  s->log_ = std::make_unique<events::EventLog>(lo, &s->out_);
  if (auto e = s->log_->loadError(); !e.empty()) logLine("warning", "event log " + lo.persist_path + ": " + e);
  s->log_->attach(s->in_);
  s->engine_ = std::make_unique<health::RuleEngine>(health::RuleConfig{}, s->opt_.root);
  health::RuleEngine* engine = s->engine_.get();
  s->out_.subscribe([engine](const events::GpuEvent& e) { engine->onEvent(e); });
  return s;
}

HealthService::HealthService(HealthServiceOptions options, SamplerFn sampler)
    : opt_(std::move(options)), sampler_(std::move(sampler)) {}

HealthService::~HealthService() { stop(); }

void HealthService::start() {
  if (running_.exchange(true)) return;
  events::KmsgSourceOptions ko;
  ko.state_dir = opt_.data_dir;
  SamplerFn fn = sampler_;
  ko.lookup = [fn](const std::string& bus_id) -> std::pair<int, std::string> {
    auto s = fn();
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
  thread_ = std::thread([this] { run(); });
}

void HealthService::stop() {
  if (!running_.exchange(false)) return;
  run_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (kmsg_) kmsg_->stop();
  std::lock_guard l(nvml_mu_);
  if (nvml_source_) nvml_source_->stop();
  nvml_source_.reset();
  nvml_session_.reset();
}

void HealthService::poll() {
  if (!running_) return;
  auto s = sampler_();
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
  std::lock_guard l(nvml_mu_);
  const bool fresh = session != nvml_session_ || stats.nvml_reinits != nvml_reinits_;
  const bool broken = nvml_source_ && !nvml_source_->healthy();
  if (nvml_source_ && !fresh && !broken) return;
  if (!fresh && std::chrono::steady_clock::now() < nvml_retry_) return;
  if (nvml_source_) {
    if (broken) logLine("warning", "NVML events stopped: " + nvml_source_->lastError() + "; restarting");
    nvml_source_->stop();
    nvml_source_.reset();
  }
  nvml_session_ = session;
  nvml_reinits_ = stats.nvml_reinits;
  auto src = std::make_unique<events::NvmlEventSource>(*nvml_session_, in_);
  if (Status st = src->start(); !st) {
    if (!nvml_error_logged_) logLine("warning", "NVML events unavailable: " + st.message() + " (retrying every 10 s)");
    nvml_error_logged_ = true;
    nvml_retry_ = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    return;
  }
  nvml_error_logged_ = false;
  auto es = src->stats();
  logLine("info", "NVML events: " + std::to_string(es.registered.size()) + " GPUs registered");
  nvml_source_ = std::move(src);
}

void HealthService::run() {
  auto next_processes = std::chrono::steady_clock::now();
  std::unique_lock lock(run_mu_);
  while (running_) {
    run_cv_.wait_for(lock, opt_.interval, [&] { return !running_.load(); });
    if (!running_) break;
    bool processes = std::chrono::steady_clock::now() >= next_processes;
    if (processes) next_processes = std::chrono::steady_clock::now() + opt_.process_interval;
    tick(wallMs(), processes);
  }
}

void HealthService::tick(std::int64_t now_ms, bool processes) {
  auto s = sampler_();
  if (s) {
    auto views = s->snapshot();
    engine_->observe(views, now_ms);
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
        for (const auto& v : views) {
          if (v.id.is_mig || v.state != collect::GpuState::Up) continue;
          auto dev = session->deviceByIndex(v.id.index);
          if (!dev) continue;
          auto procs = dev->computeProcesses();
          if (!procs) continue;
          std::vector<health::ProcessSample> ps;
          for (const auto& p : *procs) ps.push_back({p.pid, p.used_bytes});
          engine_->observeProcesses(v.id.index, ps, now_ms);
        }
      }
    }
  }
  auto findings = engine_->evaluate(now_ms);
  auto opened = incidents_->apply(findings, now_ms, engine_.get());
  if (!opened) {
    logLine("error", "incident store: " + opened.error());
  } else {
    for (const auto& i : *opened)
      logLine(i.severity >= health::Severity::Critical ? "error" : "warning",
              "incident " + std::to_string(i.id) + (i.escalated ? " escalated" : " opened") + ": " + i.rule +
                  " on GPU " + std::to_string(i.gpu_index) + " (" + std::string(health::severityName(i.severity)) +
                  "): " + i.summary + " -> " + i.action);
  }
  submitAlerts(now_ms, opened && !opened->empty());
  std::lock_guard l(mu_);
  findings_ = std::move(findings);
  evaluated_ = true;
}

std::string HealthService::hostname() const {
  if (auto s = sampler_()) {
    auto h = s->agentStats().hostname;
    if (!h.empty()) return h;
  }
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) == 0) return buf;
  return {};
}

void HealthService::submitAlerts(std::int64_t now_ms, bool opened) {
  if (!opt_.alerts) return;
  const auto now = std::chrono::steady_clock::now();
  if (!opened && now < next_alert_sweep_) return;
  next_alert_sweep_ = now + std::chrono::seconds(2);
  const bool resubmit = now >= next_resubmit_;
  if (resubmit) next_resubmit_ = now + opt_.alert_resubmit;
  const std::string host = hostname();
  // One alert per rule and GPU: the worst of its unresolved incidents.
  std::map<std::string, health::Incident> current;
  for (auto& i : incidents_->unresolved()) {
    if (i.severity < opt_.alert_min_severity) continue;
    const std::string id = i.rule + "/" + i.gpu_uuid;
    auto it = current.find(id);
    if (it == current.end() || i.severity > it->second.severity) current[id] = std::move(i);
  }
  for (const auto& [id, inc] : current) {
    const bool fresh = firing_.count(id) == 0;
    if (!fresh && !resubmit) continue;
    auto r = opt_.alerts->submit(incidentAlert(inc, host));
    if (!r)
      logLine("error", "alert " + id + " not queued: " + r.error());
    else if (fresh && *r)
      logLine("info", "alert " + id + " firing (" + std::string(health::severityName(inc.severity)) + ")");
  }
  for (const auto& [id, inc] : firing_) {
    if (current.count(id)) continue;
    std::int64_t resolved = now_ms;
    if (auto stored = incidents_->get(inc.id); stored && stored->resolved_ms > 0) resolved = stored->resolved_ms;
    auto r = opt_.alerts->submit(incidentAlert(inc, host, resolved));
    if (!r)
      logLine("error", "resolved alert " + id + " not queued: " + r.error());
    else
      logLine("info", "alert " + id + " resolved");
  }
  firing_ = std::move(current);
}

void HealthService::registerRoutes(HttpServer& h) {
  h.get("/api/v1/incidents", [this](const httplib::Request& req, httplib::Response& res) {
    if (!onlyKnown(req, res, {"state", "limit"})) return;
    std::string state = req.has_param("state") ? req.get_param_value("state") : "open";
    if (state != "open" && state != "all")
      return jsonError(res, 400, "state must be open or all, got '" + state + "'", "state");
    int limit = 100;
    if (req.has_param("limit")) {
      try {
        limit = std::stoi(req.get_param_value("limit"));
      } catch (const std::exception&) {
        limit = 0;
      }
      if (limit <= 0 || limit > 10000) return jsonError(res, 400, "limit must be 1..10000", "limit");
    }
    auto list = state == "open" ? incidents_->unresolved() : incidents_->recent(limit);
    json arr = json::array();
    for (const auto& i : list) arr.push_back(incidentJson(i, true));
    sendJson(res, json{{"state", state}, {"count", arr.size()}, {"incidents", arr}});
  });
  h.get(R"(/api/v1/incidents/([0-9]+))", [this](const httplib::Request& req, httplib::Response& res) {
    if (!onlyKnown(req, res, {})) return;
    std::int64_t id = 0;
    try {
      id = std::stoll(std::string(req.matches[1]));
    } catch (const std::exception&) {
      return jsonError(res, 404, "no incident '" + std::string(req.matches[1]) + "'", "id");
    }
    auto i = incidents_->get(id);
    if (!i) return jsonError(res, 404, "no incident " + std::to_string(id), "id");
    sendJson(res, incidentJson(*i, true));
  });
  h.get("/api/v1/events", [this](const httplib::Request& req, httplib::Response& res) {
    if (!onlyKnown(req, res, {"since", "limit"})) return;
    const auto now = wallMs();
    std::int64_t since = now - 3600 * 1000;
    if (req.has_param("since")) {
      auto r = parseTimeSpec(req.get_param_value("since"), now);
      if (!r) return jsonError(res, 400, r.error(), "since");
      since = *r;
    }
    std::size_t limit = 0;
    if (req.has_param("limit")) {
      try {
        limit = static_cast<std::size_t>(std::stoul(req.get_param_value("limit")));
      } catch (const std::exception&) {
        return jsonError(res, 400, "limit must be a number", "limit");
      }
    }
    json arr = json::array();
    for (const auto& e : log_->since(since, limit)) {
      try {
        arr.push_back(json::parse(events::eventToJsonLine(e)));
      } catch (const std::exception&) {
      }
    }
    json sources = json::object();
    sources["kernel_log"] = kmsg_ != nullptr;
    {
      std::lock_guard l(nvml_mu_);
      sources["nvml"] = nvml_source_ != nullptr && nvml_source_->healthy();
    }
    sendJson(res, json{{"since_ms", since}, {"count", arr.size()}, {"sources", sources}, {"events", arr}});
  });
  h.get("/api/v1/health", [this](const httplib::Request& req, httplib::Response& res) {
    if (!onlyKnown(req, res, {})) return;
    auto s = sampler_();
    std::vector<collect::GpuView> views;
    if (s) views = s->snapshot();
    std::vector<health::Finding> findings;
    bool evaluated = false;
    {
      std::lock_guard l(mu_);
      findings = findings_;
      evaluated = evaluated_;
    }
    auto states = incidents_->healthStates(views);
    json j = healthReport(views, findings, &states);
    if (!s || !evaluated) {
      j["status"] = "unknown";
      j["exit_code"] = health::healthExitCode(health::HealthState::Unknown);
      j["reason"] = !s ? "NVML is not available" : "no evaluation yet";
    }
    json open = json::array();
    for (const auto& i : incidents_->unresolved()) open.push_back(incidentJson(i, false));
    j["open_incidents"] = open;
    j["timestamp_ms"] = wallMs();
    sendJson(res, j);
  });
}

void HealthService::appendMetrics(std::string& body, const std::vector<collect::GpuView>& views,
                                  const std::string& hostname, exporter::Format fmt, bool native_labels) const {
  const bool om = fmt == exporter::Format::OpenMetrics;
  body += health::renderHealthMetrics(*incidents_, views, hostname, native_labels);
  const std::string family = om ? "gpuwarden_xid_errors" : "gpuwarden_xid_errors_total";
  body += "# HELP " + family + " Xid errors seen per GPU and code (NVML events and the kernel log, de-duplicated).\n";
  body += "# TYPE " + family + " counter\n";
  for (const auto& c : log_->xidCounts()) {
    std::string labels = "gpu=\"" + (c.gpu_index >= 0 ? std::to_string(c.gpu_index) : std::string()) + "\"," +
                         (native_labels ? "uuid" : "UUID") + "=\"" + exporter::escapeLabelValue(c.gpu_uuid) +
                         "\",code=\"" + std::to_string(c.code) + "\"";
    if (!hostname.empty())
      labels +=
          std::string(native_labels ? ",hostname" : ",Hostname") + "=\"" + exporter::escapeLabelValue(hostname) + "\"";
    body += "gpuwarden_xid_errors_total{" + labels + "} " + std::to_string(c.count) + "\n";
  }
}

std::uint64_t HealthService::metricsKey() const { return incidents_->healthDigest() * 31 + log_->xidTotal(); }

}  // namespace gw::server
