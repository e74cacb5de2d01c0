// `gpuwarden serve`: the monitor (node/monitor.h), the history store, the HTTP server and the
// control socket, composed; the agent holds its data folder's lock for its whole life. Signals:
// SIGHUP reloads the configuration (a bad one is refused, logged, and the old one kept);
// SIGTERM / SIGINT stop cleanly (the store is flushed).
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cluster/pod_resources.h"
#include "collect/sampler.h"
#include "common/result.h"
#include "export/prometheus.h"
#include "nvml/inventory.h"
#include "server/config.h"
#include "node/data_dir.h"
#include "node/monitor.h"
#include "node/control_protocol.h"
#include "node/records.h"
#include "nvml/nvml.h"
#include "platform/fs_root.h"
#include "server/control_server.h"
#include "server/history_query.h"
#include "server/history_sink.h"
#include "server/http_server.h"
#include "server/metrics_page.h"
#include "server/web_config.h"
#include "store/store.h"

namespace gw::server {

// The control op settings.apply (gpuwarden smi's setting flags): from the request's args, the
// caller and the agent's NVML session and filesystem root, the reply, and in *records what
// changed, which the agent records. `gpuwarden serve` installs smi's (cli/smi/smi_settings.h), so
// the agent holds no copy of smi's grammar or messages; none installed: the op is refused.
using SettingsHandler = std::function<nlohmann::json(const nlohmann::json& args, const node::control::Peer& peer,
                                                     const nvml::Session& session, const platform::FsRoot& root,
                                                     std::vector<node::Record>* records)>;

struct AgentOptions {
  std::string config_path;  // empty: built-in defaults
  // Command-line overrides, applied over the file (again after every reload).
  std::optional<std::vector<ListenAddress>> listen;
  std::optional<std::string> data_dir;
  std::optional<MetricsNaming> naming;
  std::optional<std::string> web_config_file;
  // dcgm-exporter's counters file (`serve -f`): its fields replace the configuration's.
  std::optional<std::string> counters_file;
  std::optional<std::string> pod_resources_socket;
  collect::SessionOpener opener;  // opens NVML (real driver or simulator)
  std::string root = "/";         // filesystem root of /dev/kmsg and /proc (health)
  SettingsHandler settings;       // the op settings.apply
};

struct InventorySlot;

class Agent {
 public:
  // Loads and validates the configuration; nothing is started.
  static Result<std::unique_ptr<Agent>> create(AgentOptions options);
  ~Agent();
  Agent(const Agent&) = delete;
  Agent& operator=(const Agent&) = delete;

  // Takes the data folder's lock, opens the store, starts the monitor, listens on HTTP and on the
  // control socket. A driver that is not there at start is not an error: the agent serves
  // /healthz 503 with the reason and keeps trying.
  Status start();
  // Stops serving and sampling, flushes the store.
  void stop();
  // Re-reads the configuration file; on error the running configuration stays.
  Status reload();

  // Blocks SIGHUP/SIGTERM/SIGINT in the calling thread (call before start(), so every thread
  // the agent creates inherits the mask), then run() waits for them.
  static void blockSignals();
  // Until SIGTERM/SIGINT; SIGHUP reloads. Returns the exit code.
  int run();

  std::vector<std::string> boundAddresses() const;
  std::string controlSocketPath() const;
  AgentConfig config() const;

 private:
  explicit Agent(AgentOptions options, AgentConfig config);
  void applyOverrides(AgentConfig& c) const;
  collect::SamplerConfig samplerConfig(const AgentConfig& c) const;
  std::shared_ptr<const exporter::ExportOptions> exportOptions(const AgentConfig& c) const;
  void watchInventory();
  void startPodLabels(const AgentConfig& c);
  void registerRoutes();
  nlohmann::json control(const std::string& op, const nlohmann::json& args, const node::control::Peer& peer);
  // The job.* operations (agent_jobs.cpp); nullopt when `op` is not one of them.
  std::optional<nlohmann::json> controlJobs(const std::string& op, const nlohmann::json& args,
                                            const node::control::Peer& peer);
  // The op settings.apply (smi's setting flags).
  nlohmann::json controlSettings(const nlohmann::json& args, const node::control::Peer& peer);
  void registerDiagRoutes();
  // GET /api/v1/history and the control op `history`: one query, on the sampler's GPUs now.
  HistoryAnswer history(const HistoryQuery& query) const;
  std::shared_ptr<collect::Sampler> sampler() const;

  AgentOptions options_;
  mutable std::mutex mu_;  // guards config_, export_
  AgentConfig config_;
  std::shared_ptr<const exporter::ExportOptions> export_;
  std::shared_ptr<InventorySlot> inventory_;

  std::unique_ptr<node::DataDirLock> lock_;

  std::string data_dir_;       // set once by start()
  std::string history_error_;  // why the history store did not open (history off until restart)
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<HistorySink> sink_;
  std::unique_ptr<HttpServer> http_;
  WebConfig web_;
  std::unique_ptr<alert::Dispatcher> alerts_;  // when alerts.sinks are configured
  std::unique_ptr<node::Monitor> monitor_;
  std::unique_ptr<cluster::k8s::PodResourcesWatcher> pods_;  // when a kubelet socket is in use
  std::unique_ptr<ControlServer> control_;
  std::shared_ptr<node::InstallRecorder> records_;  // null when the records database would not open

  std::atomic<bool> running_{false};
  std::atomic<std::uint64_t> scrapes_{0};
  MetricsPageCache metrics_cache_;
  std::atomic<std::int64_t> last_scrape_us_{0};
  std::mutex watch_mu_;
  std::condition_variable watch_cv_;
  std::thread watcher_;
  std::thread inventory_thread_;
};

}  // namespace gw::server
