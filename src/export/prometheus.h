// The /metrics exporter: renders the sampler's per-GPU views as Prometheus text format 0.0.4 or
// OpenMetrics 1.0, in dcgm-exporter's naming (drop-in for existing dashboards and alert rules) or
// in gpuwarden's native, base-unit naming. A pure function of its inputs: no NVML, no HTTP, no
// clock unless SelfMetrics::now_ms is left at 0.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collect/gpu_view.h"
#include "fields/catalog.h"

namespace gw::exporter {

enum class Naming {
  Dcgm,    // DCGM_FI_DEV_GPU_TEMP{gpu="0",UUID="GPU-…",pci_bus_id=…,device=…,modelName=…,Hostname=…}
  Native,  // gpuwarden_gpu_temperature_celsius{gpu="0",uuid="GPU-…",pci_bus_id=…,model=…,hostname=…}
};
enum class Format { Text004, OpenMetrics };

// The label a GPU's series carry while a job runs on it (dcgm-exporter's name; the value is the
// job id, or the ids of several jobs sharing the GPU joined by commas).
inline constexpr const char* kHpcJobLabel = "hpc_job";
// The labels a GPU's series carry while a Kubernetes container holds it (dcgm-exporter's names;
// several containers sharing the GPU: each label's values joined by commas, in the same order).
inline constexpr const char* kPodLabel = "pod";
inline constexpr const char* kNamespaceLabel = "namespace";
inline constexpr const char* kContainerLabel = "container";

struct ExportOptions {
  Naming naming = Naming::Dcgm;
  // Which fields to export; empty = every numeric catalog field that has a name in this naming.
  // Label fields, fields without a name in this naming and duplicates are ignored.
  std::vector<const fields::Field*> fields;
  // Added to every series (e.g. cluster="a"). Names that are not valid Prometheus label names,
  // start with "__", or collide with a label the exporter sets itself are ignored; validate
  // configuration with isValidExtraLabel() to refuse them up front.
  std::map<std::string, std::string> extra_labels;
  bool include_mig = true;
  // Dcgm naming only: add DCGM_FI_DRIVER_VERSION="…" to each GPU series, as dcgm-exporter does
  // with its default metric list (dcp-metrics-included.csv, the one the GPU Operator and the Helm
  // chart deploy). Off matches a dcgm-exporter run with etc/default-counters.csv.
  bool dcgm_driver_version_label = true;
  // The host label: its name (nullopt: the naming's, Hostname or hostname; "": none, as
  // dcgm-exporter's --no-hostname) and its value (nullopt: the sampler's host name; in Kubernetes
  // the node's name, NODE_NAME, as dcgm-exporter takes it). Validated by the configuration.
  std::optional<std::string> host_label;
  std::optional<std::string> host_value;
};

struct SelfMetrics {
  double last_scrape_duration_seconds = 0;  // how long the previous scrape took to render and send
  double sample_lag_seconds_max = 0;        // the sampler's worst lag over all GPUs
  std::uint64_t scrapes = 0;                // scrapes served so far
  std::int64_t now_ms = 0;                  // wall clock of this scrape (ms since epoch); 0: read it
  std::string_view version;                 // gpuwarden's version; empty: the build's version
};

// Appends the exposition to `out`. Reuse `out` (cleared) between scrapes: once it and the
// exporter's thread-local scratch have grown to the size of a scrape, rendering allocates nothing.
//
// Rules: a field value that is not valid is omitted (never printed as 0); a GPU that is not Up
// (stalled, lost, down) has its field series omitted (stale values are not served as fresh) but
// its state series (gpuwarden_gpu_up, gpuwarden_gpu_state, …) are present. Every family is
// contiguous, with one HELP/TYPE (and UNIT in OpenMetrics), and is left out when it has no series.
// OpenMetrics output ends with "# EOF".
void renderMetrics(std::string& out, const std::vector<collect::GpuView>& gpus, const collect::AgentStats& agent,
                   const SelfMetrics& self, const ExportOptions& o, Format f);

// renderMetrics in two parts, so that a server can render the first once per sampling pass and
// reuse it. The sampled part depends only on the GPUs' samples and states, the agent's driver
// state and the options (version: "" = the build's); it ends without "# EOF". The scrape part
// holds what changes with every scrape (each GPU's sample age, the scrape count and duration)
// and the closing "# EOF" of OpenMetrics. sampled + scrape == renderMetrics, byte for byte.
void renderSampledMetrics(std::string& out, const std::vector<collect::GpuView>& gpus, const collect::AgentStats& agent,
                          const ExportOptions& o, Format f, std::string_view version = {});
void renderScrapeMetrics(std::string& out, const std::vector<collect::GpuView>& gpus, const collect::AgentStats& agent,
                         const SelfMetrics& self, const ExportOptions& o, Format f);

// The health service's results for one page, as plain data: the server fills it from health/ and
// events/, and the exporter prints it with each GPU's own label set, so that the health and Xid
// series join with the field series on every label (extra labels and the driver label included).
struct HealthSeries {
  struct Gpu {
    std::string uuid;   // a GPU (not a MIG device) of the views; one that is not there is left out
    std::string state;  // its current health state, one of `states`
  };
  struct Xid {
    int gpu_index = -1;  // -1: the source did not know it
    std::string uuid;    // "": the source knew only the index
    int code = 0;
    std::uint64_t count = 0;   // since the event log began
    std::int64_t last_ms = 0;  // the latest of them; 0: unknown
  };
  // Every health state, in the order the series are printed: gpuwarden_gpu_health{state} is 1 for
  // a GPU's current state and 0 for the others.
  std::vector<std::string> states;
  std::vector<Gpu> gpus;
  // Each open incident of a GPU (one of `gpus`): gpuwarden_gpu_finding{rule, severity} 1, so that a
  // fleet view over Prometheus can say what is wrong with a GPU, not only that something is.
  struct Finding {
    std::string uuid;
    std::string rule;
    std::string severity;
  };
  std::vector<Finding> findings;
  // Unresolved incidents per severity, in the order printed; a severity with none is listed with 0.
  std::vector<std::pair<std::string, std::uint64_t>> open_incidents;
  std::vector<Xid> xids;
};

// Appends gpuwarden_gpu_health, gpuwarden_incidents_open, gpuwarden_xid_errors_total and (dcgm naming)
// DCGM_FI_DEV_XID_ERRORS, dcgm-exporter's gauge of each GPU's latest Xid code (0: none yet), after
// renderSampledMetrics (before the scrape part, so before "# EOF"). A GPU's series carry the labels
// its field series carry; an Xid of a GPU that is not among `gpus` (replaced, or known to the
// kernel log by index only) keeps the naming's label names, with what is known filled in. Xid
// counts that land on the same GPU and code are added up.
void renderHealthMetrics(std::string& out, const HealthSeries& health, const std::vector<collect::GpuView>& gpus,
                         const collect::AgentStats& agent, const ExportOptions& o, Format f);

// The data folder's health, as plain data (the server fills it from platform::storageHealth() and
// the history store's stats).
struct StorageSeries {
  bool ok = true;  // no file of the data folder is refusing writes now
  struct File {
    std::string file;  // the file's name in the data folder ("history.db")
    std::uint64_t write_errors = 0;
    std::uint64_t moved_aside = 0;  // found damaged and moved aside
  };
  std::vector<File> files;  // the files written so far, by name
  bool history = false;     // a history store is running: its series below are printed
  std::uint64_t history_pending_bytes = 0;
  std::uint64_t history_dropped_samples = 0;
  std::uint64_t history_corrupt_chunks = 0;
};

// Appends gpuwarden_storage_ok, gpuwarden_storage_write_errors_total{file},
// gpuwarden_storage_damaged_files_total{file} and, with history, gpuwarden_history_pending_bytes,
// gpuwarden_history_dropped_samples_total and gpuwarden_history_corrupt_chunks_total, with the
// agent's labels. Per scrape: render it before renderScrapeMetrics (which closes OpenMetrics).
void renderStorageMetrics(std::string& out, const StorageSeries& storage, const std::vector<collect::GpuView>& gpus,
                          const collect::AgentStats& agent, const ExportOptions& o, Format f);

// OpenMetrics when the scraper asks for application/openmetrics-text at least as strongly as for
// text/plain (Prometheus ≥ 2.5 does), else Text004. The dcgm naming answers Text004 whenever the
// scraper takes it at all, as dcgm-exporter does: its counters' names lack OpenMetrics' _total,
// which OpenMetrics would add (DCGM_FI_DEV_XID_ERRORS would be stored as ..._total). Served
// OpenMetrics anyway (a scraper that takes nothing else), they are typed counter with _total.
Format negotiateFormat(std::string_view accept_header, Naming naming = Naming::Native);
std::string_view contentType(Format f);

// "dcgm" / "native" (the values of --metrics-naming).
std::optional<Naming> parseNaming(std::string_view s);
std::string_view namingName(Naming n);

bool isValidLabelName(std::string_view name);
// True when `name` may be used as an extra label in this naming (valid, not reserved, not set by
// the exporter itself).
bool isValidExtraLabel(std::string_view name, Naming n);

// The metric name a field is exported under in a naming ("" when it has none). For Native
// counters this is the sample name, ending in _total.
std::string_view metricName(const fields::Field& f, Naming n);

// The Markdown mapping table of docs/metrics.md (between its GENERATED markers), rendered from
// the catalog; a test keeps the file in sync.
std::string renderMetricsTableMarkdown();

}  // namespace gw::exporter
