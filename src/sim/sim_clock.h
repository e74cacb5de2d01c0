// Simulated time. Real mode: START + SPEED x wall seconds since the scenario's first nvmlInit;
// manual mode: only gwSimSetTime moves it. In both, time never runs backwards.
#pragma once

#include <atomic>

namespace gw::sim {

struct ClockSettings {
  bool manual = false;
  double start = 0;
  double speed = 1;
};

// Monotonic wall seconds from the coarse clock: a few ms of resolution is plenty for a
// simulation stepped in seconds, and it costs a fraction of a precise clock read.
double wallSeconds();

class SimClock {
 public:
  explicit SimClock(ClockSettings s);
  // Starts the wall-clock origin; later calls do nothing.
  void start();
  double now() const;
  void set(double t);
  bool manual() const { return settings_.manual; }
  double speed() const { return settings_.speed; }

 private:
  ClockSettings settings_;
  std::atomic<bool> started_{false};
  double origin_ = 0;  // wallSeconds() at start()
  std::atomic<double> manual_t_;
  std::atomic<double> offset_{0};  // added by gwSimSetTime in real mode
};

}  // namespace gw::sim
