#include <signal.h>

#include <atomic>
#include <chrono>
#include <sstream>
#include <thread>

#include "cli/commands.h"
#include "nvml/nvml.h"

namespace gw::cli {
namespace {
std::atomic<bool> g_stop{false};
void onSignal(int) { g_stop = true; }
}  // namespace

void installStopHandlers() {
  struct sigaction sa {};
  sa.sa_handler = onSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

bool stopRequested() { return g_stop.load(); }

bool sleepInterruptible(double seconds) {
  using Clock = std::chrono::steady_clock;
  const auto end = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  while (Clock::now() < end) {
    if (g_stop) return false;
    Clock::duration left = end - Clock::now();
    std::this_thread::sleep_for(std::min<Clock::duration>(left, std::chrono::milliseconds(50)));
  }
  return !g_stop;
}

GpuSelection parseSelection(const std::string& spec) {
  GpuSelection sel;
  std::stringstream ss(spec);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (!item.empty()) sel.ids.push_back(item);
  }
  return sel;
}

bool GpuSelection::matches(unsigned index, const std::string& uuid, const std::string& bus_id) const {
  if (ids.empty()) return true;
  for (const auto& id : ids) {
    if (id == std::to_string(index) || id == uuid) return true;
    if (!bus_id.empty() && nvml::normalizeBusId(id) == bus_id) return true;
  }
  return false;
}

}  // namespace gw::cli
