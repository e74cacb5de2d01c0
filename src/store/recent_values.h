// Latest value of every (GPU index, field index), for the exporter and the health rules.
//
// A fixed table set up once. Each slot is a seqlock: a writer never waits for readers, and a
// reader retries only while a write to that very slot is in progress (a few nanoseconds).
// Writers to the same slot are serialised by the seqlock itself, so several writers are safe,
// though the collector normally has one writer (the GPU's worker) per slot.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

namespace gw::store {

struct RecentSample {
  int64_t ts_ms;
  double value;
};

class RecentValues {
 public:
  RecentValues(size_t gpus, size_t fields);

  size_t gpus() const { return gpus_; }
  size_t fields() const { return fields_; }

  // Out-of-range indexes are ignored (set) or read as absent (get).
  void set(size_t gpu, size_t field, int64_t ts_ms, double value);
  // Marks the value missing, e.g. when a GPU is lost or a field starts failing: the exporter
  // then omits it rather than repeating a stale number.
  void clear(size_t gpu, size_t field);
  std::optional<RecentSample> get(size_t gpu, size_t field) const;

 private:
  struct Slot {
    std::atomic<uint64_t> seq{0};  // odd while a write is in progress
    std::atomic<bool> present{false};
    std::atomic<int64_t> ts{0};
    std::atomic<double> value{0};
  };
  Slot* slot(size_t gpu, size_t field) const;
  void write(Slot& s, bool present, int64_t ts_ms, double value);

  size_t gpus_;
  size_t fields_;
  std::unique_ptr<Slot[]> slots_;
};

}  // namespace gw::store
