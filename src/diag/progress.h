// Progress of a diagnostic run: a bar with ETA on a terminal, one quiet line per step otherwise.
#pragma once

#include <chrono>
#include <mutex>
#include <ostream>
#include <string>

#include "diag/report.h"

namespace gw::diag {

class ProgressSink {
 public:
  virtual ~ProgressSink() = default;
  // A step starts: index of count, its title, and its estimated seconds.
  virtual void stepStarted(int index, int count, const std::string& title, double estimate) {
    (void)index, (void)count, (void)title, (void)estimate;
  }
  // Overall fraction done in [0,1] and estimated seconds left.
  virtual void progress(double fraction, double eta_seconds, const std::string& activity) {
    (void)fraction, (void)eta_seconds, (void)activity;
  }
  virtual void checkDone(const Check& c) { (void)c; }
  virtual void finished(const DiagReport& r) { (void)r; }
};

class NullProgress : public ProgressSink {};

// interactive: redraws "\r[#####.....]  42%  memtest  ETA 1:23" (at most ~5 times a second);
// otherwise prints a line when a step starts and when a check warns or fails.
class TextProgress : public ProgressSink {
 public:
  TextProgress(std::ostream& out, bool interactive) : out_(out), interactive_(interactive) {}
  void stepStarted(int index, int count, const std::string& title, double estimate) override;
  void progress(double fraction, double eta_seconds, const std::string& activity) override;
  void checkDone(const Check& c) override;
  void finished(const DiagReport& r) override;

  static std::string formatEta(double seconds);  // "1:23", "12:05", "1:02:03"
  static std::string bar(double fraction, int width);

 private:
  void clearLine();
  std::ostream& out_;
  bool interactive_;
  std::mutex mu_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace gw::diag
