// What the diagnostics found: checks (one test on one GPU, or node-wide), each GPU's verdict
// with its evidence, text and JSON renderings, and the exit code.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace gw::diag {

// Ordered by severity for aggregation: Skip < Pass < Warn < Fail (skips never fail a run).
enum class Verdict { Skip = 0, Pass = 1, Warn = 2, Fail = 3 };
const char* verdictName(Verdict v);  // "skip", "pass", "warn", "fail"
Verdict worst(Verdict a, Verdict b);

struct Check {
  std::string test;   // plan step id: "memtest", "gemm_burn", "watch", ...
  std::string title;  // "device memory test"
  int gpu = -1;       // NVML index; -1 = node-wide (deployment checks, pairs)
  Verdict verdict = Verdict::Pass;
  std::string summary;                // one line
  std::vector<std::string> evidence;  // the numbers behind the verdict
  std::string action;                 // what to do about a warn/fail
  nlohmann::json measured = nlohmann::json::object();
  double seconds = 0;
  std::vector<int> gpus_involved;  // pair tests: both GPUs (they share its verdict)
};

struct GpuSummary {
  int gpu = -1;
  std::string name, uuid, pci_bus_id, sku;
  Verdict verdict = Verdict::Pass;
  std::vector<std::string> reasons;  // "memtest: 12 memory errors ..." for each warn/fail
};

struct DiagReport {
  int level = 1;
  double seconds = 0;
  std::string cuda_status;  // "ready", or why the GPU tests were skipped
  std::string error;        // the diagnostic could not run at all (bad options, NVML failed)
  std::vector<Check> checks;
  std::vector<GpuSummary> gpus;
  Verdict overall = Verdict::Pass;

  // 0: nothing failed (warnings and skips allowed); 1: a check or GPU failed; 2: could not run.
  int exitCode() const;
  // Recomputes gpus[].verdict/reasons and overall from checks.
  void finalize();
};

std::string renderText(const DiagReport& r);
nlohmann::json toJson(const DiagReport& r);

}  // namespace gw::diag
