// gpuwarden burn: gpu-burn's job (R27) over the diagnostics' own parts. Every selected GPU runs
// the CUDA part's GEMM burn at once (gpu_backend.h), the diag watcher follows temperature,
// power, clocks, ECC and Xids (watcher.h), and the verdict is the diag's (judgeGemmBurn,
// judgeWatch): a GPU is FAULTY when either fails.
//
//   BurnReport r = runBurn(options, nvml, backend, sink);   // sink.tick() about once a second
//   std::cout << (json ? burnToJson(r).dump(2) : renderBurnText(r));
//   return r.exitCode();
#pragma once

#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "diag/diag_nvml.h"
#include "diag/gpu_backend.h"
#include "diag/plan.h"
#include "diag/report.h"

namespace gw::diag {

// The exit codes of `gpuwarden burn` (the CLI's scheme, context.h): --help and docs/burn.md.
inline constexpr int kBurnExitOk = 0;
inline constexpr int kBurnExitFaulty = 1;
inline constexpr int kBurnExitUsage = 2;
inline constexpr int kBurnExitCannotRun = 3;
const std::vector<ExitCodeMeaning>& burnExitCodeMeanings();
std::string burnExitCodeHelp();  // "Exit codes:\n  0  ..." for --help

// -d bounds: a burn shorter than a second measures nothing; one longer than a week is a typo.
inline constexpr double kBurnMinSeconds = 1;
inline constexpr double kBurnMaxSeconds = kMaxTimedSeconds;

struct BurnOptions {
  double seconds = 60;
  std::string precision = "fp16";   // a name of gemm_precision.h
  std::vector<int> gpus;            // NVML indices; empty = every GPU
  double interval_seconds = 1.0;    // live display and watcher period
  std::string cuda_part_path;       // explicit libgpuwarden-cuda.so (when no backend is given)
  bool simulated = false;           // NVML is the simulator: said when the burn cannot run
  std::function<bool()> cancelled;  // polled while it runs (Ctrl-C)
};

// "" or what is wrong with the options, naming the option.
std::string validateBurnOptions(const BurnOptions& o);

// One GPU while it burns.
struct BurnLive {
  int gpu = -1;
  double fraction = 0;
  GwGemmResult so_far{};  // counts and GFLOP/s up to the last batch
  bool temp_known = false;
  unsigned temp_c = 0;
  double power_w = -1;  // < 0: unknown
  unsigned sm_mhz = 0, mem_mhz = 0;
  bool finished = false;
  std::string error;  // the GEMM burn returned an error
};
// "GPU 0  42%  51234.5 GFLOP/s  1234 GEMMs  0 errors  71 C  612 W  SM 1980 MHz  MEM 2619 MHz"
std::string formatLiveLine(const BurnLive& l);

class BurnSink {
 public:
  virtual ~BurnSink() = default;
  // About once per interval while the GPUs burn, and once at the end.
  virtual void tick(double elapsed, const std::vector<BurnLive>& gpus) { (void)elapsed, (void)gpus; }
};

// interactive: the block of one line per GPU is redrawn in place (ANSI cursor moves);
// otherwise one plain line per GPU per tick, no escape codes.
class TextBurnSink : public BurnSink {
 public:
  TextBurnSink(std::ostream& out, bool interactive) : out_(out), interactive_(interactive) {}
  void tick(double elapsed, const std::vector<BurnLive>& gpus) override;

 private:
  std::ostream& out_;
  bool interactive_;
  std::mutex mu_;
  size_t drawn_ = 0;
};

struct BurnGpu {
  int gpu = -1;
  std::string name, uuid, pci_bus_id;
  bool ran = false;     // the GEMM burn ran on it
  std::string not_run;  // why it did not
  bool faulty = false;  // a check failed
  // Its result differs from other GPUs' with no majority (two GPUs, or a tie): one side is wrong
  // and nobody can say which, so the burn is not OK (exit 1) though no GPU is named FAULTY.
  bool suspect = false;
  std::vector<std::string> reasons;   // why FAULTY
  std::vector<std::string> warnings;  // not faulty, but worth a look
  std::vector<Check> checks;          // gemm_burn and watch, as the diag judged them
};

struct BurnReport {
  double seconds_asked = 0, seconds = 0;
  std::string precision;
  std::string error;       // bad options (exit 2)
  std::string cannot_run;  // the burn could not run at all (exit 3)
  bool cancelled = false;  // stopped before the end
  std::vector<BurnGpu> gpus;

  // 1 a GPU FAULTY or SUSPECT; else 2 bad options; else 3 could not run, a GPU not run, or cancelled; else 0.
  int exitCode() const;
};

BurnReport runBurn(const BurnOptions& options, DiagNvml& nvml, GpuBackend* backend, BurnSink& sink);

nlohmann::json burnToJson(const BurnReport& r);
std::string renderBurnText(const BurnReport& r);

}  // namespace gw::diag
