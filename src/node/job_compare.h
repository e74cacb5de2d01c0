// `gpuwarden job compare A B` (R35): two runs' fingerprints side by side, to tell a driver
// regression (the same GPUs slower under a new install) from ageing hardware (one GPU slower than
// its peers in both runs, whatever the install). The measure is the SM clock at load (utilisation
// ≥ kLoadUtilPct): what the GPU could sustain, comparable between jobs of different lengths.
#pragma once

#include <nlohmann/json.hpp>

namespace gw::node {

// A GPU is slower when its clock at load is this much below the other run's, or its peers'.
inline constexpr double kSlowerFraction = 0.03;

// a, b: two job documents (jobJson). Returns {"verdict": "driver_regression" | "ageing_hardware"
// | "both" | "no_difference" | "not_comparable", "summary", "install_changed", "changes",
// "gpus": [{uuid, index_a, index_b, clock_a, clock_b, change_pct, peers_a_pct, peers_b_pct}],
// "slower_gpus": [...], "ageing_gpus": [...]}.
nlohmann::json compareJobs(const nlohmann::json& a, const nlohmann::json& b);

}  // namespace gw::node
