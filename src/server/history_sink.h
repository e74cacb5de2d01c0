// Feeds the sampler's samples into the history store: one series per (GPU UUID, field key).
#pragma once

#include <memory>
#include <optional>
#include <shared_mutex>
#include <string>
#include <unordered_map>

#include "collect/sampler.h"
#include "store/store.h"

namespace gw::server {

class HistorySink : public collect::SampleSink {
 public:
  explicit HistorySink(store::Store& store) : store_(store) {}
  void onSample(const collect::GpuIdentity& gpu, const fields::Field& field, std::int64_t ts_ms, double value) override;
  // The series of (uuid, key) if it exists (never creates one).
  std::optional<store::SeriesId> find(const std::string& uuid, std::string_view key) const;
  std::uint64_t failures() const { return failures_.load(); }

 private:
  store::Store& store_;
  mutable std::shared_mutex mu_;
  mutable std::unordered_map<std::string, store::SeriesId> ids_;  // uuid + '/' + key
  std::atomic<std::uint64_t> failures_{0};
};

}  // namespace gw::server
