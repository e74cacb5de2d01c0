#include "server/agent.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <fstream>
#include <set>

#include "diag/report.h"
#include "export/gzip.h"
#include "node/control_protocol.h"
#include "node/health_json.h"
#include "node/storage_status.h"
#include "platform/clock.h"
#include "platform/fs_root.h"
#include "health/idle_peers.h"
#include "nvml/inventory_json.h"
#include "nvml/topology.h"
#include "server/api_params.h"
#include "server/history_query.h"
#include "server/routes_health.h"
#include "server/service_notify.h"
#include "server/routes_web.h"
#include "platform/host_name.h"
#include "platform/bounded_json.h"
#include "platform/log.h"
#include "platform/thread_guard.h"

namespace gw::server {

using platform::logLine;
namespace {

using json = nlohmann::json;

using platform::wallMs;
namespace control = node::control;

json identityJson(const collect::GpuView& v, std::int64_t now) {
  json j{{"index", v.id.index},
         {"uuid", v.id.uuid},
         {"name", v.id.name},
         {"pci_bus_id", v.id.pci_bus_id},
         {"device", v.id.device},
         {"state", collect::stateName(v.state)},
         {"state_reason", v.state_reason},
         {"last_sample_ms", v.last_sample_ms},
         {"sample_lag_seconds", v.last_sample_ms > 0 ? json((now - v.last_sample_ms) / 1000.0) : json(nullptr)},
         {"samples", v.samples},
         {"nvml_errors", v.nvml_errors}};
  if (v.id.is_mig) {
    j["parent_uuid"] = v.id.parent_uuid;
    j["mig_profile"] = v.id.mig_profile;
    j["gpu_instance_id"] = v.id.gpu_instance_id;
    j["compute_instance_id"] = v.id.compute_instance_id;
  }
  return j;
}

// One GPU's latest values: the document of /api/v1/gpus/{id}/latest, and each element of
// /api/v1/latest (there with only the fields in `only`, when given).
json latestJson(const collect::GpuView& v, std::int64_t now, const std::set<const fields::Field*>* only = nullptr) {
  json fields = json::array();
  for (const auto& f : fields::all()) {
    if (f.type == fields::Type::Label || (only && !only->contains(&f))) continue;
    const std::size_t i = fields::indexOf(f);
    if (i >= v.values.size()) continue;
    const auto& fv = v.values[i];
    if (!fv.valid) continue;
    fields.push_back(json{{"key", f.key},
                          {"dcgm_name", f.dcgm_name},
                          {"smi_name", f.smi_name},
                          {"unit", f.unit},
                          {"value", fv.value},
                          {"timestamp_ms", fv.timestamp_ms},
                          {"timestamp", platform::formatRfc3339(fv.timestamp_ms)},
                          {"stale", v.state != collect::GpuState::Up}});
  }
  return json{{"gpu", identityJson(v, now)}, {"fields", fields}};
}

// The utilisation idleWhilePeersBusy judges: a full GPU that is up with a valid value, else -1.
double utilOf(const collect::GpuView& v) {
  static const std::size_t k = fields::indexOf(*fields::findByKey("gpu_util"));
  if (v.id.is_mig || v.state != collect::GpuState::Up || k >= v.values.size() || !v.values[k].valid) return -1;
  return v.values[k].value;
}

}  // namespace

// The inventory, read by a thread of its own: readInventory calls NVML and a hung GPU may hold
// it for the length of the hang, which must not hold anything else (not even the agent's stop:
// the thread owns what it touches).
struct InventorySlot {
  std::mutex mu;
  std::shared_ptr<const nvml::Inventory> inventory;
  std::shared_ptr<const nvml::Topology> topology;  // read with the inventory, on the same thread
  std::atomic<bool> busy{false};
};

Result<std::unique_ptr<Agent>> Agent::create(AgentOptions options) {
  AgentConfig cfg;
  if (!options.config_path.empty()) {
    auto r = loadConfig(options.config_path);
    if (!r) return r.status();
    cfg = std::move(r).value();
  }
  if (options.counters_file)
    if (Status st = applyCountersFile(cfg, *options.counters_file); !st) return st;
  std::unique_ptr<Agent> a(new Agent(std::move(options), std::move(cfg)));
  // TLS and authentication are checked before anything starts: a bad certificate must never
  // leave a node serving plain HTTP.
  if (const std::string wf = a->config_.web_config_file; !wf.empty()) {
    auto w = loadWebConfig(wf);
    if (!w) return w.status();
    a->web_ = std::move(w).value();
  }
  return a;
}

Agent::Agent(AgentOptions options, AgentConfig config)
    : options_(std::move(options)), config_(std::move(config)), inventory_(std::make_shared<InventorySlot>()) {
  applyOverrides(config_);
  export_ = exportOptions(config_);
}

Agent::~Agent() { stop(); }

void Agent::applyOverrides(AgentConfig& c) const {
  if (options_.listen) c.listen = *options_.listen;
  if (options_.data_dir) c.data_dir = *options_.data_dir;
  if (options_.naming) c.naming = *options_.naming;
  if (options_.web_config_file) c.web_config_file = *options_.web_config_file;
  if (options_.pod_resources_socket) c.kubernetes.pod_resources_socket = *options_.pod_resources_socket;
}

collect::SamplerConfig Agent::samplerConfig(const AgentConfig& c) const {
  collect::SamplerConfig s;
  s.fast_interval = c.fast_interval;
  s.slow_interval = c.slow_interval;
  s.call_deadline = c.call_deadline;
  for (const auto& k : c.fields)
    if (const auto* f = fields::findByKey(k)) s.fields.push_back(f);
  return s;  // the monitor adds the fields its rules read
}

std::shared_ptr<const exporter::ExportOptions> Agent::exportOptions(const AgentConfig& c) const {
  auto o = std::make_shared<exporter::ExportOptions>();
  o->naming = c.naming;
  for (const auto& k : c.fields)
    if (const auto* f = fields::findByKey(k)) o->fields.push_back(f);
  for (const auto& [k, v] : c.extra_labels) o->extra_labels[k] = v;
  o->host_label = c.host_label;
  o->host_value = c.host_value ? c.host_value : nodeNameFromEnv();
  o->dcgm_driver_version_label = c.dcgm_driver_version_label;
  return o;
}

std::shared_ptr<collect::Sampler> Agent::sampler() const { return monitor_ ? monitor_->sampler() : nullptr; }

std::string Agent::controlSocketPath() const { return control_ ? control_->path() : std::string(); }

std::vector<std::string> Agent::boundAddresses() const {
  return http_ ? http_->boundAddresses() : std::vector<std::string>{};
}

AgentConfig Agent::config() const {
  std::lock_guard lock(mu_);
  return config_;
}

void Agent::blockSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGHUP);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

Status Agent::start() {
  AgentConfig cfg = config();
  logLine("info", "starting: config " + cfg.source + ", data dir " + cfg.data_dir + ", metrics naming " +
                      std::string(exporter::namingName(cfg.naming)) + ", fast " +
                      std::to_string(cfg.fast_interval.count()) + " ms, slow " +
                      std::to_string(cfg.slow_interval.count()) + " ms");
  if (!cfg.counters_skipped.empty()) {
    std::string names;
    for (const auto& s : cfg.counters_skipped) names += (names.empty() ? "" : ", ") + s;
    logLine("info", "counters file: " + std::to_string(cfg.counters_skipped.size()) +
                        " field(s) gpuwarden does not collect, left out: " + names);
  }
  const node::DataDir dir(cfg.data_dir);
  if (Status st = dir.create(); !st) return st;
  data_dir_ = cfg.data_dir;
  // One owner per data folder: a second agent, or a CLI changing it while no agent runs, waits.
  auto lock = node::DataDirLock::acquire(dir, std::chrono::seconds(10));
  if (!lock) return lock.status();
  lock_ = std::move(lock).value();
  if (cfg.history_enabled) {
    store::StoreOptions so;
    so.path = dir.historyDb();
    so.flush_interval = cfg.flush_interval;
    so.raw_retention = cfg.raw_retention;
    so.downsampled_retention = cfg.downsampled_retention;
    // Without history the agent still samples, judges and serves /metrics: a store that cannot
    // open (a damaged file is moved aside by the store itself; this is what is left: no
    // permission, a newer schema) costs history only.
    auto st = store::Store::open(so);
    if (!st) {
      history_error_ = st.error();
      logLine("error", "history store: " + st.error() + "; running without history until restart");
    } else {
      store_ = std::move(st).value();
      sink_ = std::make_unique<HistorySink>(*store_);
      logLine("info", "history in " + so.path);
    }
  }

  node::MonitorOptions mo;
  mo.opener = options_.opener;
  mo.sampler = samplerConfig(cfg);
  mo.sink = sink_.get();
  mo.data_dir = cfg.data_dir;
  mo.events_max_bytes = cfg.events_max_bytes;
  mo.root = options_.root;
  mo.interval = cfg.fast_interval;
  mo.rules = cfg.health;
  mo.job_map_dir = cfg.jobs.hpc_job_mapping_dir;
  if (!cfg.alerts.sinks.empty()) {
    alert::DispatcherConfig dc;
    dc.queue_path = dir.alertsDb();
    dc.sinks = cfg.alerts.sinks;
    dc.repeat_interval = cfg.alerts.effectiveRepeatInterval();
    dc.hostname = platform::hostName();
    if (auto d = alert::Dispatcher::create(dc); !d) {
      logLine("error", "alerts disabled: " + d.error());
    } else {
      alerts_ = std::move(d).value();
      alerts_->start();
      std::string names;
      for (const auto& sc : dc.sinks)
        names += (names.empty() ? "" : ", ") + sc.name + " (" + alert::toString(sc.type) + ")";
      logLine("info", "alerts to " + names + ", repeat every " + std::to_string(dc.repeat_interval.count() / 1000) +
                          " s, from severity " + cfg.alerts.min_severity);
      mo.alerts = alerts_.get();
      mo.alert_min_severity = health::parseSeverity(cfg.alerts.min_severity).value_or(health::Severity::Warning);
      mo.runbook_base = cfg.alerts.runbook_base;
      mo.alert_resubmit = std::min<Millis>(Millis(30000), std::max<Millis>(Millis(1000), dc.repeat_interval / 2));
    }
  }
  mo.xid_zero_hold = cfg.xid_zero_hold;
  auto m = node::Monitor::create(mo);
  if (!m) return m.status();
  monitor_ = std::move(m).value();
  // Like incidents: records that cannot be kept cost records, not monitoring.
  if (auto rs = node::RecordStore::open(dir.recordsDb()); !rs)
    logLine("error", "records: " + rs.error() + "; install changes are not recorded until restart");
  else
    records_ = std::make_shared<node::InstallRecorder>(std::move(rs).value(), options_.root);
  monitor_->start();
  startPodLabels(cfg);

  auto server = HttpServer::create(cfg.http, web_);
  if (!server) {
    stop();
    return server.status();
  }
  http_ = std::move(server).value();
  registerRoutes();
  if (Status s = http_->listen(cfg.listen); !s) {
    stop();
    return s;
  }
  std::string how = web_.tls ? "HTTPS" : "plain HTTP";
  how += web_.basic_auth_users.empty() ? ", no authentication"
                                       : ", basic authentication (" + std::to_string(web_.basic_auth_users.size()) +
                                             " users; /healthz and /health open)";
  bool open_to_network = false;
  for (const auto& a : http_->boundAddresses()) {
    logLine("info", "listening on " + a + " (" + how + ")");
    open_to_network |= !a.starts_with("127.") && !a.starts_with("[::1]");
  }
  if (open_to_network && !web_.tls)
    logLine("warning",
            "serving plain HTTP beyond this machine: anyone on the network can read the API "
            "(kernel-log lines, serials); give a --web.config.file with TLS and basic_auth_users");
  auto c = ControlServer::start(
      dir.controlSocket(),
      [this](const std::string& op, const json& args, const control::Peer& peer) { return control(op, args, peer); });
  if (!c) {
    const Status st = c.status();
    stop();
    return Status::Error("control socket: " + st.message());
  }
  control_ = std::move(c).value();
  logLine("info", "control socket " + control_->path());
  running_ = true;
  watcher_ = std::thread(platform::guardedThread("inventory-watch", [this] { watchInventory(); }));
  return Status::Ok();
}

void Agent::stop() {
  bool was = running_.exchange(false);
  if (watcher_.joinable()) {
    watch_cv_.notify_all();
    watcher_.join();
  }
  if (control_) control_->stop();
  if (http_) http_->stop();
  pods_.reset();  // it publishes into the monitor
  if (monitor_) monitor_->stop();
  if (alerts_) {
    alerts_->flush(std::chrono::seconds(2));  // a moment for what the last evaluation raised
    alerts_->stop();
  }
  if (store_) {
    Status st = store_->flush();
    if (!st) logLine("error", "history flush at stop failed: " + st.message());
    store_.reset();
  }
  control_.reset();
  http_.reset();
  monitor_.reset();
  sink_.reset();
  alerts_.reset();
  lock_.reset();
  if (was) logLine("info", "stopped");
}

Status Agent::reload() {
  if (options_.config_path.empty()) {
    logLine("info", "reload: no configuration file (running on defaults); nothing to reload");
    return Status::Ok();
  }
  auto r = loadConfig(options_.config_path);
  if (!r) {
    logLine("error", "reload refused, keeping the running configuration: " + r.error());
    return r.status();
  }
  AgentConfig next = std::move(r).value();
  if (options_.counters_file)
    if (Status st = applyCountersFile(next, *options_.counters_file); !st) {
      logLine("error", "reload refused, keeping the running configuration: " + st.message());
      return st;
    }
  applyOverrides(next);
  AgentConfig cur = config();
  auto restart = restartOnlyChanges(cur, next);
  for (const auto& what : restart) logLine("warning", "reload: " + what + " changed; takes effect at the next restart");
  // Keep what cannot change in place.
  next.listen = cur.listen;
  next.data_dir = cur.data_dir;
  next.history_enabled = cur.history_enabled;
  next.raw_retention = cur.raw_retention;
  next.downsampled_retention = cur.downsampled_retention;
  next.flush_interval = cur.flush_interval;
  next.http = cur.http;
  next.alerts = cur.alerts;
  next.xid_zero_hold = cur.xid_zero_hold;
  next.kubernetes = cur.kubernetes;
  auto exp = exportOptions(next);
  {
    std::lock_guard lock(mu_);
    config_ = next;
    export_ = exp;
  }
  if (monitor_) {
    monitor_->reconfigure(samplerConfig(next));
    monitor_->setRules(next.health);
  }
  logLine("info", "configuration reloaded from " + next.source + " (naming " +
                      std::string(exporter::namingName(next.naming)) + ", fast " +
                      std::to_string(next.fast_interval.count()) + " ms, " +
                      std::to_string(next.health.disabled.size()) + " health rules off, expected GPUs " +
                      (next.health.expected_gpus > 0 ? std::to_string(next.health.expected_gpus) : "unchecked") + ")");
  return Status::Ok();
}

void Agent::startPodLabels(const AgentConfig& cfg) {
  const auto& k = cfg.kubernetes;
  std::string socket = k.pod_resources_socket.value_or(cluster::k8s::kDefaultPodResourcesSocket);
  if (socket.empty()) return;
  // The default is a guess about the node: where there is no kubelet, pod labels are simply off.
  // A socket the operator named is watched even while it is missing (a kubelet restarting).
  if (!k.pod_resources_socket && !std::filesystem::exists(socket)) {
    logLine("info", "pod labels off: no kubelet pod-resources socket at " + socket);
    return;
  }
  cluster::k8s::PodResourcesOptions po;
  po.socket = std::move(socket);
  po.interval = k.refresh_interval;
  po.timeout = k.timeout;
  po.publish = [m = monitor_.get()](cluster::k8s::GpuLabels labels) { m->setPodLabels(std::move(labels)); };
  pods_ = cluster::k8s::PodResourcesWatcher::start(std::move(po));
}

int Agent::run() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGHUP);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  std::string where;
  for (const auto& a : boundAddresses()) where += (where.empty() ? "" : ", ") + a;
  service::ready("serving on " + where);
  // The watchdog is kept alive while the sampler's supervising loop goes round (or while there is
  // no NVML to sample): one stuck for a whole WatchdogSec gets the agent restarted by systemd. A
  // GPU hung in a call does not stop that loop (its deadline marks the GPU stalled).
  const auto period = service::watchdogPeriod();
  std::uint64_t last_beat = ~std::uint64_t{0};
  for (;;) {
    int sig = 0;
    if (period.count() > 0) {
      const timespec wait{static_cast<time_t>(period.count() / 1000),
                          static_cast<long>(period.count() % 1000) * 1000000};
      sig = sigtimedwait(&set, nullptr, &wait);
      if (sig < 0) {
        auto s = sampler();
        const std::uint64_t beat = s ? s->heartbeat() : last_beat + 1;
        if (beat != last_beat) service::watchdog();
        last_beat = beat;
        continue;
      }
    } else if (sigwait(&set, &sig) != 0) {
      continue;
    }
    if (sig == SIGHUP) {
      logLine("info", "SIGHUP: reloading configuration");
      service::reloading();
      (void)reload();
      service::ready("serving on " + where);
      continue;
    }
    logLine("info", std::string(sig == SIGTERM ? "SIGTERM" : "SIGINT") + ": stopping");
    service::stopping();
    stop();
    return 0;
  }
}

// The inventory (serials, VBIOS, links) is read again whenever the set of GPUs or the NVML session
// changes, on a thread of its own (a hung GPU may hold readInventory for the length of the hang).
void Agent::watchInventory() {
  std::set<std::string> inventoried;
  bool need_inventory = true;
  std::uint64_t last_reinits = 0;
  auto next_install_check = std::chrono::steady_clock::now() + node::kInstallCheckEvery;
  std::unique_lock lock(watch_mu_);
  while (running_) {
    watch_cv_.wait_for(lock, std::chrono::milliseconds(500), [&] { return !running_.load(); });
    if (!running_) break;
    auto s = sampler();
    if (!s) continue;
    auto stats = s->agentStats();
    std::set<std::string> uuids;
    for (const auto& v : s->snapshot()) uuids.insert(v.id.uuid);
    if (uuids != inventoried || stats.nvml_reinits != last_reinits) need_inventory = true;
    // The install state (toolkit, cuDNN, frameworks) can change without the driver noticing.
    if (std::chrono::steady_clock::now() >= next_install_check) need_inventory = true;
    if (!need_inventory || !stats.driver_up || inventory_->busy.load()) continue;
    auto session = s->session();
    if (!session) continue;
    need_inventory = false;
    inventoried = uuids;
    last_reinits = stats.nvml_reinits;
    inventory_->busy = true;
    if (inventory_thread_.joinable()) inventory_thread_.join();
    auto slot = inventory_;
    next_install_check = std::chrono::steady_clock::now() + node::kInstallCheckEvery;
    inventory_thread_ = std::thread([session, slot, records = records_, deadline = config().call_deadline] {
      auto inv = nvml::readInventory(*session, deadline);
      if (inv) {
        auto shared = std::make_shared<const nvml::Inventory>(std::move(inv).value());
        {
          std::lock_guard l(slot->mu);
          slot->inventory = shared;
        }
        // After the inventory is published: a GPU that hangs in a topology call holds back only
        // the matrix (the previous one stays served).
        auto topo = std::make_shared<const nvml::Topology>(nvml::readTopology(*shared));
        std::lock_guard l(slot->mu);
        slot->topology = std::move(topo);
      }
      if (records) {
        const std::int64_t before = records->latestId();
        auto id = records->check(*session, wallMs());
        if (!id)
          logLine("warning", "records: " + id.error());
        else if (*id != before)
          logLine("info", "install record " + std::to_string(*id) + ": " + records->latestSummary());
      }
      slot->busy = false;
    });
  }
  // A readInventory held by a hung GPU must not hold up the stop.
  if (inventory_thread_.joinable()) {
    for (int i = 0; i < 20 && inventory_->busy.load(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (inventory_->busy.load())
      inventory_thread_.detach();
    else
      inventory_thread_.join();
  }
}

void Agent::registerRoutes() {
  HttpServer& h = *http_;

  h.get("/metrics", [this](const HttpRequest& req, HttpResponse& res) {
    auto t0 = std::chrono::steady_clock::now();
    auto s = sampler();
    std::shared_ptr<const exporter::ExportOptions> eo;
    {
      std::lock_guard lock(mu_);
      eo = export_;
    }
    const exporter::Format fmt = exporter::negotiateFormat(req.header("Accept"), eo->naming);
    MetricsPageKey key;
    key.sampling = s != nullptr;
    key.generation = s ? s->generation() : 0;  // read before the snapshot: the page is never older
    key.health = monitor_ ? monitor_->metricsKey() : 0;
    key.options = eo.get();
    key.format = fmt;
    auto page = metrics_cache_.get(key, [&](MetricsPage& p) {
      if (s) {
        p.views = s->snapshot();
        p.stats = s->agentStats();
      } else {
        p.stats.driver_up = false;
      }
      if (monitor_) monitor_->labelWorkloads(p.views);
      exporter::renderSampledMetrics(p.text, p.views, p.stats, *eo, fmt);
      if (monitor_) monitor_->appendMetrics(p.text, p.views, p.stats, *eo, fmt);
    });

    exporter::SelfMetrics self;
    self.now_ms = wallMs();
    self.scrapes = scrapes_.fetch_add(1) + 1;
    self.last_scrape_duration_seconds = static_cast<double>(last_scrape_us_.load()) / 1e6;
    double lag = 0;
    for (const auto& v : page->views)
      if (v.state == collect::GpuState::Up && v.last_sample_ms > 0)
        lag = std::max(lag, static_cast<double>(self.now_ms - v.last_sample_ms) / 1000.0);
    self.sample_lag_seconds_max = lag;
    std::string tail;
    const store::Stats history = store_ ? store_->counters() : store::Stats{};
    exporter::renderStorageMetrics(tail, node::storageSeries(node::DataDir(data_dir_), store_ ? &history : nullptr),
                                   page->views, page->stats, *eo, fmt);
    exporter::renderScrapeMetrics(tail, page->views, page->stats, self, *eo, fmt);

    const std::string ct(exporter::contentType(fmt));
    res.setHeader("Vary", "Accept, Accept-Encoding");
    if (exporter::acceptsGzip(req.header("Accept-Encoding"))) {
      std::string gz;
      exporter::gzipWithPrefix(page->gzip(), tail, gz);
      res.setHeader("Content-Encoding", "gzip");
      res.setContent(std::move(gz), ct);
    } else {
      // Sent straight from the shared page: no copy of it per scrape.
      res.shared_prefix = std::shared_ptr<const std::string>(page, &page->text);
      res.setContent(std::move(tail), ct);
    }
    last_scrape_us_ =
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0).count();
  });

  // /health is the path dcgm-exporter serves and its Helm chart probes; the same answer.
  auto liveness = [this](const HttpRequest&, HttpResponse& res) {
    auto s = sampler();
    std::string reason;
    if (!s) {
      reason = "NVML is not available: " + (monitor_ ? monitor_->samplerError() : std::string("not started"));
    } else if (auto st = s->agentStats(); !st.driver_up) {
      reason = "the NVIDIA driver is not answering; re-initialising (" + std::to_string(st.nvml_reinits) +
               " re-initialisations so far)";
    }
    const std::string storage = node::storageProblem();  // a full disk: 200, named (node/storage_status.h)
    if (reason.empty() && !storage.empty()) return sendJson(res, node::storageStatusJson(), 200);
    if (reason.empty()) {
      res.setContent("ok\n", "text/plain");
      return;
    }
    if (!storage.empty()) reason += "; " + storage;
    sendJson(res, json{{"status", "unhealthy"}, {"reason", reason}}, 503);
  };
  h.get("/healthz", liveness);
  h.get("/health", liveness);

  h.get("/api/v1/gpus", [this](const HttpRequest& req, HttpResponse& res) {
    if (!onlyParams(req, res, {})) return;
    auto s = sampler();
    if (!s) {
      jsonError(res, 503, "NVML is not available: " + (monitor_ ? monitor_->samplerError() : std::string()));
      return;
    }
    auto views = s->snapshot();
    auto stats = s->agentStats();
    std::shared_ptr<const nvml::Inventory> inv;
    {
      std::lock_guard l(inventory_->mu);
      inv = inventory_->inventory;
    }
    const auto now = wallMs();
    json gpus = json::array();
    for (const auto& v : views) {
      if (v.id.is_mig) continue;
      json g = identityJson(v, now);
      g["inventory"] = nullptr;
      if (inv)
        for (const auto& gi : inv->gpus)
          if (gi.uuid == v.id.uuid) g["inventory"] = nvml::gpuJson(gi);
      json migs = json::array();
      for (const auto& m : views)
        if (m.id.is_mig && m.id.parent_uuid == v.id.uuid) migs.push_back(identityJson(m, now));
      g["mig_devices"] = migs;
      gpus.push_back(std::move(g));
    }
    sendJson(res, json{{"hostname", stats.hostname},
                       {"driver_version", stats.driver_version},
                       {"nvml_version", stats.nvml_version},
                       {"cuda_driver_version", stats.cuda_driver_version},
                       {"driver_up", stats.driver_up},
                       {"nvml_reinits", stats.nvml_reinits},
                       {"count", gpus.size()},
                       {"gpus", gpus}});
  });

  h.get("/api/v1/gpus/{}/latest", [this](const HttpRequest& req, HttpResponse& res) {
    if (!onlyParams(req, res, {})) return;
    auto s = sampler();
    if (!s) {
      jsonError(res, 503, "NVML is not available: " + (monitor_ ? monitor_->samplerError() : std::string()));
      return;
    }
    const std::string id = req.matches[1];
    auto views = s->snapshot();
    const auto* v = findGpu(views, id);
    if (!v) {
      jsonError(res, 404, "no GPU '" + id + "' (give an index or a UUID; see /api/v1/gpus)", "id");
      return;
    }
    sendJson(res, latestJson(*v, wallMs()));
  });

  // Every GPU's and MIG device's latest values in one answer, with the sampling interval a poller
  // should follow and each full GPU's "idle while peers busy" mark: what the dashboard polls.
  h.get("/api/v1/latest", [this](const HttpRequest& req, HttpResponse& res) {
    if (!onlyParams(req, res, {"fields"})) return;
    // fields=gpu_util,fb_used,...: only these (catalog key, nvidia-smi or DCGM name); a poller
    // that draws a few fields should not make the agent render every one of them every second.
    std::set<const fields::Field*> only;
    if (req.hasParam("fields")) {
      const std::string list = req.param("fields");
      std::size_t at = 0;
      while (at <= list.size()) {
        const std::size_t comma = std::min(list.find(',', at), list.size());
        const std::string name = list.substr(at, comma - at);
        const fields::Field* f = fields::findAny(name);
        if (!f || f->type == fields::Type::Label)
          return jsonError(res, 400, "unknown numeric field '" + name.substr(0, 64) + "' (see `gpuwarden fields`)",
                           "fields");
        only.insert(f);
        at = comma + 1;
      }
    }
    auto s = sampler();
    if (!s) {
      jsonError(res, 503, "NVML is not available: " + (monitor_ ? monitor_->samplerError() : std::string()));
      return;
    }
    const auto views = s->snapshot();
    const auto stats = s->agentStats();
    std::vector<double> util;
    for (const auto& v : views) util.push_back(utilOf(v));
    const std::vector<bool> idle = health::idleWhilePeersBusy(util);
    const auto now = wallMs();
    json gpus = json::array();
    for (std::size_t i = 0; i < views.size(); ++i) {
      json g = latestJson(views[i], now, only.empty() ? nullptr : &only);
      g["idle_while_peers_busy"] = idle[i];
      gpus.push_back(std::move(g));
    }
    const AgentConfig cfg = config();
    sendJson(res, json{{"hostname", stats.hostname},
                       {"driver_up", stats.driver_up},
                       {"timestamp_ms", now},
                       {"sample_interval_ms", cfg.fast_interval.count()},
                       {"slow_interval_ms", cfg.slow_interval.count()},
                       {"history", store_ != nullptr},
                       {"count", gpus.size()},
                       {"gpus", gpus}});
  });

  h.get("/api/v1/topology", [this](const HttpRequest& req, HttpResponse& res) {
    if (!onlyParams(req, res, {})) return;
    std::shared_ptr<const nvml::Topology> topo;
    {
      std::lock_guard l(inventory_->mu);
      topo = inventory_->topology;
    }
    if (!topo) {
      res.setHeader("Retry-After", "1");
      return jsonError(res, 503, "the topology has not been read yet (it is read with the inventory, after start)");
    }
    sendJson(res, nvml::topologyJson(*topo));
  });

  h.get("/api/v1/history", [this](const HttpRequest& req, HttpResponse& res) {
    if (!onlyParams(req, res, {"gpu", "field", "since", "until", "step", "agg"})) return;
    HistoryQuery q;
    for (auto [name, slot] : {std::pair{"gpu", &q.gpu}, std::pair{"field", &q.field}, std::pair{"since", &q.since},
                              std::pair{"until", &q.until}, std::pair{"step", &q.step}, std::pair{"agg", &q.agg}})
      if (req.hasParam(name)) *slot = req.param(name);
    auto a = history(q);
    if (a.status != 200) return jsonError(res, a.status, a.error, a.param);
    sendJson(res, a.body);
  });

  auto index = [](const HttpRequest&, HttpResponse& res) {
    sendJson(res, json{{"endpoints",
                        {"/metrics", "/healthz", "/health", "/api/v1/gpus", "/api/v1/gpus/{index|uuid}/latest",
                         "/api/v1/latest", "/api/v1/topology", "/api/v1/history?gpu=&field=&since=&until=&step=&agg=",
                         "/api/v1/health", "/api/v1/incidents?state=open|all", "/api/v1/incidents/{id}",
                         "/api/v1/events?since=", "/api/v1/diag", "/api/v1/diag/{name}"}}});
  };
  if (monitor_) registerHealthRoutes(h, *monitor_);
  registerDiagRoutes();
  registerWebRoutes(h, index);  // `/`: the dashboard for a browser, the index for the rest
  h.get("/api/v1", index);
}

namespace {

// The newest reports GET /api/v1/diag lists: each listed report is read, so one request reads
// at most this many files of at most node::DataDir::kMaxDiagReportBytes.
constexpr std::size_t kMaxListedDiagReports = 100;

// A stored report, read within its bounds: a file of the folder is trusted no further.
Result<json> readDiagReport(const std::string& path) {
  auto text = platform::FsRoot("/").readFile(path, node::DataDir::kMaxDiagReportBytes + 1);
  if (!text) return text.status();
  if (text->size() > node::DataDir::kMaxDiagReportBytes)
    return Status::Error("larger than " + std::to_string(node::DataDir::kMaxDiagReportBytes) + " bytes");
  return platform::parseBounded(*text);
}

}  // namespace

// `gpuwarden diag` leaves its reports in the data folder (node::DataDir::diagReports()).
void Agent::registerDiagRoutes() {
  auto dir = [this] { return node::DataDir(config().data_dir).diagReports(); };
  http_->get("/api/v1/diag", [dir](const HttpRequest& req, HttpResponse& res) {
    if (!onlyParams(req, res, {})) return;
    json list = json::array();
    std::error_code ec;
    // The newest kMaxListedDiagReports names (they sort by time), kept without holding every name
    // of a folder that years of runs filled.
    std::vector<std::string> names;
    std::size_t total = 0;
    auto keepNewest = [&names] {
      std::sort(names.rbegin(), names.rend());
      if (names.size() > kMaxListedDiagReports) names.resize(kMaxListedDiagReports);
    };
    for (const auto& e : std::filesystem::directory_iterator(dir(), ec)) {
      const std::string n = e.path().filename().string();
      if (!node::DataDir::parseDiagReportName(n) || !e.is_regular_file(ec)) continue;
      ++total;
      names.push_back(n);
      if (names.size() >= 2 * kMaxListedDiagReports) keepNewest();
    }
    keepNewest();  // newest first
    for (const auto& n : names) {
      const auto parsed = node::DataDir::parseDiagReportName(n);
      json item{{"name", n},          {"time", parsed->time},      {"level", parsed->level},
                {"overall", nullptr}, {"driver_version", nullptr}, {"gpuwarden_version", nullptr}};
      // Read through the report's own reader, so reports stored by older versions (without the
      // stack they ran on) list too, with nulls for what they did not record.
      auto doc = readDiagReport(dir() + "/" + n);
      auto r = doc ? diag::reportFromJson(*doc) : Result<diag::DiagReport>(doc.status());
      if (r) {
        item["overall"] = diag::verdictName(r->overall);
        item["level"] = r->level;
        if (!r->stack.driver_version.empty()) item["driver_version"] = r->stack.driver_version;
        if (!r->stack.gpuwarden_version.empty()) item["gpuwarden_version"] = r->stack.gpuwarden_version;
      } else {
        item["error"] = "unreadable report: " + r.error();
      }
      list.push_back(std::move(item));
    }
    sendJson(res, json{{"directory", dir()}, {"count", list.size()}, {"total", total}, {"reports", list}});
  });
  http_->get("/api/v1/diag/{}", [dir](const HttpRequest& req, HttpResponse& res) {
    if (!onlyParams(req, res, {})) return;
    const std::string n = req.matches[1];
    std::error_code ec;
    if (!node::DataDir::parseDiagReportName(n) || !std::filesystem::is_regular_file(dir() + "/" + n, ec))
      return jsonError(res, 404, "no diag report '" + n + "'", "name");
    auto doc = readDiagReport(dir() + "/" + n);
    if (!doc) return jsonError(res, 500, "diag report '" + n + "' cannot be read: " + doc.error(), "name");
    sendJson(res, *doc);
  });
}

HistoryAnswer Agent::history(const HistoryQuery& query) const {
  if (!store_ && !history_error_.empty()) {
    HistoryAnswer a;
    a.status = 503;
    a.error = "history is not available: " + history_error_;
    return a;
  }
  std::vector<collect::GpuView> views;
  if (auto s = sampler()) views = s->snapshot();
  return runHistoryQuery(query, store_.get(), sink_.get(), views, wallMs());
}

// `gpuwarden smi -pl …` and the other setting flags, sent by a CLI that finds this agent: applied
// with the agent's NVML session (root) by the handler `serve` installed, and recorded here with
// the caller the kernel named.
json Agent::controlSettings(const json& args, const control::Peer& peer) {
  if (!options_.settings) return control::errorReply("this agent does not change GPU settings", "unknown_op");
  auto s = sampler();
  auto session = s ? s->session() : nullptr;
  if (!session) return control::errorReply("this agent has no NVML session (is the driver loaded?)", "failed");
  const platform::FsRoot root(options_.root);
  std::vector<node::Record> changed;
  json reply = options_.settings(args, peer, *session, root, &changed);
  if (reply.value("code", "") == "forbidden") logLine("warning", "settings change refused for " + peer.describe());
  if (!reply.value("ok", false) || !reply.contains("result") || !reply["result"].is_object()) return reply;
  json& result = reply["result"];
  json ids = json::array();
  std::string unrecorded;
  for (const auto& r : changed) {
    logLine("info", "setting changed by " + peer.describe() + ": " + r.summary);
    if (!records_) {
      unrecorded = "the agent's records database did not open";
      continue;
    }
    if (auto id = records_->append(r); id)
      ids.push_back(*id);
    else
      unrecorded = id.error();
  }
  result["records"] = ids;
  // The change stands: a record that could not be written is said, not undone.
  if (!unrecorded.empty() && result.contains("stderr") && result["stderr"].is_string())
    result["stderr"] =
        result["stderr"].get<std::string>() + "gpuwarden: the change stands but is not recorded: " + unrecorded + "\n";
  return reply;
}

// The control socket's operations (docs/api.md, "Control socket"). Every change names its caller,
// identified by the kernel (SO_PEERCRED), in the log and in what it records.
json Agent::control(const std::string& op, const json& args, const control::Peer& peer) {
  auto idArg = [&]() -> std::optional<std::int64_t> {
    if (!args.contains("id")) return std::nullopt;
    return platform::asWholeNumber<std::int64_t>(args["id"]);  // 2^64-1 is no id, not -1
  };
  if (op == "ping") {
    return control::okReply(json{{"protocol", control::kProtocolVersion},
                                 {"pid", ::getpid()},
                                 {"data_dir", config().data_dir},
                                 {"caller", peer.describe()}});
  }
  if (op == "health") return control::okReply(monitor_->healthReport());
  if (op.rfind("job.", 0) == 0 || op == "records.list")
    if (auto r = controlJobs(op, args, peer)) return std::move(*r);
  if (op == "history") {
    // The arguments of GET /api/v1/history, as strings (gpu may be an index number).
    HistoryQuery q;
    for (auto [name, slot] : {std::pair{"gpu", &q.gpu}, std::pair{"field", &q.field}, std::pair{"since", &q.since},
                              std::pair{"until", &q.until}, std::pair{"step", &q.step}, std::pair{"agg", &q.agg}}) {
      auto it = args.find(name);
      if (it == args.end() || it->is_null()) continue;
      if (it->is_string())
        *slot = it->get<std::string>();
      else if (std::string_view(name) == "gpu" && it->is_number_unsigned())
        *slot = std::to_string(it->get<std::uint64_t>());
      else
        return control::errorReply(std::string("args.") + name + " must be a string", "bad_request");
    }
    for (const auto& [key, value] : args.items())
      if (key != "gpu" && key != "field" && key != "since" && key != "until" && key != "step" && key != "agg")
        return control::errorReply("unknown argument '" + key + "'", "bad_request");
    auto a = history(q);
    if (a.status == 200) return control::okReply(std::move(a.body));
    json e = control::errorReply(a.error, a.status == 400 ? "bad_request" : a.status == 404 ? "not_found" : "failed");
    e["field"] = a.param;  // the parameter at fault, as in the HTTP error document
    return e;
  }
  if (op == "settings.apply") return controlSettings(args, peer);
  if (op == "config.reload") {
    logLine("info", "reload requested by " + peer.describe());
    Status st = reload();
    return st ? control::okReply(json{{"source", config().source}}) : control::errorReply(st.message());
  }
  if (op == "events") {
    std::int64_t since = wallMs() - kDefaultEventsWindowMs;
    if (args.contains("since_ms")) {
      const auto asked = platform::asWholeNumber<std::int64_t>(args["since_ms"]);
      if (!asked) return control::errorReply("since_ms must be an integer", "bad_request");
      since = *asked;
    }
    json arr = json::array();
    for (const auto& e : monitor_->eventLog().since(since, 10000)) {
      try {
        arr.push_back(json::parse(events::eventToJsonLine(e)));
      } catch (const std::exception&) {
      }
    }
    return control::okReply(
        json{{"since_ms", since},
             {"count", arr.size()},
             {"sources", {{"kernel_log", monitor_->kernelLogFollowed()}, {"nvml", monitor_->nvmlEventsHealthy()}}},
             {"events", arr}});
  }
  if (op == "diag.store") {
    // `gpuwarden diag` hands its report to the owner of the folder instead of writing behind it.
    if (!args.contains("report") || !args["report"].is_object() || !args["report"].contains("level") ||
        !args["report"]["level"].is_number_integer())
      return control::errorReply("args.report must be a diag report (an object with an integer level)", "bad_request");
    if (auto parsed = diag::reportFromJson(args["report"]); !parsed)
      return control::errorReply("args.report is not a diag report: " + parsed.error(), "bad_request");
    const int level = args["report"]["level"].get<int>();
    if (level < 1 || level > 3) return control::errorReply("report level must be 1, 2 or 3", "bad_request");
    auto name = node::DataDir(config().data_dir).storeDiagReport(args["report"].dump(2) + "\n", level, wallMs());
    if (!name) return control::errorReply(name.error());
    logLine("info", "diag report " + *name + " stored for " + peer.describe());
    return control::okReply(json{{"name", *name}});
  }
  if (op.starts_with("incidents.")) {
    health::IncidentStore* store = monitor_->incidents();
    if (!store) return control::errorReply("this agent keeps no incidents", "failed");
    if (op == "incidents.list") {
      const bool all = args.value("all", false);
      json arr = json::array();
      for (const auto& i : all ? store->recent(1000) : store->unresolved()) arr.push_back(node::incidentJson(i, false));
      return control::okReply(json{{"incidents", arr}});
    }
    if (op == "incidents.set_healthy") {
      if (!args.contains("uuid") || !args["uuid"].is_string())
        return control::errorReply("args.uuid (a GPU UUID) is required", "bad_request");
      auto n = monitor_->setHealthy(args["uuid"].get<std::string>(), peer.describe());
      if (!n) return control::errorReply(n.error());
      return control::okReply(json{{"resolved", *n}});
    }
    const auto id = idArg();
    if (!id) return control::errorReply("args.id (an incident id) is required", "bad_request");
    if (op == "incidents.show") {
      auto i = store->get(*id);
      if (!i) return control::errorReply("no incident " + std::to_string(*id), "not_found");
      return control::okReply(node::incidentJson(*i, true));
    }
    if (op == "incidents.ack" || op == "incidents.resolve") {
      Status st =
          op == "incidents.ack" ? monitor_->acknowledge(*id, peer.describe()) : monitor_->resolve(*id, peer.describe());
      if (!st) return control::errorReply(st.message(), "not_found");
      auto i = store->get(*id);
      return control::okReply(i ? node::incidentJson(*i, false) : json::object());
    }
  }
  return control::errorReply("unknown operation '" + op + "' (see docs/api.md, \"Control socket\")", "unknown_op");
}

}  // namespace gw::server
