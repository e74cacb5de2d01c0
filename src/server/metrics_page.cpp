#include "server/metrics_page.h"

namespace gw::server {

const exporter::GzipPrefix& MetricsPage::gzip() const {
  std::call_once(gz_once_, [this] { exporter::gzipPrefix(text, gz_); });
  return gz_;
}

std::shared_ptr<const MetricsPage> MetricsPageCache::get(const MetricsPageKey& key, const Maker& make) {
  const std::size_t slot = key.format == exporter::Format::OpenMetrics ? 1 : 0;
  std::lock_guard lock(mu_[slot]);
  if (page_[slot] && page_[slot]->key == key) return page_[slot];
  auto page = std::make_shared<MetricsPage>();
  page->key = key;
  make(*page);
  page_[slot] = std::move(page);
  return page_[slot];
}

}  // namespace gw::server
