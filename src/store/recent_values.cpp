#include "store/recent_values.h"

namespace gw::store {

RecentValues::RecentValues(size_t gpus, size_t fields)
    : gpus_(gpus), fields_(fields), slots_(std::make_unique<Slot[]>(gpus * fields)) {}

RecentValues::Slot* RecentValues::slot(size_t gpu, size_t field) const {
  if (gpu >= gpus_ || field >= fields_) return nullptr;
  return &slots_[gpu * fields_ + field];
}

void RecentValues::write(Slot& s, bool present, int64_t ts_ms, double value) {
  // Take the slot: move seq from even to odd. Another writer on the same slot makes us spin
  // for the duration of its three stores.
  uint64_t seq = s.seq.load(std::memory_order_relaxed);
  for (;;) {
    if ((seq & 1) == 0 &&
        s.seq.compare_exchange_weak(seq, seq + 1, std::memory_order_acquire, std::memory_order_relaxed))
      break;
    seq = s.seq.load(std::memory_order_relaxed);
  }
  // The data stores must not become visible before the odd seq.
  std::atomic_thread_fence(std::memory_order_release);
  s.present.store(present, std::memory_order_relaxed);
  s.ts.store(ts_ms, std::memory_order_relaxed);
  s.value.store(value, std::memory_order_relaxed);
  s.seq.store(seq + 2, std::memory_order_release);
}

void RecentValues::set(size_t gpu, size_t field, int64_t ts_ms, double value) {
  if (Slot* s = slot(gpu, field)) write(*s, true, ts_ms, value);
}

void RecentValues::clear(size_t gpu, size_t field) {
  if (Slot* s = slot(gpu, field)) write(*s, false, 0, 0);
}

std::optional<RecentSample> RecentValues::get(size_t gpu, size_t field) const {
  const Slot* s = slot(gpu, field);
  if (s == nullptr) return std::nullopt;
  for (;;) {
    const uint64_t before = s->seq.load(std::memory_order_acquire);
    if (before & 1) continue;  // a write is in progress
    const bool present = s->present.load(std::memory_order_relaxed);
    const int64_t ts = s->ts.load(std::memory_order_relaxed);
    const double value = s->value.load(std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (s->seq.load(std::memory_order_relaxed) != before) continue;
    if (!present) return std::nullopt;
    return RecentSample{ts, value};
  }
}

}  // namespace gw::store
