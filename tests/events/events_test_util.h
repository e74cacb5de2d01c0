// Helpers shared by the event source tests.
#pragma once

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "../support/temp_dir.h"
#include "events/gpu_event.h"

namespace gw::events::testing {

// A fresh temporary directory, removed at the end of the test.
class TempDir : public testsupport::TempDir {
 public:
  TempDir() : testsupport::TempDir("gw-events") {}
};

// Collects what a bus publishes.
class Collector {
 public:
  explicit Collector(EventBus& bus) {
    bus.subscribe([this](const GpuEvent& e) {
      std::lock_guard lock(mu_);
      events_.push_back(e);
    });
  }
  std::vector<GpuEvent> events() const {
    std::lock_guard lock(mu_);
    return events_;
  }
  std::size_t size() const {
    std::lock_guard lock(mu_);
    return events_.size();
  }

 private:
  mutable std::mutex mu_;
  std::vector<GpuEvent> events_;
};

// Polls `pred` every 5 ms until it holds or `limit` passes.
inline bool waitFor(const std::function<bool()>& pred,
                    std::chrono::milliseconds limit = std::chrono::milliseconds(5000)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return pred();
}

inline void appendFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::app | std::ios::binary);
  out << text;
}

}  // namespace gw::events::testing
