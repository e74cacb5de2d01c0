// A realistic stand-in for what the collector feeds the store: per GPU about twenty fields
// sampled every second, shaped like real telemetry (see docs/store.md, "Compression"):
// integer temperatures that drift with load and jitter by ±1 °C, integer power with noise,
// clocks that sit still and step when the GPU throttles or idles, utilisation that is noisy
// under load and zero when idle, memory that changes per job, monotonic counters (energy,
// NVLink/PCIe bytes, rarely-moving error counters) and one fractional profiling ratio.
// Shared by the store tests and the store benchmark.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace gw::store::testing {

inline const std::vector<std::string>& telemetryFields() {
  static const std::vector<std::string> fields = {"gpu_temp",
                                                  "memory_temp",
                                                  "power_usage",
                                                  "total_energy_consumption",
                                                  "sm_clock",
                                                  "mem_clock",
                                                  "gpu_util",
                                                  "mem_copy_util",
                                                  "enc_util",
                                                  "dec_util",
                                                  "fb_used",
                                                  "fb_free",
                                                  "pcie_replay_counter",
                                                  "xid_errors",
                                                  "ecc_sbe_volatile",
                                                  "power_violation",
                                                  "clocks_event_reasons",
                                                  "nvlink_bandwidth_total",
                                                  "pcie_tx_throughput",
                                                  "gr_engine_active"};
  return fields;
}

class GpuSimulator {
 public:
  explicit GpuSimulator(uint32_t seed) : rng_(seed) {}

  // Values of telemetryFields() for the next one-second tick.
  void tick(std::vector<double>& out) {
    out.resize(telemetryFields().size());
    if (--phase_left_ <= 0) newPhase();
    std::normal_distribution<double> unit(0.0, 1.0);
    std::uniform_real_distribution<double> u01(0.0, 1.0);

    const double target_temp = busy_ ? 72.0 : 34.0;
    temp_ += (target_temp - temp_) * 0.01;
    const double power = std::round(busy_ ? 340 + 12 * unit(rng_) : 62 + 1.5 * unit(rng_));
    energy_mj_ += power * 1000.0;
    if (busy_ && u01(rng_) < 0.01) sm_clock_ = (sm_clock_ == 1980 ? 1830 : 1980);  // throttle steps
    const double util = busy_ ? std::clamp(std::round(96 + 3 * unit(rng_)), 0.0, 100.0) : 0.0;
    if (u01(rng_) < 0.0005) ++sbe_;
    if (busy_ && u01(rng_) < 0.002) power_violation_us_ += 250000;
    nvlink_bytes_ += busy_ ? std::round(2.0e9 + 1.0e8 * unit(rng_)) : 0.0;

    out[0] = std::round(temp_ + unit(rng_) * 0.5);
    out[1] = std::round(temp_ + 6 + unit(rng_) * 0.5);
    out[2] = power;
    out[3] = energy_mj_;
    out[4] = busy_ ? sm_clock_ : 210;
    out[5] = busy_ ? 2619 : 405;
    out[6] = util;
    out[7] = busy_ ? std::clamp(std::round(40 + 5 * unit(rng_)), 0.0, 100.0) : 0.0;
    out[8] = 0;
    out[9] = 0;
    out[10] = fb_used_;
    out[11] = 81559 - fb_used_;
    out[12] = 0;
    out[13] = 0;
    out[14] = sbe_;
    out[15] = power_violation_us_;
    out[16] = busy_ && sm_clock_ != 1980 ? 4 : (busy_ ? 0 : 1);
    out[17] = nvlink_bytes_;
    out[18] = busy_ ? std::round(5200 + 300 * unit(rng_)) : 0.0;  // KB/s, as NVML reports
    out[19] = busy_ ? std::clamp(0.93 + 0.02 * unit(rng_), 0.0, 1.0) : 0.0;
  }

 private:
  void newPhase() {
    std::uniform_int_distribution<int> minutes(10, 40);
    busy_ = !busy_;
    phase_left_ = minutes(rng_) * 60;
    fb_used_ = busy_ ? 20000 + 1000 * std::uniform_int_distribution<int>(0, 50)(rng_) : 0;
  }

  std::mt19937 rng_;
  bool busy_ = false;
  int phase_left_ = 0;
  double temp_ = 40;
  double energy_mj_ = 1.2e9;
  double sm_clock_ = 1980;
  double sbe_ = 0;
  double power_violation_us_ = 0;
  double nvlink_bytes_ = 0;
  double fb_used_ = 0;
};

}  // namespace gw::store::testing
