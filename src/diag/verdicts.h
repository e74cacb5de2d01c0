// The pure judgement of the diagnostics: measured values in, verdict and evidence out. Nothing
// here touches a GPU, NVML or a clock, so every rule is tested on the CPU with recorded values.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"
#include "diag/cuda/gwcuda_abi.h"
#include "diag/diag_nvml.h"
#include "diag/report.h"
#include "diag/thresholds.h"

namespace gw::diag {

// Theoretical one-way PCIe rate in GB/s (1e9 B/s) after line coding: Gen1/2 8b/10b,
// Gen3+ 128b/130b. Gen3 x16 = 15.75, Gen4 x16 = 31.5, Gen5 x16 = 63. 0 when unknown.
double pcieTheoreticalGBps(int gen, int width);

bool isNotSupported(const Status& s);

// r1: NVML state.
Check judgePcieLink(int gpu, const Result<PcieLink>& link, const SkuThresholds& t);
Check judgeRetiredPages(int gpu, const Result<RetiredPages>& r, const SkuThresholds& t);
Check judgeRowRemap(int gpu, const Result<RowRemap>& r);
Check judgeEcc(int gpu, const Result<EccCounts>& r);
Check judgeProcesses(int gpu, const Result<std::vector<GpuProcess>>& r);
Check judgePersistence(int gpu, const Result<bool>& r);
Check judgeInforom(int gpu, const Result<bool>& r);

// CUDA tests.
Check judgeVectorAdd(int gpu, const Result<GwVecAddResult>& r);
Check judgeMemtest(int gpu, const Result<GwMemtestResult>& r);
// linkDuring: the best current gen/width seen while the test ran (NVML), max gen/width too.
Check judgeHostBandwidth(int gpu, const Result<GwBandwidthResult>& r, const PcieLink& linkDuring,
                         const SkuThresholds& t);
// expectedGBps: NVLink expectation (t.nvlinkP2PGBps) or the PCIe theoretical rate of the pair.
Check judgeP2P(int srcGpu, int dstGpu, const Result<GwP2PResult>& r, bool nvlink, double expectedGBps,
               const SkuThresholds& t);
Check judgeTriad(int gpu, const Result<GwTriadResult>& r, double peakGBps, const SkuThresholds& t);

// Straggler detection: each value against the mean of the others in its group.
struct PeerStanding {
  bool hasPeers = false;
  double peerMean = 0;
  double slowerPct = 0;  // positive: this much slower than the peers' mean
  Verdict verdict = Verdict::Pass;
};
std::vector<PeerStanding> comparePeers(const std::vector<double>& values, double warnPct, double failPct);

struct GemmInput {
  int gpu = -1;
  std::string name;  // GPUs are only compared with GPUs of the same name
  SkuThresholds sku;
  std::string precision;  // asked for: "fp32", "tf32", "fp16", "bf16"
  Result<GwGemmResult> result = Status::Error("not run");
};
std::vector<Check> judgeGemmBurn(const std::vector<GemmInput>& runs);

struct PowerRun {
  double limitW = 0, targetW = 0;
  double meanW = 0;  // mean draw over the second half of the run (after the ramp)
  double maxW = 0;
  int samples = 0;
  std::string readError;  // power could not be read
};
Check judgeTargetedPower(int gpu, const Result<GwPowerResult>& r, const PowerRun& p, const SkuThresholds& t);

// What the watcher saw on one GPU while the GPU tests ran.
struct WatchSummary {
  int samples = 0;
  bool tempKnown = false;
  unsigned maxTempC = 0;
  std::string hottestDuring;
  unsigned minSmMHz = 0, maxSmMHz = 0;
  double maxPowerW = 0;
  uint64_t reasonsSeen = 0;  // OR of clock event reasons
  bool dbeKnown = false;
  uint64_t dbeStart = 0, dbeEnd = 0;
  std::string dbeDuring;
  std::vector<std::pair<std::string, uint64_t>> xids;  // (step, xid) - new during the tests
  int bestCurGen = 0, bestCurWidth = 0;                // PCIe link seen under load
  std::vector<std::string> readErrors;
};
Check judgeWatch(int gpu, const WatchSummary& w, const SkuThresholds& t);

// A short meaning of an Xid from the one catalog (knowledge/xid_catalog.h); "" if unknown.
std::string xidMeaning(uint64_t xid);
std::string clockReasonsText(uint64_t reasons);

}  // namespace gw::diag
