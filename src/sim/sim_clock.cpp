#include "sim/sim_clock.h"

#include <time.h>

namespace gw::sim {

double wallSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

SimClock::SimClock(ClockSettings s) : settings_(s), manual_t_(s.start) {}

void SimClock::start() {
  if (started_.load(std::memory_order_acquire)) return;
  origin_ = wallSeconds();
  started_.store(true, std::memory_order_release);
}

double SimClock::now() const {
  if (settings_.manual) return manual_t_.load(std::memory_order_relaxed);
  if (!started_.load(std::memory_order_acquire)) return settings_.start + offset_.load(std::memory_order_relaxed);
  return settings_.start + settings_.speed * (wallSeconds() - origin_) + offset_.load(std::memory_order_relaxed);
}

void SimClock::set(double t) {
  if (settings_.manual) {
    double cur = manual_t_.load(std::memory_order_relaxed);
    while (t > cur && !manual_t_.compare_exchange_weak(cur, t, std::memory_order_relaxed)) {
    }
    return;
  }
  double off = offset_.load(std::memory_order_relaxed);
  for (;;) {
    double current = now();
    if (t <= current) return;
    if (offset_.compare_exchange_weak(off, off + (t - current), std::memory_order_relaxed)) return;
  }
}

}  // namespace gw::sim
