#include "sim/sim_clock.h"

#include <time.h>

#include <cstdio>
#include <cstdlib>

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

namespace {
void raiseTo(std::atomic<double>& v, double t) {
  double cur = v.load(std::memory_order_relaxed);
  while (t > cur && !v.compare_exchange_weak(cur, t, std::memory_order_relaxed)) {
  }
}
}  // namespace

// Reading a small file on every NVML call would cost more than the call; 10 ms is far finer than
// any step a test takes. A missing, empty or malformed file leaves the time where it was.
double SimClock::fromFile() const {
  std::unique_lock lock(file_mu_, std::try_to_lock);
  if (!lock.owns_lock()) return manual_t_.load(std::memory_order_relaxed);
  const double w = wallSeconds();
  if (file_read_at_ >= 0 && w - file_read_at_ < 0.01) return manual_t_.load(std::memory_order_relaxed);
  file_read_at_ = w;
  if (FILE* f = std::fopen(settings_.file.c_str(), "re")) {
    char buf[64] = {0};
    const std::size_t n = std::fread(buf, 1, sizeof buf - 1, f);
    std::fclose(f);
    buf[n] = '\0';
    char* end = nullptr;
    const double t = std::strtod(buf, &end);
    if (end != buf && t >= 0 && t < 1e12) raiseTo(manual_t_, t);
  }
  return manual_t_.load(std::memory_order_relaxed);
}

double SimClock::now() const {
  if (!settings_.file.empty()) return fromFile();
  if (settings_.manual) return manual_t_.load(std::memory_order_relaxed);
  if (!started_.load(std::memory_order_acquire)) return settings_.start + offset_.load(std::memory_order_relaxed);
  return settings_.start + settings_.speed * (wallSeconds() - origin_) + offset_.load(std::memory_order_relaxed);
}

void SimClock::set(double t) {
  if (manual()) {
    raiseTo(manual_t_, t);
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
