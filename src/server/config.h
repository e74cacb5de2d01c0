// The agent's configuration (docs/config.md): a YAML file, every key optional, unknown keys and
// bad values refused with "file:line: field: message".
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "alert/sinks.h"
#include "common/result.h"
#include "export/prometheus.h"
#include "health/rules.h"
#include "node/data_dir.h"
#include "server/http_settings.h"

namespace gw::server {

using Millis = std::chrono::milliseconds;

using MetricsNaming = exporter::Naming;

// alerts: (docs/config.md): the agent pushes incidents to these sinks (none: no alerts).
struct AlertSettings {
  std::vector<alert::SinkConfig> sinks;
  std::optional<Millis> repeat_interval;                 // unset: 1m with an alertmanager sink, else 4h
  std::string min_severity = "warning";                  // info | warning | critical | fatal
  std::string runbook_base{alert::kDefaultRunbookBase};  // an absolute URL; runbook_url = it + "#<entry>"
  // The dispatcher's repeat interval: the configured one, else the default above.
  Millis effectiveRepeatInterval() const;
};

struct AgentConfig {
  std::string source = "<defaults>";  // file the config came from, for messages
  std::vector<ListenAddress> listen;  // default ":9400"
  std::string data_dir = node::defaultDataDir();
  // sampling
  Millis fast_interval{1000};
  Millis slow_interval{10000};
  Millis call_deadline{2000};
  std::vector<std::string> fields;  // catalog keys (resolved); empty = every numeric field
  // metrics
  MetricsNaming naming = MetricsNaming::Dcgm;
  std::vector<std::pair<std::string, std::string>> extra_labels;
  // The host label's name (nullopt: the naming's Hostname / hostname; "": none) and value
  // (nullopt: $NODE_NAME when set, else the host name).
  std::optional<std::string> host_label;
  std::optional<std::string> host_value;
  // dcgm naming: DCGM_FI_DRIVER_VERSION on each GPU series (a counters file without that line,
  // like dcgm-exporter's default-counters.csv, turns it off).
  bool dcgm_driver_version_label = true;
  // From a counters file: the DCGM fields it names that gpuwarden does not collect ("FILE:LINE
  // NAME"), logged once by the agent.
  std::vector<std::string> counters_skipped;
  Millis xid_zero_hold{120000};  // a new Xid counter shows 0 this long first (node::MonitorOptions)
  // history
  bool history_enabled = true;
  std::chrono::hours raw_retention{24};
  std::chrono::hours downsampled_retention{24 * 30};
  Millis flush_interval{5000};
  HttpLimits http;
  // A Prometheus exporter web configuration (TLS, basic auth); empty: plain HTTP, no auth.
  std::string web_config_file;
  AlertSettings alerts;
  // events: events.jsonl is rotated to events.jsonl.1 when it would grow past this.
  std::size_t events_max_bytes = 16 << 20;
  // health: the rules' thresholds, holds, switches and workload classes (docs/health.md).
  health::RuleConfig health;
  // jobs (docs/jobs.md)
  struct Jobs {
    // A dcgm-exporter job-mapping folder (its --hpc-job-mapping-dir) to read jobs from; "" off.
    std::string hpc_job_mapping_dir;
    // `slurm epilog` kills the processes a job left on its GPUs (default: reports them only).
    bool epilog_kill_leftovers = false;
  } jobs;
  // kubernetes (docs/kubernetes.md)
  struct Kubernetes {
    // The kubelet's pod-resources socket. Unset: its default path, used when it is there at
    // start; "": off.
    std::optional<std::string> pod_resources_socket;
    Millis refresh_interval{10000};
    Millis timeout{2000};  // deadline of each call to the kubelet
  } kubernetes;

  AgentConfig();
};

// Bounds on what a configuration may hold.
inline constexpr std::size_t kMaxConfigBytes = 1 << 20;  // the file
inline constexpr std::size_t kMaxExtraLabels = 64;       // metrics.extra_labels entries
inline constexpr std::size_t kMaxLabelNameBytes = 128;
inline constexpr std::size_t kMaxLabelValueBytes = 1024;

// $NODE_NAME (the Kubernetes downward API's node name, dcgm-exporter's host label there) when it is
// set and fits a label value; nullopt otherwise.
std::optional<std::string> nodeNameFromEnv();

// Selects the fields (and the driver-version label) of dcgm-exporter's counters file at `path`
// (server/counters_file.h): sampling.counters_file and `serve -f`.
Status applyCountersFile(AgentConfig& cfg, const std::string& path);
// Durations: at most 10 years, so that any deadline computed from one fits a clock.
inline constexpr std::int64_t kMaxDurationMs = 3650LL * 86400000;

// Parses YAML text; duplicate keys refused; `filename` only names the source in error messages.
Result<AgentConfig> parseConfig(std::string_view yaml, const std::string& filename);
// Only a regular file of at most kMaxConfigBytes (a directory, FIFO or device is refused).
Result<AgentConfig> loadConfig(const std::string& path);

// ":9400", "127.0.0.1:9400", "[::1]:9400", "localhost:0".
Result<ListenAddress> parseListenAddress(std::string_view text);
// "100ms", "1s", "10m", "1h30m", "2d": positive durations with units, at most kMaxDurationMs.
Result<Millis> parseDuration(std::string_view text);

// What changed between two configs that a reload cannot apply (listen, data dir, HTTP limits):
// empty when the new config can be applied in place.
std::vector<std::string> restartOnlyChanges(const AgentConfig& a, const AgentConfig& b);

}  // namespace gw::server
