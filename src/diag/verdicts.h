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
// The card stopped answering: off the bus (NVML_ERROR_GPU_IS_LOST), needs a reset
// (RESET_REQUIRED), or hung past the call deadline (kNvmlTimeout). Such a card has failed.
bool doesNotAnswer(const Status& s);

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
// link_during: the best current gen/width seen while the test ran (NVML), max gen/width too.
Check judgeHostBandwidth(int gpu, const Result<GwBandwidthResult>& r, const PcieLink& link_during,
                         const SkuThresholds& t);
// expected_gbps: NVLink expectation (t.nvlink_p2p_gbps) or the PCIe theoretical rate of the pair.
Check judgeP2P(int src_gpu, int dst_gpu, const Result<GwP2PResult>& r, bool nvlink, double expected_gbps,
               const SkuThresholds& t);
Check judgeTriad(int gpu, const Result<GwTriadResult>& r, double peak_gbps, const SkuThresholds& t);

// Straggler detection: each value against the mean of the others in its group.
struct PeerStanding {
  bool has_peers = false;
  double peer_mean = 0;
  double slower_pct = 0;  // positive: this much slower than the peers' mean
  Verdict verdict = Verdict::Pass;
};
std::vector<PeerStanding> comparePeers(const std::vector<double>& values, double warn_pct, double fail_pct);

struct GemmInput {
  int gpu = -1;
  std::string name;  // GPUs are only compared with GPUs of the same name
  SkuThresholds sku = ThresholdTable::builtin().generic();
  std::string precision;  // asked for: "fp32", "tf32", "fp16", "bf16"
  Result<GwGemmResult> result = Status::Error("not run");
};
std::vector<Check> judgeGemmBurn(const std::vector<GemmInput>& runs);

struct PowerRun {
  double limit_w = 0, target_w = 0;
  double mean_w = 0;  // mean draw over the second half of the run (after the ramp)
  double max_w = 0;
  int samples = 0;
  std::string read_error;  // power could not be read
};
Check judgeTargetedPower(int gpu, const Result<GwPowerResult>& r, const PowerRun& p, const SkuThresholds& t);

// What the watcher saw on one GPU while the GPU tests ran.
struct WatchSummary {
  int samples = 0;
  bool temp_known = false;
  unsigned max_temp_c = 0;
  std::string hottest_during;
  unsigned min_sm_mhz = 0, max_sm_mhz = 0;
  double max_power_w = 0;
  uint64_t reasons_seen = 0;  // OR of clock event reasons
  bool dbe_known = false;
  uint64_t dbe_start = 0, dbe_end = 0;
  std::string dbe_during;
  std::vector<std::pair<std::string, uint64_t>> xids;  // (step, xid) - new during the tests
  int best_cur_gen = 0, best_cur_width = 0;            // PCIe link seen under load
  std::vector<std::string> read_errors;
  // The GPU stopped answering NVML (lost, reset required): the step during which, and the error.
  std::string lost_during, lost_error;
  // The latest sample, for a live display (burn): unknown = false / negative / 0.
  bool cur_temp_known = false;
  unsigned cur_temp_c = 0;
  double cur_power_w = -1;
  unsigned cur_sm_mhz = 0, cur_mem_mhz = 0;
};
Check judgeWatch(int gpu, const WatchSummary& w, const SkuThresholds& t);

// A short meaning of an Xid from the one catalog (knowledge/xid_catalog.h); "" if unknown.
std::string xidMeaning(uint64_t xid);

}  // namespace gw::diag
