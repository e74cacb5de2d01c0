// What the diagnostics found: checks (one test on one GPU, or node-wide), each GPU's verdict
// with its evidence, text and JSON renderings, and the exit code.
#pragma once

#include <nlohmann/json.hpp>

#include "common/result.h"

#include <string>
#include <vector>

namespace gw::diag {

// Ordered by severity for aggregation: Skip < Pass < Warn < Incomplete < Fail. A check is never
// Incomplete: that is the verdict of a GPU none of whose GPU tests ran (and so of the run), which
// must not read as a pass, yet says nothing against the card.
enum class Verdict { Skip = 0, Pass = 1, Warn = 2, Incomplete = 3, Fail = 4 };
const char* verdictName(Verdict v);  // "skip", "pass", "warn", "incomplete", "fail"
// The inverse of verdictName; false for a name it does not know.
bool verdictFromName(const std::string& name, Verdict& out);
Verdict worst(Verdict a, Verdict b);

// The exit codes of `gpuwarden diag`, with their meanings: the --help footer and the table in
// docs/diag.md are both rendered from this list.
inline constexpr int kExitPassed = 0;
inline constexpr int kExitFailed = 1;
inline constexpr int kExitCouldNotRun = 2;
inline constexpr int kExitNoDriver = 3;  // set by the CLI: NVML could not be loaded
inline constexpr int kExitIncomplete = 4;
struct ExitCodeMeaning {
  int code;
  const char* meaning;
};
const std::vector<ExitCodeMeaning>& exitCodeMeanings();
std::string exitCodeTableMarkdown();  // the table of docs/diag.md
std::string exitCodeHelp();           // "Exit codes: 0 ..., 1 ..." for --help

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
  std::string serial, vbios;         // "" when NVML did not say (and in reports stored before they were kept)
};

// What the run ran on, so that a stored report says which stack it accepted. Empty / 0 when
// unknown (and in reports stored before these were kept).
struct SoftwareStack {
  std::string gpuwarden_version;  // "0.1.0"
  std::string driver_version;     // "550.54.15"
  int cuda_driver_version = 0;    // highest CUDA the driver supports: 12040 = 12.4
  int cuda_runtime_version = 0;   // the CUDA part's runtime when it loaded, else 0
};

struct DiagReport {
  int level = 1;
  double seconds = 0;
  // Where it ran: the scheduler's name for the node ($SLURMD_NODENAME), else the short host
  // name; set by the command, so that a fleet's reports gathered in one place tell nodes apart.
  std::string node;
  SoftwareStack stack;
  std::string cuda_status;  // "ready", or why the GPU tests were skipped
  std::string error;        // the diagnostic could not run at all (bad options, NVML failed)
  std::vector<Check> checks;
  std::vector<GpuSummary> gpus;
  Verdict overall = Verdict::Pass;

  // See exitCodeMeanings(): 0 passed, 1 failed, 2 could not run, 4 incomplete.
  int exitCode() const;
  // Recomputes gpus[].verdict/reasons and overall from checks. A GPU the level has GPU tests for
  // (plan.h: needs_cuda) on which none of them ran is Incomplete, unless something failed.
  void finalize();
};

std::string renderText(const DiagReport& r);
// The report's JSON shape lives here, both ways: toJson writes it (the --json document, the
// stored report), reportFromJson reads it back, including reports stored by older versions.
nlohmann::json toJson(const DiagReport& r);
// Error naming the field at fault ("gpus[2].verdict: unknown verdict 'ok'").
Result<DiagReport> reportFromJson(const nlohmann::json& j);
// 12040 -> "12.4"; "" for 0.
std::string cudaVersionText(int v);

}  // namespace gw::diag
