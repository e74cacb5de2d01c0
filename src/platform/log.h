// One line per event on stderr: "2024-05-01T12:00:00.123Z gpuwarden level: message"; under
// systemd's journal each line starts with its priority ("<4>" for a warning), so that
// `journalctl -p warning` finds the warnings.
#pragma once

#include <chrono>
#include <mutex>
#include <string>

namespace gw::platform {

void logLine(const std::string& level, const std::string& message);

// Bounds a source of log lines that someone outside could make flood the log (a hostile client's
// connections): at most `burst` lines per `window`; the ones past it are counted, and the count is
// handed back with the first line let through in a later window, so the log says what it lost.
// The caller passes the time, so the bounds are tested on a made-up clock.
class LogLimiter {
 public:
  using Clock = std::chrono::steady_clock;
  LogLimiter(int burst, Clock::duration window) : burst_(burst), window_(window) {}
  struct Admit {
    bool log = false;        // write this line
    int suppressed_now = 0;  // > 0: first say that this many were left out since the last line
  };
  Admit admit(Clock::time_point now);

 private:
  std::mutex mu_;
  const int burst_;
  const Clock::duration window_;
  bool started_ = false;
  Clock::time_point window_start_{};
  int in_window_ = 0, suppressed_ = 0;
};

}  // namespace gw::platform
