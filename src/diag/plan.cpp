#include "diag/plan.h"

#include <algorithm>

namespace gw::diag {

double estimateStep(const PlanStep& s, int gpus) {
  switch (s.kind) {
    case StepKind::Node:
      return s.seconds;
    case StepKind::PerGpuParallel:
      return s.seconds;
    case StepKind::Pairs:
      return s.seconds * std::max(0, gpus * (gpus - 1));
    case StepKind::PerGpuNvml:
    case StepKind::PerGpuSerial:
      return s.seconds * std::max(1, gpus);
  }
  return s.seconds;
}

double DiagPlan::estimateSeconds(int gpus) const {
  double t = 0;
  for (const auto& s : steps) t += estimateStep(s, gpus);
  return t;
}

bool DiagPlan::has(const std::string& id) const { return find(id) != nullptr; }

const PlanStep* DiagPlan::find(const std::string& id) const {
  for (const auto& s : steps)
    if (s.id == id) return &s;
  return nullptr;
}

std::optional<DiagPlan> buildPlan(int level, std::optional<double> duration_seconds) {
  if (level < 1 || level > 3) return std::nullopt;
  if (duration_seconds && !validDuration(*duration_seconds)) return std::nullopt;
  DiagPlan p;
  p.level = level;
  auto add = [&](std::string id, std::string title, StepKind kind, bool cuda, bool timed, double seconds) {
    p.steps.push_back({std::move(id), std::move(title), kind, cuda, timed, seconds});
  };
  // r1 (seconds): software and deployment state.
  add("deployment", "deployment checks (doctor)", StepKind::Node, false, false, 1);
  add("pcie_link", "PCIe link state", StepKind::PerGpuNvml, false, false, 0.05);
  add("retired_pages", "page retirement", StepKind::PerGpuNvml, false, false, 0.05);
  add("row_remap", "row remapping", StepKind::PerGpuNvml, false, false, 0.05);
  add("ecc", "ECC error counters", StepKind::PerGpuNvml, false, false, 0.05);
  add("processes", "stray compute processes", StepKind::PerGpuNvml, false, false, 0.05);
  add("persistence", "persistence mode", StepKind::PerGpuNvml, false, false, 0.05);
  add("inforom", "InfoROM", StepKind::PerGpuNvml, false, false, 0.05);
  add("cuda_deploy", "CUDA deployment test (vector add)", StepKind::PerGpuSerial, true, false, 1.5);
  if (level >= 2) {
    add("memtest", "device memory test", StepKind::PerGpuParallel, true, true, 60);
    add("pcie_bandwidth", "host<->device bandwidth", StepKind::PerGpuSerial, true, false, 2);
    add("p2p_bandwidth", "peer-to-peer bandwidth", StepKind::Pairs, true, false, 0.5);
  }
  if (level >= 3) {
    add("gemm_burn", "GEMM burn", StepKind::PerGpuParallel, true, true, 600);
    add("stream_triad", "memory bandwidth (STREAM triad)", StepKind::PerGpuSerial, true, false, 3);
    add("targeted_power", "targeted power", StepKind::PerGpuParallel, true, true, 120);
  }
  if (duration_seconds) {
    double nominal = 0;
    for (const auto& s : p.steps)
      if (s.timed) nominal += s.seconds;
    if (nominal > 0) {
      double scale = *duration_seconds / nominal;
      for (auto& s : p.steps)
        if (s.timed) s.seconds = std::max(1.0, s.seconds * scale);
    }
  }
  return p;
}

}  // namespace gw::diag
