// Simulated time. Real mode: START + SPEED x wall seconds since the scenario's first nvmlInit;
// manual mode: only gwSimSetTime moves it; file mode: the number of seconds written in a file
// (re-read at most every 10 ms), so a test can step a separate process's clock. In all, time
// never runs backwards.
#pragma once

#include <atomic>
#include <mutex>
#include <string>

namespace gw::sim {

struct ClockSettings {
  bool manual = false;
  std::string file;  // file mode when set: the simulated seconds are what it holds
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
  bool manual() const { return settings_.manual || !settings_.file.empty(); }
  double speed() const { return settings_.speed; }

 private:
  ClockSettings settings_;
  std::atomic<bool> started_{false};
  double origin_ = 0;                     // wallSeconds() at start()
  mutable std::atomic<double> manual_t_;  // manual and file modes (file mode raises it when reading)
  std::atomic<double> offset_{0};         // added by gwSimSetTime in real mode
  // file mode: when the file was last read (wall seconds), under file_mu_
  mutable std::mutex file_mu_;
  mutable double file_read_at_ = -1;
  double fromFile() const;
};

}  // namespace gw::sim
