// Utilisation over time for each workload preset.
#pragma once

#include <cstdint>

#include "sim/scenario.h"

namespace gw::sim {

// GPU utilisation in percent at integration step `step` (one step = kStepSeconds).
double utilizationAt(const Workload& w, std::uint64_t seed, unsigned gpu, std::int64_t step);
// Memory-controller utilisation as a fraction of GPU utilisation, per preset.
double memoryUtilRatio(const Workload& w);
// How hard the preset drives the power rail relative to a compute-bound load.
double powerIntensity(const Workload& w);
// Share of PCIe bandwidth used at 100 % utilisation: {tx, rx}.
void pcieShare(const Workload& w, double* tx, double* rx);
// Share of NVLink bandwidth used at 100 % utilisation.
double nvlinkShare(const Workload& w);

// What a preset's kernels keep busy, as fractions of the GPM activity (the share of SMs with work):
// SMs with a warp, warp occupancy, and the tensor, FP64, FP32 and FP16 pipes.
struct GpmMix {
  double sm, occupancy, tensor, fp64, fp32, fp16;
};
GpmMix gpmMix(const Workload& w);

}  // namespace gw::sim
