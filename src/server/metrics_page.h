// The cacheable part of a /metrics page. Between two sampling passes every scrape would render
// the same series: the page is rendered once per change of what it is made from (the sampler's
// generation, the health incidents, the export options in force, the format) and shared by every
// scrape until then; scrapers arriving together wait for one render instead of each doing it.
// Only the per-scrape tail (sample ages, scrape counters, "# EOF") is rendered per request, from
// the snapshot kept with the page, so a scrape of an unchanged page copies no GPU state at all.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "collect/gpu_view.h"
#include "export/gzip.h"
#include "export/prometheus.h"

namespace gw::server {

struct MetricsPageKey {
  bool sampling = false;          // false while NVML could not be opened
  std::uint64_t generation = 0;   // collect::Sampler::generation()
  std::uint64_t health = 0;       // node::Monitor::metricsKey(), 0 without health
  const void* options = nullptr;  // the ExportOptions in force (replaced on reload, never edited)
  exporter::Format format = exporter::Format::Text004;
  bool operator==(const MetricsPageKey&) const = default;
};

struct MetricsPage {
  MetricsPageKey key;
  std::vector<collect::GpuView> views;  // the snapshot the page was rendered from
  collect::AgentStats stats;
  std::string text;  // exporter::renderSampledMetrics + health series

  // The text as a gzip prefix, compressed on the first gzip scrape and kept with the page.
  const exporter::GzipPrefix& gzip() const;

 private:
  mutable std::once_flag gz_once_;
  mutable exporter::GzipPrefix gz_;
};

class MetricsPageCache {
 public:
  using Maker = std::function<void(MetricsPage&)>;  // fills views, stats and text
  // The page for `key`: the cached one when its key is equal, else a new one made by `make`.
  std::shared_ptr<const MetricsPage> get(const MetricsPageKey& key, const Maker& make);

 private:
  // One slot per format: Prometheus (OpenMetrics) and a person with curl (text) do not evict
  // each other.
  std::mutex mu_[2];
  std::shared_ptr<const MetricsPage> page_[2];
};

}  // namespace gw::server
