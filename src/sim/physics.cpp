// The physical model, kept deliberately simple but causal:
//   utilisation → power demand → (capped by the enforced limit) → power
//   power → temperature, through a first-order lag toward ambient + R·power, where R grows as the
//   fans slow (boards with fans) and with a failed cooler
//   temperature → fan speed (the board's curve; zero-RPM boards stop their fans while cool)
//   power cap, temperature thresholds and faults → clock factor and clock event reasons
//   core temperature at the shutdown threshold → the GPU shuts down and falls off the bus
// Temperature and whether a zero-RPM board's fans turn are the only state carried between steps
// (plus the counters that integrate power and NVLink traffic); everything else is evaluated from
// the step's inputs.
#include "sim/physics.h"

#include <algorithm>
#include <cmath>

#include "sim/faults.h"
#include "sim/noise.h"
#include "sim/workload.h"

namespace gw::sim {
namespace {

// Below this utilisation the GPU drops to P8 and idle clocks.
constexpr double kIdleUtil = 5;
// PCIe payload bandwidth per lane in KB/s by generation (after encoding overhead).
constexpr double kPcieLaneKBs[] = {0, 250000, 500000, 984600, 1969200, 3938400, 7876900};
// One NVLink link's unidirectional bandwidth in KiB/s (25 GB/s on NVLink 3 and 4).
constexpr double kNvlinkKiBs = 25e9 / 1024;
// Airflow through a fan-cooled heatsink: the chassis still moves some air with the fans stopped
// (a third of full flow here), and the profile's thermal resistance holds at 60 % fan, where its
// fan curve sits under a typical load. So a stopped fan heats a board 2.2 times as much per watt
// as at 60 %: enough to drive a loaded RTX 4090 into slowdown, not past it (its slowed clocks
// then shed the heat), and 100 % cools it to 0.73 times.
constexpr double kStillAirflow = 1.0 / 3;
constexpr double kReferenceFan = 60;
// A zero-RPM board stops its fans again only this far below the temperature that started them,
// so they do not start and stop every few seconds.
constexpr double kZeroRpmHysteresisC = 10;
double fanCurve(double temp) { return std::clamp(30 + 1.5 * (temp - 40), 30.0, 100.0); }

unsigned roundClock(double mhz) {
  // Real clocks move in 15 MHz bins; a throttled clock falls to the bin below.
  return static_cast<unsigned>(std::floor(mhz / 15.0 + 1e-9) * 15);
}

bool anyRunning(const GpuConfig& g, double t) {
  for (const auto& p : g.processes) {
    if (t >= p.start && t < p.stop) return true;
  }
  return false;
}

}  // namespace

GpuPhysics::GpuPhysics(const GpuConfig& gpu, const std::vector<NvLinkConfig>& links,
                       std::vector<const FaultConfig*> faults, std::uint64_t seed)
    : gpu_(gpu), profile_(*gpu.profile), faults_(std::move(faults)), seed_(seed) {
  for (std::size_t l = 0; l < links.size(); ++l) {
    if (links[l].remote != NvLinkRemote::kNone) configured_links_ |= 1u << l;
  }
  limits_.emplace_back(0.0, gpu.power_limit_mw);
  cur_.step = 0;
  // Start in idle equilibrium: the machine has been up for a while before the scenario. The fans
  // set the resistance and the temperature sets the fans: a few rounds find where they agree.
  cur_.temp = gpu.ambient + profile_.thermal_resistance * profile_.idle_power;
  for (int round = 0; round < 8; ++round) {
    cur_.fans_spinning = profile_.zero_rpm_start_c == 0 || cur_.temp >= profile_.zero_rpm_start_c;
    const double r = profile_.thermal_resistance * airflowFactor(fanPercent(cur_, false));
    cur_.temp = gpu.ambient + r * profile_.idle_power;
  }
  evaluate(&cur_);
  prev_ = cur_;
}

unsigned GpuPhysics::fanPercent(const StepState& s, bool fan_failed) const {
  if (profile_.fans == 0 || fan_failed) return 0;
  if (gpu_.fan) return *gpu_.fan;
  if (!s.fans_spinning) return 0;
  return static_cast<unsigned>(fanCurve(s.temp));
}

// Thermal resistance relative to the profile's, from the airflow the fans give (1 without fans:
// SXM and passive boards are cooled by the chassis, which the model keeps constant).
double GpuPhysics::airflowFactor(unsigned fan) const {
  if (profile_.fans == 0) return 1;
  const auto flow = [](double percent) { return kStillAirflow + (1 - kStillAirflow) * percent / 100; };
  return flow(kReferenceFan) / flow(fan);
}

unsigned GpuPhysics::limitMwAtLocked(double t) const {
  unsigned mw = limits_.front().second;
  for (const auto& [from, milliwatts] : limits_) {
    if (t >= from) mw = milliwatts;
  }
  return mw;
}

double GpuPhysics::limitAtLocked(double t) const { return limitMwAtLocked(t) / 1000.0; }

void GpuPhysics::setPowerLimit(double t, unsigned milliwatts) {
  std::lock_guard lock(mu_);
  limits_.emplace_back(std::max(t, limits_.back().first), milliwatts);
}

unsigned GpuPhysics::powerLimitMwAt(double t) {
  std::lock_guard lock(mu_);
  return limitMwAtLocked(t);
}

void GpuPhysics::evaluate(StepState* s) const {
  const GpuProfile& P = profile_;
  const double t = static_cast<double>(s->step) * kStepSeconds;
  const unsigned gi = gpu_.index;
  const FaultEffects fx = effectsAt(faults_, P, t);

  // Utilisation: the workload runs only while some declared process runs.
  s->busy = gpu_.processes.empty() || anyRunning(gpu_, t);
  double u = s->busy ? utilizationAt(gpu_.workload, seed_, gi, s->step) : 0;
  s->util_gpu = u;
  double mem_noise = noise(seed_, gi, Signal::kMemUtil, s->step);
  s->util_mem = std::clamp(u * memoryUtilRatio(gpu_.workload) + 2 * mem_noise * (u > 0 ? 1 : 0), 0.0, 100.0);

  // Power demand rises a little faster than linearly in utilisation at the low end.
  // Locked clocks keep the board in P0: no idle clocks, and a higher power floor.
  const bool idle = u < kIdleUtil && !fx.clocks_locked;
  const double floor_w = fx.clocks_locked ? std::max(P.idle_power, fx.locked_idle_power) : P.idle_power;
  double demand = floor_w + (P.full_power - floor_w) * std::pow(u / 100.0, 0.9) * powerIntensity(gpu_.workload);
  demand *= 1 + 0.015 * noise(seed_, gi, Signal::kPower, s->step);
  const double limit = limitAtLocked(t);
  s->limit_w = limit;

  std::uint64_t reasons = fx.reasons;
  double factor = 1;
  double power = demand;
  if (idle) reasons |= nvmlClocksThrottleReasonGpuIdle;
  if (demand > limit) {
    // The power controller trades clock for power: P ~ f^2.5 near the top of the V/f curve.
    reasons |= nvmlClocksThrottleReasonSwPowerCap;
    factor *= std::pow(limit / demand, 0.4);
    power = limit * (0.985 + 0.01 * (noise(seed_, gi, Signal::kPower, s->step) + 1) / 2);
  }
  s->temp_mem = P.hbm ? s->temp + 3 + 3 * u / 100 + 0.5 * noise(seed_, gi, Signal::kMemTemp, s->step) : 0;
  // HBM at its maximum operating temperature slows the board down just as a hot core does.
  const bool mem_slowdown = P.hbm && P.temp_mem_max > 0 && s->temp_mem >= P.temp_mem_max;
  double slow = 1;
  if (s->temp >= P.temp_gpu_max) {
    reasons |= nvmlClocksThrottleReasonSwThermalSlowdown;
    slow = 0.85;
  }
  if (s->temp >= P.temp_slowdown || mem_slowdown) {
    reasons |= nvmlClocksThrottleReasonHwThermalSlowdown | nvmlClocksThrottleReasonHwSlowdown;
    slow = 0.55;
  }
  slow = std::min(slow, fx.clock_factor);
  if (slow < 1) {
    factor *= slow;
    power = P.idle_power + (power - P.idle_power) * slow;
  }
  s->power_w = std::min(power, limit);
  s->reasons = reasons;

  const double top = idle ? P.idle_sm_clock : P.app_graphics_clock;
  s->sm_clock = std::max(P.idle_sm_clock, roundClock(top * factor));
  s->mem_clock = idle ? P.idle_mem_clock : P.max_mem_clock;
  s->video_clock = idle ? P.idle_video_clock : roundClock(P.max_video_clock * std::min(1.0, factor));
  s->pstate = fx.pstate ? fx.pstate : idle && !P.idle_in_p0 ? NVML_PSTATE_8 : NVML_PSTATE_0;

  s->fan = fanPercent(*s, fx.fan_failed);

  // Active-state power management: an idle board trains its link down to Gen1 (the width stays);
  // it is back at full speed as soon as work arrives. A downtrained link stays downtrained. A
  // board that idles in P0 keeps its link at full speed.
  s->pcie_gen = fx.pcie_gen ? fx.pcie_gen : idle && !P.idle_in_p0 ? 1 : P.pcie_max_gen;
  s->pcie_width = fx.pcie_width ? fx.pcie_width : P.pcie_max_width;
  double tx_share = 0, rx_share = 0;
  pcieShare(gpu_.workload, &tx_share, &rx_share);
  const double bw = kPcieLaneKBs[s->pcie_gen] * s->pcie_width;
  s->pcie_tx_kbs = bw * tx_share * u / 100 * (1 + 0.1 * noise(seed_, gi, Signal::kPcieTx, s->step)) + 200;
  s->pcie_rx_kbs = bw * rx_share * u / 100 * (1 + 0.1 * noise(seed_, gi, Signal::kPcieRx, s->step)) + 300;

  s->nvlink_active = configured_links_ & ~fx.nvlink_down_mask;
  s->nvlink_rate_kibs = kNvlinkKiBs * nvlinkShare(gpu_.workload) * u / 100;

  // GPM: in MIG mode the workload runs on the instances that hold a running process, each on its
  // own SMs; the whole GPU is their sum weighted by each instance's share of the SMs.
  if (!gpu_.mig_enabled) {
    s->gpm_active[0] = u / 100;
    s->gpm_dram[0] = s->util_mem / 100;
  } else {
    s->gpm_active[0] = s->gpm_dram[0] = 0;
    for (std::size_t i = 0; i < gpu_.mig_instances.size() && i + 1 < kGpmSlots; ++i) {
      const MigInstanceConfig& m = gpu_.mig_instances[i];
      bool running = false;
      for (const auto& p : gpu_.processes)
        running = running || (p.gpu_instance == m.gpu_instance_id && t >= p.start && t < p.stop);
      s->gpm_active[i + 1] = running ? u / 100 : 0;
      s->gpm_dram[i + 1] = running ? s->util_mem / 100 : 0;
      const double share = static_cast<double>(m.profile->sm_count) / P.sm_count;
      s->gpm_active[0] += share * s->gpm_active[i + 1];
      s->gpm_dram[0] += share * s->gpm_dram[i + 1];
    }
  }
}

StepState GpuPhysics::next(const StepState& s) const {
  const GpuProfile& P = profile_;
  const double t = static_cast<double>(s.step) * kStepSeconds;
  const FaultEffects fx = effectsAt(faults_, P, t);
  StepState n;
  n.step = s.step + 1;
  const double resistance = P.thermal_resistance * airflowFactor(s.fan) * fx.cooling_factor;
  double target = gpu_.ambient + resistance * s.power_w;
  if (fx.thermal) {
    // Hardware slowdown is built to hold a board between slowdown and shutdown, and with a cooler
    // that still works, if poorly, it does: the slowed clocks shed what the cooler cannot. (A cooler
    // that has failed outright cannot be held: cooling_failure.)
    double floor = fx.thermal_target;
    if (s.reasons & nvmlClocksThrottleReasonHwThermalSlowdown)
      floor = std::min(floor, (P.temp_slowdown + P.temp_shutdown) / 2.0);
    target = std::max(target, floor);
  }
  const double alpha = 1 - std::exp(-kStepSeconds / P.thermal_tau_s);
  n.temp = s.temp + (target - s.temp) * alpha;
  n.fans_spinning = P.zero_rpm_start_c == 0 || n.temp >= P.zero_rpm_start_c ||
                    (s.fans_spinning && n.temp >= P.zero_rpm_start_c - kZeroRpmHysteresisC);
  n.energy_mj = s.energy_mj + s.power_w * kStepSeconds * 1000;
  for (unsigned k = 0; k < kGpmSlots; ++k) {
    n.gpm_active_s[k] = s.gpm_active_s[k] + s.gpm_active[k] * kStepSeconds;
    n.gpm_dram_s[k] = s.gpm_dram_s[k] + s.gpm_dram[k] * kStepSeconds;
  }
  n.pcie_tx_kb = s.pcie_tx_kb + s.pcie_tx_kbs * kStepSeconds;
  n.pcie_rx_kb = s.pcie_rx_kb + s.pcie_rx_kbs * kStepSeconds;
  for (unsigned l = 0; l < NVML_NVLINK_MAX_LINKS; ++l) {
    bool on = (s.nvlink_active >> l) & 1u;
    n.nvlink_tx_kib[l] = s.nvlink_tx_kib[l] + (on ? s.nvlink_rate_kibs * kStepSeconds : 0);
    n.nvlink_rx_kib[l] = s.nvlink_rx_kib[l] + (on ? s.nvlink_rate_kibs * 0.97 * kStepSeconds : 0);
  }
  evaluate(&n);
  return n;
}

const StepState& GpuPhysics::stateLocked(double t) {
  const auto step = static_cast<std::int64_t>(std::floor(std::max(t, 0.0) / kStepSeconds));
  // Two threads may read the clock a hair apart; time is monotonic, so at most the step
  // before the cached one is asked for, and it is kept.
  if (step == prev_.step) return prev_;
  while (cur_.step < step) {
    prev_ = cur_;
    cur_ = next(cur_);
    // The sensor reads whole degrees: the board trips when its reading reaches the threshold, so
    // no reading at or above shutdown is ever answered.
    if (shutdown_step_ < 0 && cur_.temp >= profile_.temp_shutdown - 0.5) shutdown_step_ = cur_.step;
  }
  return cur_;
}

std::optional<double> GpuPhysics::shutdownBy(double t) {
  std::lock_guard lock(mu_);
  if (shutdown_step_ < 0) stateLocked(t);
  if (shutdown_step_ < 0) return std::nullopt;
  const double at = static_cast<double>(shutdown_step_) * kStepSeconds;
  if (at > t) return std::nullopt;
  return at;
}

StepState GpuPhysics::at(double t) {
  std::lock_guard lock(mu_);
  return stateLocked(t);
}

}  // namespace gw::sim
