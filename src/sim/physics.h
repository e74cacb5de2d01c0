// The coherent, time-varying signals of one GPU. State is integrated in fixed steps of
// kStepSeconds from t = 0, so the value at time t is the same whatever the call pattern that
// led there; each device caches its latest step, so a getter in the steady state costs a lock
// and a copy.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <vector>

#include "nvml/nvml_abi.h"
#include "sim/scenario.h"

namespace gw::sim {

constexpr double kStepSeconds = 1.0;
// GPM activity slots: 0 the whole GPU, 1 + i the scenario's MIG instance i.
constexpr unsigned kGpmSlots = 8;

struct StepState {
  std::int64_t step = -1;
  double util_gpu = 0, util_mem = 0;  // percent
  bool busy = false;                  // some process is running (or no processes declared)
  double power_w = 0;
  double limit_w = 0;             // enforced limit during this step
  double temp = 0, temp_mem = 0;  // degrees C
  unsigned sm_clock = 0, mem_clock = 0, video_clock = 0;
  unsigned pstate = NVML_PSTATE_8;
  std::uint64_t reasons = 0;
  unsigned fan = 0;           // percent
  bool fans_spinning = true;  // false while a zero-RPM board has stopped its fans
  unsigned pcie_gen = 0, pcie_width = 0;
  double pcie_tx_kbs = 0, pcie_rx_kbs = 0;
  std::uint32_t nvlink_active = 0;                   // bit per link
  double energy_mj = 0;                              // at the start of the step
  double nvlink_tx_kib[NVML_NVLINK_MAX_LINKS] = {};  // cumulative at the start of the step
  double nvlink_rx_kib[NVML_NVLINK_MAX_LINKS] = {};
  double nvlink_rate_kibs = 0;  // per active link during the step
  // GPM: the fraction of each slot's SMs (kGpmSlots) busy during the step and the fraction of its
  // DRAM cycles active; the integrals of both, and of PCIe traffic, at the start of the step.
  double gpm_active[kGpmSlots] = {}, gpm_dram[kGpmSlots] = {};
  double gpm_active_s[kGpmSlots] = {}, gpm_dram_s[kGpmSlots] = {};
  double pcie_tx_kb = 0, pcie_rx_kb = 0;
};

class GpuPhysics {
 public:
  GpuPhysics(const GpuConfig& gpu, const std::vector<NvLinkConfig>& links, std::vector<const FaultConfig*> faults,
             std::uint64_t seed);

  // State of the step containing t (t >= 0), copied out.
  StepState at(double t);
  // f(state) under the lock, for getters that need one or two fields without copying it all.
  template <typename F>
  auto read(double t, F&& f) {
    std::lock_guard lock(mu_);
    return f(stateLocked(t));
  }
  // Power limit from time t on, in milliwatts as NVML sets and reports it. Recorded as a schedule
  // so values stay a function of t.
  void setPowerLimit(double t, unsigned milliwatts);
  unsigned powerLimitMwAt(double t);

  // When the GPU shut down, if it has by time t: the first step whose core temperature reached the
  // profile's shutdown temperature. From then on it is off the bus, as a real board that trips its
  // thermal shutdown is (no reading above shutdown is ever seen).
  std::optional<double> shutdownBy(double t);

  const std::vector<const FaultConfig*>& faults() const { return faults_; }

 private:
  void evaluate(StepState* s) const;         // fills everything for s->step from its temp/energy
  StepState next(const StepState& s) const;  // integrates to the following step
  double limitAtLocked(double t) const;      // watts
  const StepState& stateLocked(double t);

  const GpuConfig& gpu_;
  const GpuProfile& profile_;
  std::uint32_t configured_links_ = 0;
  std::vector<const FaultConfig*> faults_;
  std::uint64_t seed_;
  std::mutex mu_;
  StepState cur_, prev_;
  std::vector<std::pair<double, unsigned>> limits_;  // (from t, milliwatts), t ascending
  std::int64_t shutdown_step_ = -1;                  // first step at or above shutdown, once reached
  unsigned fanPercent(const StepState& s, bool fan_failed) const;
  double airflowFactor(unsigned fan) const;
  unsigned limitMwAtLocked(double t) const;
};

}  // namespace gw::sim
