// Watches every tested GPU while the GPU tests run: temperature, clocks, power, clock event
// reasons, PCIe link, double-bit ECC and new Xid events, attributed to the running step.
#pragma once

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "diag/diag_nvml.h"
#include "diag/verdicts.h"

namespace gw::diag {

class Watcher {
 public:
  Watcher(DiagNvml& nvml, std::vector<int> gpus, double interval_seconds);
  ~Watcher();
  Watcher(const Watcher&) = delete;
  Watcher& operator=(const Watcher&) = delete;

  // Samples at once, then every interval on a thread until endStep(). Steps do not nest.
  void beginStep(const std::string& step);
  void endStep();  // takes a final sample
  void sampleNow();
  WatchSummary summary(int gpu) const;
  bool watched(int gpu) const;
  // The loop's interval: the one asked for, or 1 s when that was zero or less.
  double intervalSeconds() const { return interval_; }

 private:
  void loop();
  DiagNvml& nvml_;
  std::vector<int> gpus_;
  double interval_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::string step_;
  bool running_ = false;
  std::thread thread_;
  std::map<int, WatchSummary> sums_;
  std::map<int, bool> armed_;
};

}  // namespace gw::diag
