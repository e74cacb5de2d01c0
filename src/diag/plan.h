// Which tests each level runs, in which order, and for how long.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace gw::diag {

enum class StepKind {
  Node,            // runs once for the node (the doctor's deployment checks)
  PerGpuNvml,      // NVML state of each GPU, no CUDA
  PerGpuSerial,    // CUDA test, one GPU after the other (shared links: PCIe bandwidth)
  PerGpuParallel,  // CUDA test on all GPUs at once (memory test, burn, power)
  Pairs,           // CUDA test on each ordered pair of GPUs (peer-to-peer)
};

struct PlanStep {
  std::string id;     // "memtest"
  std::string title;  // "device memory test"
  StepKind kind = StepKind::Node;
  bool needs_cuda = false;
  bool timed = false;  // runs for `seconds` (scaled by --duration); others take what they take
  double seconds = 0;  // timed: how long; untimed: estimate per GPU (or per pair)
};

struct DiagPlan {
  int level = 1;
  std::vector<PlanStep> steps;
  // Estimated wall time for n GPUs (parallel steps count once, serial per GPU, pairs n(n-1)).
  double estimateSeconds(int gpus) const;
  bool has(const std::string& id) const;
  const PlanStep* find(const std::string& id) const;
};

// The longest timed run, of diag --duration and of burn -d: a week, the longest burn-in anyone asks
// for, and far inside what a clock's time point can hold.
inline constexpr double kMaxTimedSeconds = 7 * 24 * 3600;
// A --duration a plan takes (above 0, at most kMaxTimedSeconds; not NaN), and the range in words.
inline bool validDuration(double seconds) { return seconds > 0 && seconds <= kMaxTimedSeconds; }
inline std::string durationRange() {
  return "above 0 and at most " + std::to_string(static_cast<long>(kMaxTimedSeconds)) + " (a week)";
}

// Level 1, 2 or 3. duration_seconds (--duration) sets the total of the timed steps, which keep
// their nominal proportions; each timed step keeps a floor of one second. A duration not above 0
// or above kMaxTimedSeconds (or not a number) is no plan.
std::optional<DiagPlan> buildPlan(int level, std::optional<double> duration_seconds = {});

double estimateStep(const PlanStep& s, int gpus);

}  // namespace gw::diag
