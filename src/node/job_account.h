// What one job did to one GPU (R30, DCGM's `dcgmi stats` is the reference): fed with every sample
// of the GPU while the job runs, it keeps running sums, extremes and the counters at the start,
// so that a 24 h job costs the same few hundred bytes as a 1 min one and its report is ready at
// any moment. Pure logic: the tracker (jobs.h) decides which samples belong to which job.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "collect/gpu_view.h"
#include "fields/catalog.h"

namespace gw::node {

// A gap between two samples longer than this is not counted as time at the later sample's values
// (the agent was stopped, or the GPU did not answer): its energy comes from the energy counter
// alone, and no throttle or byte time is credited for it.
inline constexpr std::int64_t kMaxSampleGapMs = 10'000;
// A sample is "at load" from this utilisation on: a GPU's clock, power and temperature there are
// its fingerprint (jobs of different lengths and phases compare on the same footing).
inline constexpr double kLoadUtilPct = 80;

class JobGpuAccount {
 public:
  JobGpuAccount() = default;
  JobGpuAccount(std::string uuid, int index, std::int64_t start_ms)
      : uuid_(std::move(uuid)), index_(index), start_ms_(start_ms) {}

  // The fields a job's accounting reads; the monitor samples them whatever else is configured.
  static std::vector<const fields::Field*> requiredFields();

  // One sample of this GPU (a view that is not Up, or a sample not newer than the last, is
  // ignored).
  void observe(const collect::GpuView& v, std::int64_t now_ms);
  void addXid(int code);
  void finish(std::int64_t end_ms) { end_ms_ = end_ms; }

  const std::string& uuid() const { return uuid_; }
  int index() const { return index_; }
  std::uint64_t samples() const { return samples_; }

  // The report (docs/jobs.md, "job show --json"), and the state kept in the jobs database: the
  // same object, read back with fromJson (which refuses a wrong shape).
  nlohmann::json toJson() const;
  static std::optional<JobGpuAccount> fromJson(const nlohmann::json& j);

 private:
  struct Counter {  // a cumulative counter: its first and latest reading
    bool seen = false;
    double first = 0, last = 0;
    double gained = 0;  // increases summed, across a reset (a driver reload zeroes volatile counts)
    void take(double v);
  };
  struct Stat {  // a gauge: mean and max
    std::uint64_t n = 0;
    double sum = 0, max = 0;
    void take(double v);
  };

  std::string uuid_;
  int index_ = -1;
  std::int64_t start_ms_ = 0, end_ms_ = 0, last_ms_ = 0;
  std::uint64_t samples_ = 0;
  Stat util_, temp_, power_, mem_util_;
  // At load (utilisation ≥ kLoadUtilPct): the job's fingerprint compares GPUs and runs there.
  Stat load_util_, load_clock_, load_power_, load_temp_;
  double mem_used_max_mib_ = 0;
  Counter energy_mj_;
  double energy_integrated_j_ = 0;  // power × time, used when the counter is missing
  Counter ecc_sbe_, ecc_dbe_, retired_sbe_, retired_dbe_, remapped_corr_, remapped_unc_, pcie_replays_;
  Counter nvlink_tx_kib_, nvlink_rx_kib_;
  double pcie_tx_bytes_ = 0, pcie_rx_bytes_ = 0;
  bool pcie_seen_ = false;
  std::map<std::string, std::int64_t> throttle_ms_;  // reason → time
  std::map<int, std::uint64_t> xids_;

  // The resumable state's gauges and counters under their keys: the one list that toJson writes
  // and fromJson reads.
  struct StatPart {
    const char* key;
    Stat JobGpuAccount::*member;
  };
  struct CounterPart {
    const char* key;
    Counter JobGpuAccount::*member;
  };
  static const StatPart kStatParts[];
  static const CounterPart kCounterParts[];
};

}  // namespace gw::node
