// Simulated time. Real mode: START + SPEED x wall seconds since the scenario's first nvmlInit;
// manual mode: only gwSimSetTime moves it; file mode: the number of seconds written in a file
// (re-read at most every 10 ms), so a test can step a separate process's clock. In all, time
// never runs backwards.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>

namespace gw::sim {

struct ClockSettings {
  bool manual = false;
  std::string file;  // file mode when set: the simulated seconds are what it holds
  double start = 0;
  double speed = 1;
};

// Monotonic wall time in whole nanoseconds. The precise clock, not the coarse one: a coarse reading
// is the time of the last tick, and the kernel slews tick lengths, so after a 1 s sleep the coarse
// clock can have moved 0.99999997 s and a simulation stepped in whole seconds repeats a step. Kept
// as an integer so an elapsed time is exact however long the machine has been up.
std::int64_t wallNanos();
// Simulated seconds in real mode: `start` plus `speed` times the wall time from origin_ns to now_ns.
// Exact when the elapsed time is a whole number of steps: a caller that slept 1 s reads the next
// step, never the one before it.
double realModeSeconds(double start, double speed, std::int64_t origin_ns, std::int64_t now_ns);

class SimClock {
 public:
  explicit SimClock(ClockSettings s);
  // Starts the wall-clock origin; later calls do nothing.
  void start();
  double now() const;
  void set(double t);
  bool manual() const { return settings_.manual || !settings_.file.empty(); }
  double speed() const { return settings_.speed; }

 private:
  ClockSettings settings_;
  std::atomic<bool> started_{false};
  std::int64_t origin_ns_ = 0;            // wallNanos() at start()
  mutable std::atomic<double> manual_t_;  // manual and file modes (file mode raises it when reading)
  std::atomic<double> offset_{0};         // added by gwSimSetTime in real mode
  // file mode: when the file was last read (wallNanos()), under file_mu_
  mutable std::mutex file_mu_;
  mutable std::int64_t file_read_at_ns_ = -1;
  double fromFile() const;
};

}  // namespace gw::sim
