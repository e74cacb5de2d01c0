// gpuwarden diag -r 1|2|3: levelled diagnostics in the manner of `dcgmi diag` (R14, R27, R28).
//
//   DiagReport r = runDiag(options, nvml, backend, progress);
//   std::cout << (json ? toJson(r).dump(2) : renderText(r));
//   return r.exitCode();
//
// The NVML side comes through DiagNvml (diag_nvml.h), the GPU tests through GpuBackend
// (gpu_backend.h; nullptr = load libgpuwarden-cuda.so on the first GPU test). GPU tests that
// cannot run are reported "skipped: <why>", and skips never fail a run.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "diag/diag_nvml.h"
#include "diag/gpu_backend.h"
#include "diag/plan.h"
#include "diag/progress.h"
#include "diag/report.h"
#include "diag/thresholds.h"

namespace gw::diag {

struct DiagOptions {
  int level = 1;                          // -r
  std::vector<int> gpus;                  // -i, NVML indices; empty = every GPU
  std::optional<double> durationSeconds;  // --duration: total of the timed tests
  std::string thresholdsPath;             // --thresholds FILE; empty = the built-in table
  std::string gemmPrecision = "fp16";     // fp32 | tf32 | fp16 | bf16 (GEMM burn, power load)
  double watchIntervalSeconds = 1.0;      // watcher sampling period during GPU tests
  std::string cudaPartPath;               // explicit libgpuwarden-cuda.so (when backend is null)

  // The r1 "deployment" step: the doctor's checks, supplied by the CLI (node-wide checks,
  // gpu = -1). Unset: the step is reported as skipped.
  std::function<std::vector<Check>()> deploymentChecks;
  // Polled between and during tests (Ctrl-C): true stops the run; what ran is reported.
  std::function<bool()> cancelled;

  // Test sizes (defaults suit real GPUs).
  size_t vectorAddElements = size_t(1) << 22;
  size_t bandwidthBytes = size_t(256) << 20;
  int bandwidthIterations = 10;
  size_t p2pBytes = size_t(256) << 20;
  int p2pIterations = 5;
  size_t triadMaxBytesPerArray = size_t(1) << 30;
  int triadIterations = 20;
};

int gemmPrecisionFromName(const std::string& name);  // -1 when unknown

DiagReport runDiag(const DiagOptions& options, DiagNvml& nvml, GpuBackend* backend, ProgressSink& progress);

// "00000000:17:00.0" and "0000:17:00.0" -> "0000:17:00.0" (lower case); "" if unparsable.
std::string normalizePciBusId(const std::string& id);

}  // namespace gw::diag
