// "Idle while peers busy" (R4) at one instant: the rule `gpuwarden dmon` marks its rows with and the
// agent's /api/v1/latest carries for the dashboard. One home, so that the table and the page never
// disagree about a card. (The health rule `straggler`, rules_workload.cpp, judges the same shape
// over a held window with its own configurable thresholds and opens an incident; this one only
// marks a sample.)
#pragma once

#include <cstddef>
#include <vector>

namespace gw::health {

// At most this busy ...
inline constexpr double kIdleUtilPct = 10;
// ... while the other GPUs of the same sample average at least this.
inline constexpr double kBusyPeersUtilPct = 60;

// One verdict per entry of `util` (GPU utilisation in %, one per full GPU of the same sample; a
// negative value is a GPU that did not answer: never marked and not counted as a peer). Needs at
// least two GPUs that answered.
inline std::vector<bool> idleWhilePeersBusy(const std::vector<double>& util) {
  double sum = 0;
  int answered = 0;
  for (double u : util)
    if (u >= 0) {
      sum += u;
      ++answered;
    }
  std::vector<bool> out(util.size(), false);
  if (answered < 2) return out;
  for (std::size_t g = 0; g < util.size(); ++g) {
    if (util[g] < 0) continue;
    const double others = (sum - util[g]) / (answered - 1);
    out[g] = util[g] <= kIdleUtilPct && others >= kBusyPeersUtilPct;
  }
  return out;
}

}  // namespace gw::health
