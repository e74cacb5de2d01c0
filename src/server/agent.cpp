#include "server/agent.h"

#include <signal.h>

#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <fstream>
#include <regex>
#include <set>

#include "export/gzip.h"
#include "platform/clock.h"
#include "server/api_params.h"
#include "server/log.h"

namespace gw::server {
namespace {

using json = nlohmann::json;

void sendJson(httplib::Response& res, const json& j, int status = 200) {
  res.status = status;
  res.set_content(j.dump() + "\n", "application/json");
}

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

template <typename T>
json opt(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

json inventoryJson(const nvml::GpuInfo& g) {
  json j{{"serial", g.serial},
         {"vbios", g.vbios},
         {"architecture", nvml::architectureName(g.architecture)},
         {"compute_capability", g.compute_capability ? json(std::to_string(g.compute_capability->major) + "." +
                                                            std::to_string(g.compute_capability->minor))
                                                     : json(nullptr)},
         {"sm_count", opt(g.sm_count)},
         {"memory_total_mib", opt(g.memory_total_mib)},
         {"memory_bus_width", opt(g.memory_bus_width)},
         {"peak_bandwidth_gbs", opt(g.peak_bandwidth_gbs)},
         {"pcie_gen", opt(g.pcie_gen)},
         {"pcie_width", opt(g.pcie_width)},
         {"pcie_max_gen", opt(g.pcie_max_gen)},
         {"pcie_max_width", opt(g.pcie_max_width)},
         {"nvlink_links", g.nvlink_links},
         {"nvlink_active", g.nvlink_active},
         {"power_limit_w", opt(g.power_limit_w)},
         {"ecc_enabled", opt(g.ecc_enabled)},
         {"persistence", opt(g.persistence)},
         {"mig_enabled", opt(g.mig_enabled)},
         {"numa_nodes", g.numa_nodes}};
  return j;
}

// A GPU by index ("3") or UUID (GPU-… or MIG-…); full GPUs only for an index.
const collect::GpuView* findGpu(const std::vector<collect::GpuView>& views, const std::string& id) {
  bool numeric =
      !id.empty() && id.size() <= 6 && std::all_of(id.begin(), id.end(), [](char c) { return c >= '0' && c <= '9'; });
  for (const auto& v : views) {
    if (numeric ? (!v.id.is_mig && std::to_string(v.id.index) == id) : v.id.uuid == id) return &v;
  }
  return nullptr;
}

Result<store::Agg> parseAgg(const std::string& s) {
  if (s == "avg") return store::Agg::Avg;
  if (s == "min") return store::Agg::Min;
  if (s == "max") return store::Agg::Max;
  if (s == "sum") return store::Agg::Sum;
  if (s == "count") return store::Agg::Count;
  return Status::Error("agg must be avg, min, max, sum or count, got '" + s + "'");
}

// Refuses parameters the endpoint does not know, so that a typo is not silently ignored.
bool onlyParams(const httplib::Request& req, httplib::Response& res, std::initializer_list<const char*> known) {
  for (const auto& [k, v] : req.params) {
    if (std::none_of(known.begin(), known.end(), [&](const char* n) { return k == n; })) {
      std::string list;
      for (const char* n : known) list += (list.empty() ? "" : ", ") + std::string(n);
      jsonError(res, 400, "unknown parameter '" + k + "'" + (list.empty() ? "" : " (known: " + list + ")"), k);
      return false;
    }
    if (req.get_param_value_count(k) > 1) {
      jsonError(res, 400, "parameter '" + k + "' given more than once", k);
      return false;
    }
  }
  return true;
}

}  // namespace

// The inventory, read by a thread of its own: readInventory calls NVML and a hung GPU may hold
// it for the length of the hang, which must not hold anything else (not even the agent's stop:
// the thread owns what it touches).
struct InventorySlot {
  std::mutex mu;
  std::shared_ptr<const nvml::Inventory> inventory;
  std::atomic<bool> busy{false};
};

Result<std::unique_ptr<Agent>> Agent::create(AgentOptions options) {
  AgentConfig cfg;
  if (!options.config_path.empty()) {
    auto r = loadConfig(options.config_path);
    if (!r) return r.status();
    cfg = std::move(r).value();
  }
  std::unique_ptr<Agent> a(new Agent(std::move(options), std::move(cfg)));
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
}

collect::SamplerConfig Agent::samplerConfig(const AgentConfig& c) const {
  collect::SamplerConfig s;
  s.fast_interval = c.fast_interval;
  s.slow_interval = c.slow_interval;
  s.call_deadline = c.call_deadline;
  for (const auto& k : c.fields)
    if (const auto* f = fields::findByKey(k)) s.fields.push_back(f);
  if (!s.fields.empty())  // the health rules read these whatever the exporter is asked for
    for (const auto* f : health::RuleEngine::requiredFields())
      if (std::find(s.fields.begin(), s.fields.end(), f) == s.fields.end()) s.fields.push_back(f);
  return s;
}

std::shared_ptr<const exporter::ExportOptions> Agent::exportOptions(const AgentConfig& c) const {
  auto o = std::make_shared<exporter::ExportOptions>();
  o->naming = c.naming;
  for (const auto& k : c.fields)
    if (const auto* f = fields::findByKey(k)) o->fields.push_back(f);
  for (const auto& [k, v] : c.extra_labels) o->extra_labels[k] = v;
  return o;
}

std::shared_ptr<collect::Sampler> Agent::sampler() const {
  std::lock_guard lock(mu_);
  return sampler_;
}

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

Status Agent::startSampler() {
  AgentConfig cfg = config();
  auto s = std::make_shared<collect::Sampler>(options_.opener, samplerConfig(cfg));
  if (sink_) s->setSink(sink_.get());
  Status st = s->start();
  std::lock_guard lock(mu_);
  if (!st) {
    sampler_error_ = st.message();
    return st;
  }
  sampler_error_.clear();
  sampler_ = std::move(s);
  return Status::Ok();
}

Status Agent::start() {
  AgentConfig cfg = config();
  logLine("info", "starting: config " + cfg.source + ", data dir " + cfg.data_dir + ", metrics naming " +
                      std::string(exporter::namingName(cfg.naming)) + ", fast " +
                      std::to_string(cfg.fast_interval.count()) + " ms, slow " +
                      std::to_string(cfg.slow_interval.count()) + " ms");
  if (cfg.history_enabled) {
    std::error_code ec;
    std::filesystem::create_directories(cfg.data_dir, ec);
    if (ec) return Status::Error("cannot create data directory " + cfg.data_dir + ": " + ec.message());
    store::StoreOptions so;
    so.path = cfg.data_dir + "/history.db";
    so.flush_interval = cfg.flush_interval;
    so.raw_retention = cfg.raw_retention;
    so.downsampled_retention = cfg.downsampled_retention;
    auto st = store::Store::open(so);
    if (!st) return Status::Error("history store: " + st.error());
    store_ = std::move(st).value();
    sink_ = std::make_unique<HistorySink>(*store_);
    logLine("info", "history in " + so.path);
  }

  if (Status s = startSampler(); !s) {
    logLine("error", "NVML is not available: " + s.message() + " (serving /healthz 503; retrying every 5 s)");
  } else {
    auto views = sampler()->snapshot();
    auto stats = sampler()->agentStats();
    logLine("info", "sampling " + std::to_string(views.size()) + " devices, driver " + stats.driver_version);
  }

  HealthServiceOptions ho;
  if (!cfg.alerts.sinks.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(cfg.data_dir, ec);
    alert::DispatcherConfig dc;
    dc.data_dir = cfg.data_dir;
    dc.sinks = cfg.alerts.sinks;
    dc.repeat_interval = cfg.alerts.effectiveRepeatInterval();
    if (auto smp = sampler()) dc.hostname = smp->agentStats().hostname;
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
      ho.alerts = alerts_.get();
      ho.alert_min_severity = health::parseSeverity(cfg.alerts.min_severity).value_or(health::Severity::Warning);
      ho.alert_resubmit = std::min<Millis>(Millis(30000), std::max<Millis>(Millis(1000), dc.repeat_interval / 2));
    }
  }
  ho.data_dir = cfg.data_dir;
  ho.root = options_.root;
  ho.interval = cfg.fast_interval;
  if (auto hs = HealthService::create(ho, [this] { return sampler(); }); !hs) {
    logLine("error", "health checks disabled: " + hs.error());
  } else {
    health_ = std::move(hs).value();
    health_->start();
    health_->poll();
  }

  http_ = std::make_unique<HttpServer>(cfg.http);
  registerRoutes();
  if (Status s = http_->listen(cfg.listen); !s) {
    http_.reset();
    health_.reset();
    alerts_.reset();
    if (auto smp = sampler()) smp->stop();
    return s;
  }
  for (const auto& a : http_->boundAddresses()) logLine("info", "listening on " + a);
  running_ = true;
  monitor_ = std::thread([this] { monitor(); });
  return Status::Ok();
}

void Agent::stop() {
  bool was = running_.exchange(false);
  if (monitor_.joinable()) {
    monitor_cv_.notify_all();
    monitor_.join();
  }
  if (http_) http_->stop();
  if (health_) health_->stop();
  if (alerts_) {
    alerts_->flush(std::chrono::seconds(2));  // a moment for what the last evaluation raised
    alerts_->stop();
  }
  if (auto s = sampler()) s->stop();
  {
    std::lock_guard lock(mu_);
    sampler_.reset();
  }
  if (store_) {
    Status st = store_->flush();
    if (!st) logLine("error", "history flush at stop failed: " + st.message());
    store_.reset();
  }
  sink_.reset();
  http_.reset();
  health_.reset();
  alerts_.reset();
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
  auto exp = exportOptions(next);
  auto sc = samplerConfig(next);
  std::shared_ptr<collect::Sampler> s;
  {
    std::lock_guard lock(mu_);
    config_ = next;
    export_ = exp;
    s = sampler_;
  }
  if (s) s->reconfigure(sc);
  logLine("info", "configuration reloaded from " + next.source + " (naming " +
                      std::string(exporter::namingName(next.naming)) + ", fast " +
                      std::to_string(next.fast_interval.count()) + " ms)");
  return Status::Ok();
}

int Agent::run() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGHUP);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  for (;;) {
    int sig = 0;
    if (sigwait(&set, &sig) != 0) continue;
    if (sig == SIGHUP) {
      logLine("info", "SIGHUP: reloading configuration");
      (void)reload();
      continue;
    }
    logLine("info", std::string(sig == SIGTERM ? "SIGTERM" : "SIGINT") + ": stopping");
    stop();
    return 0;
  }
}

void Agent::monitor() {
  std::map<std::string, collect::GpuState> states;
  std::uint64_t reinits = 0;
  bool driver_up = true;
  std::set<std::string> inventoried;
  auto last_retry = std::chrono::steady_clock::now();
  bool need_inventory = true;
  std::uint64_t last_reinits_for_inventory = 0;
  std::unique_lock lock(monitor_mu_);
  while (running_) {
    monitor_cv_.wait_for(lock, std::chrono::milliseconds(500), [&] { return !running_.load(); });
    if (!running_) break;
    auto s = sampler();
    if (!s) {
      if (std::chrono::steady_clock::now() - last_retry >= std::chrono::seconds(5)) {
        last_retry = std::chrono::steady_clock::now();
        if (startSampler()) logLine("info", "NVML is available now; sampling started");
      }
      continue;
    }
    if (health_) health_->poll();  // restarts the NVML event source after a re-initialisation
    auto views = s->snapshot();
    auto stats = s->agentStats();
    if (stats.driver_up != driver_up) {
      logLine(stats.driver_up ? "info" : "error",
              stats.driver_up ? "driver is back" : "driver went away; re-initialising");
      driver_up = stats.driver_up;
    }
    if (stats.nvml_reinits != reinits) {
      logLine("info", "NVML re-initialised (" + std::to_string(stats.nvml_reinits) + " so far)");
      reinits = stats.nvml_reinits;
    }
    std::set<std::string> uuids;
    for (const auto& v : views) {
      uuids.insert(v.id.uuid);
      auto it = states.find(v.id.uuid);
      if (it == states.end() || it->second != v.state) {
        if (it != states.end() || v.state != collect::GpuState::Up) {
          logLine(v.state == collect::GpuState::Up ? "info" : "warning",
                  "GPU " + std::to_string(v.id.index) + " (" + v.id.uuid + ") " +
                      (it == states.end() ? std::string("new") : collect::stateName(it->second)) + " -> " +
                      collect::stateName(v.state) + (v.state_reason.empty() ? "" : ": " + v.state_reason));
        }
        states[v.id.uuid] = v.state;
      }
    }
    if (uuids != inventoried || stats.nvml_reinits != last_reinits_for_inventory) need_inventory = true;
    if (need_inventory && stats.driver_up && !inventory_->busy.load()) {
      auto session = s->session();
      if (session) {
        need_inventory = false;
        inventoried = uuids;
        last_reinits_for_inventory = stats.nvml_reinits;
        inventory_->busy = true;
        if (inventory_thread_.joinable()) inventory_thread_.join();
        auto slot = inventory_;
        inventory_thread_ = std::thread([session, slot] {
          auto inv = nvml::readInventory(*session);
          if (inv) {
            std::lock_guard l(slot->mu);
            slot->inventory = std::make_shared<const nvml::Inventory>(std::move(inv).value());
          }
          slot->busy = false;
        });
      }
    }
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

  h.get("/metrics", [this](const httplib::Request& req, httplib::Response& res) {
    auto t0 = std::chrono::steady_clock::now();
    auto s = sampler();
    std::shared_ptr<const exporter::ExportOptions> eo;
    {
      std::lock_guard lock(mu_);
      eo = export_;
    }
    const exporter::Format fmt = exporter::negotiateFormat(req.get_header_value("Accept"));
    MetricsPageKey key;
    key.sampling = s != nullptr;
    key.generation = s ? s->generation() : 0;  // read before the snapshot: the page is never older
    key.health = health_ ? health_->metricsKey() : 0;
    key.options = eo.get();
    key.format = fmt;
    auto page = metrics_cache_.get(key, [&](MetricsPage& p) {
      if (s) {
        p.views = s->snapshot();
        p.stats = s->agentStats();
      } else {
        p.stats.driver_up = false;
      }
      exporter::renderSampledMetrics(p.text, p.views, p.stats, *eo, fmt);
      if (health_)
        health_->appendMetrics(p.text, p.views, p.stats.hostname, fmt, eo->naming == exporter::Naming::Native);
    });

    exporter::SelfMetrics self;
    self.now_ms = platform::wallMs();
    self.scrapes = scrapes_.fetch_add(1) + 1;
    self.last_scrape_duration_seconds = static_cast<double>(last_scrape_us_.load()) / 1e6;
    double lag = 0;
    for (const auto& v : page->views)
      if (v.state == collect::GpuState::Up && v.last_sample_ms > 0)
        lag = std::max(lag, static_cast<double>(self.now_ms - v.last_sample_ms) / 1000.0);
    self.sample_lag_seconds_max = lag;
    auto tail = std::make_shared<std::string>();
    exporter::renderScrapeMetrics(*tail, page->views, page->stats, self, *eo, fmt);

    const std::string ct(exporter::contentType(fmt));
    res.set_header("Vary", "Accept, Accept-Encoding");
    if (exporter::acceptsGzip(acceptEncoding(req))) {
      std::string gz;
      exporter::gzipWithPrefix(page->gzip(), *tail, gz);
      res.set_header("Content-Encoding", "gzip");
      res.set_content(gz, ct.c_str());
    } else {
      // Sent straight from the shared page: no copy of it per scrape.
      const std::size_t n = page->text.size();
      res.set_content_provider(n + tail->size(), ct,
                               [page, tail, n](std::size_t offset, std::size_t length, httplib::DataSink& sink) {
                                 if (offset < n)
                                   return sink.write(page->text.data() + offset, std::min(length, n - offset));
                                 const std::size_t o = offset - n;
                                 return sink.write(tail->data() + o, std::min(length, tail->size() - o));
                               });
    }
    last_scrape_us_ =
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0).count();
  });

  h.get("/healthz", [this](const httplib::Request&, httplib::Response& res) {
    auto s = sampler();
    std::string reason;
    if (!s) {
      std::lock_guard lock(mu_);
      reason = "NVML is not available: " + sampler_error_;
    } else if (auto st = s->agentStats(); !st.driver_up) {
      reason = "the NVIDIA driver is not answering; re-initialising (" + std::to_string(st.nvml_reinits) +
               " re-initialisations so far)";
    }
    if (reason.empty()) {
      res.set_content("ok\n", "text/plain");
      return;
    }
    sendJson(res, json{{"status", "unhealthy"}, {"reason", reason}}, 503);
  });

  h.get("/api/v1/gpus", [this](const httplib::Request& req, httplib::Response& res) {
    if (!onlyParams(req, res, {})) return;
    auto s = sampler();
    if (!s) {
      std::lock_guard lock(mu_);
      jsonError(res, 503, "NVML is not available: " + sampler_error_);
      return;
    }
    auto views = s->snapshot();
    auto stats = s->agentStats();
    std::shared_ptr<const nvml::Inventory> inv;
    {
      std::lock_guard l(inventory_->mu);
      inv = inventory_->inventory;
    }
    const auto now = platform::wallMs();
    json gpus = json::array();
    for (const auto& v : views) {
      if (v.id.is_mig) continue;
      json g = identityJson(v, now);
      g["inventory"] = nullptr;
      if (inv)
        for (const auto& gi : inv->gpus)
          if (gi.uuid == v.id.uuid) g["inventory"] = inventoryJson(gi);
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

  h.get(R"(/api/v1/gpus/([^/]+)/latest)", [this](const httplib::Request& req, httplib::Response& res) {
    if (!onlyParams(req, res, {})) return;
    auto s = sampler();
    if (!s) {
      std::lock_guard lock(mu_);
      jsonError(res, 503, "NVML is not available: " + sampler_error_);
      return;
    }
    const std::string id = req.matches[1];
    auto views = s->snapshot();
    const auto* v = findGpu(views, id);
    if (!v) {
      jsonError(res, 404, "no GPU '" + id + "' (give an index or a UUID; see /api/v1/gpus)", "id");
      return;
    }
    const auto now = platform::wallMs();
    json fields = json::array();
    for (const auto& f : fields::all()) {
      if (f.type == fields::Type::Label) continue;
      const std::size_t i = fields::indexOf(f);
      if (i >= v->values.size()) continue;
      const auto& fv = v->values[i];
      if (!fv.valid) continue;
      fields.push_back(json{{"key", f.key},
                            {"dcgm_name", f.dcgm_name},
                            {"smi_name", f.smi_name},
                            {"unit", f.unit},
                            {"value", fv.value},
                            {"timestamp_ms", fv.timestamp_ms},
                            {"timestamp", platform::formatRfc3339(fv.timestamp_ms)},
                            {"stale", v->state != collect::GpuState::Up}});
    }
    sendJson(res, json{{"gpu", identityJson(*v, now)}, {"fields", fields}});
  });

  h.get("/api/v1/history", [this](const httplib::Request& req, httplib::Response& res) {
    if (!onlyParams(req, res, {"gpu", "field", "since", "until", "step", "agg"})) return;
    if (!store_) {
      jsonError(res, 404, "history is disabled in the configuration (history.enabled: false)");
      return;
    }
    for (const char* p : {"gpu", "field"}) {
      if (!req.has_param(p) || req.get_param_value(p).empty()) {
        jsonError(res, 400, std::string("missing parameter '") + p + "'", p);
        return;
      }
    }
    const std::string gpu = req.get_param_value("gpu");
    const std::string field_name = req.get_param_value("field");
    const fields::Field* f = fields::findAny(field_name);
    if (!f || f->type == fields::Type::Label) {
      jsonError(res, 400, "unknown numeric field '" + field_name + "' (see `gpuwarden fields`)", "field");
      return;
    }
    const auto now = platform::wallMs();
    std::int64_t since = now - 3600 * 1000, until = now, step = 0;
    if (req.has_param("since")) {
      auto r = parseTimeSpec(req.get_param_value("since"), now);
      if (!r) return jsonError(res, 400, r.error(), "since");
      since = *r;
    }
    if (req.has_param("until")) {
      auto r = parseTimeSpec(req.get_param_value("until"), now);
      if (!r) return jsonError(res, 400, r.error(), "until");
      until = *r;
    }
    if (since > until) return jsonError(res, 400, "since is after until", "since");
    if (req.has_param("step")) {
      auto r = parseStepMs(req.get_param_value("step"));
      if (!r) return jsonError(res, 400, r.error(), "step");
      step = *r;
      if (step > 0 && (until - since) / step > 11000)
        return jsonError(res, 400, "more than 11000 points; use a larger step", "step");
    }
    store::Agg agg = store::Agg::Avg;
    if (req.has_param("agg")) {
      auto r = parseAgg(req.get_param_value("agg"));
      if (!r) return jsonError(res, 400, r.error(), "agg");
      agg = *r;
    }
    // The GPU: an index of a GPU seen now, or any UUID (history outlives a GPU).
    std::string uuid;
    json gpu_json;
    auto s = sampler();
    std::vector<collect::GpuView> views;
    if (s) views = s->snapshot();
    if (const auto* v = findGpu(views, gpu)) {
      uuid = v->id.uuid;
      gpu_json = json{{"index", v->id.index}, {"uuid", uuid}};
    } else if (gpu.starts_with("GPU-") || gpu.starts_with("MIG-")) {
      uuid = gpu;
      gpu_json = json{{"index", nullptr}, {"uuid", uuid}};
    } else {
      return jsonError(res, 404, "no GPU '" + gpu + "' (give an index or a UUID; see /api/v1/gpus)", "gpu");
    }
    json points = json::array();
    if (auto id = sink_->find(uuid, f->key)) {
      auto r = store_->query(*id, since, until, step, agg);
      if (!r) return jsonError(res, 500, "history query failed: " + r.error());
      for (const auto& p : *r) points.push_back(json::array({p.ts_ms, p.value}));
    }
    static const char* kAggNames[] = {"avg", "min", "max", "sum", "count"};
    sendJson(res, json{{"gpu", gpu_json},
                       {"field", {{"key", f->key}, {"dcgm_name", f->dcgm_name}, {"unit", f->unit}}},
                       {"since_ms", since},
                       {"until_ms", until},
                       {"step_ms", step},
                       {"agg", step > 0 ? json(kAggNames[static_cast<int>(agg)]) : json(nullptr)},
                       {"points", points}});
  });

  auto index = [](const httplib::Request&, httplib::Response& res) {
    sendJson(res, json{{"endpoints",
                        {"/metrics", "/healthz", "/api/v1/gpus", "/api/v1/gpus/{index|uuid}/latest",
                         "/api/v1/history?gpu=&field=&since=&until=&step=&agg=", "/api/v1/health",
                         "/api/v1/incidents?state=open|all", "/api/v1/incidents/{id}",
                         "/api/v1/events?since=", "/api/v1/diag", "/api/v1/diag/{name}"}}});
  };
  if (health_) health_->registerRoutes(h);
  registerDiagRoutes();
  h.get("/", index);
  h.get("/api/v1", index);
}

// `gpuwarden diag` leaves its reports in <data_dir>/diag/<YYYYMMDDTHHMMSSZ>-r<level>[-N].json.
void Agent::registerDiagRoutes() {
  static const std::regex kName(R"(^(\d{8}T\d{6}Z)-r([123])(-\d+)?\.json$)");
  auto dir = [this] { return config().data_dir + "/diag"; };
  http_->get("/api/v1/diag", [dir](const httplib::Request& req, httplib::Response& res) {
    if (!onlyParams(req, res, {})) return;
    json list = json::array();
    std::error_code ec;
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(dir(), ec)) {
      const std::string n = e.path().filename().string();
      if (std::regex_match(n, kName) && e.is_regular_file(ec)) names.push_back(n);
    }
    std::sort(names.rbegin(), names.rend());  // newest first
    for (const auto& n : names) {
      std::smatch m;
      std::regex_match(n, m, kName);
      const std::string t = m[1].str();  // 20260102T030405Z -> 2026-01-02T03:04:05Z
      json item{{"name", n},
                {"time", t.substr(0, 4) + "-" + t.substr(4, 2) + "-" + t.substr(6, 2) + "T" + t.substr(9, 2) + ":" +
                             t.substr(11, 2) + ":" + t.substr(13, 2) + "Z"},
                {"level", std::stoi(m[2].str())},
                {"overall", nullptr}};
      std::ifstream in(dir() + "/" + n);
      try {
        json r = json::parse(in);
        if (r.contains("overall")) item["overall"] = r["overall"];
        if (r.contains("level")) item["level"] = r["level"];
      } catch (const std::exception&) {
        item["error"] = "unreadable report";
      }
      list.push_back(std::move(item));
    }
    sendJson(res, json{{"directory", dir()}, {"count", list.size()}, {"reports", list}});
  });
  http_->get(R"(/api/v1/diag/([^/]+))", [dir](const httplib::Request& req, httplib::Response& res) {
    if (!onlyParams(req, res, {})) return;
    const std::string n = req.matches[1].str();
    if (!std::regex_match(n, kName)) return jsonError(res, 404, "no diag report '" + n + "'", "name");
    std::ifstream in(dir() + "/" + n);
    if (!in) return jsonError(res, 404, "no diag report '" + n + "'", "name");
    try {
      sendJson(res, json::parse(in));
    } catch (const std::exception&) {
      jsonError(res, 500, "diag report '" + n + "' is not valid JSON", "name");
    }
  });
}

}  // namespace gw::server
