// gpuwarden diag -r 1|2|3: levelled diagnostics in the manner of `dcgmi diag` (R14, R27, R28).
//
//   DiagReport r = runDiag(options, nvml, backend, progress);
//   std::cout << (json ? toJson(r).dump(2) : renderText(r));
//   return r.exitCode();
//
// The NVML side comes through DiagNvml (diag_nvml.h), the GPU tests through GpuBackend
// (gpu_backend.h; nullptr = load libgpuwarden-cuda.so on the first GPU test). GPU tests that
// cannot run are reported "skipped: <why>"; skips never fail a run, but a GPU on which every GPU
// test was skipped leaves the run "incomplete" (report.h).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "diag/diag_nvml.h"
#include "diag/gemm_precision.h"
#include "diag/gpu_backend.h"
#include "diag/plan.h"
#include "diag/progress.h"
#include "diag/report.h"
#include "diag/thresholds.h"

namespace gw::diag {

struct DiagOptions {
  int level = 1;                           // -r
  std::vector<int> gpus;                   // -i, NVML indices; empty = every GPU
  std::optional<double> duration_seconds;  // --duration: total of the timed tests
  std::string thresholds_path;             // --thresholds FILE; empty = the built-in table
  std::string gemm_precision = "fp16";     // a name of gemm_precision.h (GEMM burn, power load)
  double watch_interval_seconds = 1.0;     // watcher sampling period during GPU tests
  std::string cuda_part_path;              // explicit libgpuwarden-cuda.so (when backend is null)
  std::string gpuwarden_version;           // recorded in the report (DiagReport::stack)

  // The r1 "deployment" step: the doctor's checks, supplied by the CLI (node-wide checks,
  // gpu = -1). Unset: the step is reported as skipped.
  std::function<std::vector<Check>()> deployment_checks;
  // Polled between and during tests (Ctrl-C): true stops the run; what ran is reported.
  std::function<bool()> cancelled;

  // Test sizes (defaults suit real GPUs).
  size_t vector_add_elements = size_t(1) << 22;
  size_t bandwidth_bytes = size_t(256) << 20;
  int bandwidth_iterations = 10;
  size_t p2p_bytes = size_t(256) << 20;
  int p2p_iterations = 5;
  size_t triad_max_bytes_per_array = size_t(1) << 30;
  int triad_iterations = 20;
};

DiagReport runDiag(const DiagOptions& options, DiagNvml& nvml, GpuBackend* backend, ProgressSink& progress);

// "00000000:17:00.0" and "0000:17:00.0" -> "0000:17:00.0" (lower case); "" if unparsable.
std::string normalizePciBusId(const std::string& id);

}  // namespace gw::diag
