#include "sim/sim_clock.h"

#include <time.h>

#include <cstdio>
#include <cstdlib>

namespace gw::sim {

std::int64_t wallNanos() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

double realModeSeconds(double start, double speed, std::int64_t origin_ns, std::int64_t now_ns) {
  // Scaled before dividing: with a whole-number speed the product is an exact integer, and one
  // correctly rounded division then lands exactly on whole seconds (1e-9 * n would not).
  const auto elapsed_ns = static_cast<double>(now_ns - origin_ns);
  return start + speed * elapsed_ns / 1e9;
}

SimClock::SimClock(ClockSettings s) : settings_(s), manual_t_(s.start) {}

void SimClock::start() {
  if (started_.load(std::memory_order_acquire)) return;
  origin_ns_ = wallNanos();
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
  const std::int64_t w = wallNanos();
  if (file_read_at_ns_ >= 0 && w - file_read_at_ns_ < 10'000'000) return manual_t_.load(std::memory_order_relaxed);
  file_read_at_ns_ = w;
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
  return realModeSeconds(settings_.start, settings_.speed, origin_ns_, wallNanos()) +
         offset_.load(std::memory_order_relaxed);
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
