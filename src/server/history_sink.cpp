#include "server/history_sink.h"

#include <mutex>

namespace gw::server {

void HistorySink::onSample(const collect::GpuIdentity& gpu, const fields::Field& field, std::int64_t ts_ms,
                           double value) {
  std::string key;
  key.reserve(gpu.uuid.size() + 1 + field.key.size());
  key.append(gpu.uuid).append(1, '/').append(field.key);
  store::SeriesId id = 0;
  bool known = false;
  {
    std::shared_lock lock(mu_);
    auto it = ids_.find(key);
    if (it != ids_.end()) id = it->second, known = true;
  }
  if (!known) {
    auto r = store_.series(gpu.uuid, field.key);
    if (!r) {
      failures_.fetch_add(1);
      return;
    }
    id = *r;
    std::unique_lock lock(mu_);
    ids_.emplace(key, id);
  }
  if (!store_.append(id, ts_ms, value)) failures_.fetch_add(1);
}

std::optional<store::SeriesId> HistorySink::find(const std::string& uuid, std::string_view field) const {
  const std::string key = uuid + "/" + std::string(field);
  {
    std::shared_lock lock(mu_);
    auto it = ids_.find(key);
    if (it != ids_.end()) return it->second;
  }
  // Series from before a restart that have not been written since.
  for (const auto& s : store_.listSeries()) {
    if (s.gpu_uuid == uuid && s.field == field) {
      std::unique_lock lock(mu_);
      ids_.emplace(key, s.id);
      return s.id;
    }
  }
  return std::nullopt;
}

}  // namespace gw::server
