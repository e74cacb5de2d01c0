#include "sim/workload.h"

#include <algorithm>
#include <cmath>

#include "sim/noise.h"

namespace gw::sim {
namespace {

constexpr double kPi = 3.14159265358979323846;

double clamp(double v) { return std::clamp(v, 0.0, 100.0); }

double curveAt(const Workload& w, double t) {
  const auto& c = w.curve;
  if (t <= c.front().first) return c.front().second;
  for (std::size_t i = 1; i < c.size(); ++i) {
    if (t < c[i].first) {
      double f = (t - c[i - 1].first) / (c[i].first - c[i - 1].first);
      return c[i - 1].second + f * (c[i].second - c[i - 1].second);
    }
  }
  return c.back().second;
}

}  // namespace

double utilizationAt(const Workload& w, std::uint64_t seed, unsigned gpu, std::int64_t step) {
  double n = noise(seed, gpu, Signal::kUtil, step);
  switch (w.preset) {
    case WorkloadPreset::kIdle: {
      double base = w.level.value_or(0);
      return clamp(base + (n > 0.8 ? 1 : 0));
    }
    case WorkloadPreset::kTraining: {
      // Steady near the top, with a short dip every 10 minutes (checkpoint / evaluation).
      double base = w.level.value_or(95);
      std::int64_t phase = step % 600;
      if (step >= 600 && phase < 5) return clamp(base * 0.1 + 3 * n);
      return clamp(base + 2.5 * n);
    }
    case WorkloadPreset::kInference: {
      // Request load swings with a 5-minute period, phase-shifted per GPU.
      double base = w.level.value_or(55);
      double wave = std::sin(2 * kPi * static_cast<double>(step) / 300.0 + gpu);
      return clamp(base + 0.45 * base * wave + 0.15 * base * n);
    }
    case WorkloadPreset::kBursty: {
      // Each minute starts with a burst of 10-40 s at high load, then near idle.
      std::int64_t period = step / 60;
      double len = 10 + 30 * (noise(seed, gpu, Signal::kBurst, period) + 1) / 2;
      if (static_cast<double>(step % 60) < len) return clamp(w.level.value_or(90) + 4 * n);
      return clamp(2 + std::abs(n));
    }
    case WorkloadPreset::kCurve:
      return clamp(curveAt(w, static_cast<double>(step)) + n);
    case WorkloadPreset::kStarved:
      // The input pipeline delivers a batch now and then: from one second to the next the GPU
      // runs anywhere between 3 % and the level, never near full.
      return clamp(3 + (w.level.value_or(20) - 3) * (n + 1) / 2);
  }
  return 0;
}

double memoryUtilRatio(const Workload& w) {
  switch (w.preset) {
    case WorkloadPreset::kTraining:
      return 0.45;
    case WorkloadPreset::kInference:
      return 0.35;
    case WorkloadPreset::kBursty:
      return 0.4;
    case WorkloadPreset::kCurve:
      return 0.4;
    case WorkloadPreset::kIdle:
      return 0.3;
    case WorkloadPreset::kStarved:
      return 0.45;
  }
  return 0.4;
}

double powerIntensity(const Workload& w) {
  if (w.power) return *w.power;
  switch (w.preset) {
    case WorkloadPreset::kTraining:
      return 1.0;
    case WorkloadPreset::kInference:
      return 0.85;
    default:
      return 0.95;
  }
}

void pcieShare(const Workload& w, double* tx, double* rx) {
  switch (w.preset) {
    case WorkloadPreset::kTraining:
      *tx = 0.02;
      *rx = 0.06;
      return;
    case WorkloadPreset::kInference:
      *tx = 0.08;
      *rx = 0.15;
      return;
    case WorkloadPreset::kBursty:
      *tx = 0.10;
      *rx = 0.20;
      return;
    default:
      *tx = 0.05;
      *rx = 0.10;
      return;
  }
}

double nvlinkShare(const Workload& w) { return w.preset == WorkloadPreset::kTraining ? 0.35 : 0.05; }

GpmMix gpmMix(const Workload& w) {
  switch (w.preset) {
    case WorkloadPreset::kTraining:
      // Mixed-precision training: matrix multiplies on the tensor cores most of the time.
      return {0.93, 0.55, 0.62, 0.0, 0.18, 0.12};
    case WorkloadPreset::kInference:
      // Smaller batches: less of each SM kept busy, and less of it on the tensor cores.
      return {0.80, 0.35, 0.38, 0.0, 0.15, 0.20};
    case WorkloadPreset::kBursty:
      return {0.85, 0.45, 0.50, 0.0, 0.15, 0.10};
    default:
      return {0.85, 0.40, 0.30, 0.02, 0.25, 0.08};
  }
}

}  // namespace gw::sim
