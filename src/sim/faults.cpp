#include "sim/faults.h"

#include <algorithm>
#include <cmath>

#include "nvml/nvml_abi.h"

namespace gw::sim {
namespace {

const std::vector<FaultTypeInfo>& faultTable() {
  static const std::vector<FaultTypeInfo> table = {
      {"xid", FaultType::kXid, true, false, {"code", "action"}, {"code"}},
      {"ecc_sbe", FaultType::kEccSbe, true, false, {"count"}, {}},
      {"ecc_dbe", FaultType::kEccDbe, true, false, {"count"}, {}},
      {"retired_pages", FaultType::kRetiredPages, true, false, {"sbe", "dbe", "pending"}, {}},
      {"row_remap", FaultType::kRowRemap, true, false, {"correctable", "uncorrectable", "pending", "failure"}, {}},
      {"thermal_slowdown", FaultType::kThermalSlowdown, true, true, {"temperature"}, {}},
      {"power_slowdown", FaultType::kPowerSlowdown, true, true, {"clock_factor"}, {}},
      {"sw_power_cap", FaultType::kSwPowerCap, true, true, {"clock_factor"}, {}},
      {"power_brake", FaultType::kPowerBrake, true, true, {"clock_factor"}, {}},
      {"pcie_downtrain", FaultType::kPcieDowntrain, true, true, {"gen", "width"}, {}},
      {"pcie_replay", FaultType::kPcieReplay, true, true, {"rate"}, {"rate"}},
      {"nvlink_down", FaultType::kNvlinkDown, true, true, {"link"}, {"link"}},
      {"nvlink_errors",
       FaultType::kNvlinkErrors,
       true,
       true,
       {"link", "replay", "recovery", "crc_flit", "crc_data"},
       {}},
      {"fan_failure", FaultType::kFanFailure, true, true, {}, {}},
      {"fall_off_bus", FaultType::kFallOffBus, true, false, {}, {}},
      {"hang", FaultType::kHang, true, true, {"seconds", "call"}, {"seconds"}},
      {"driver_unloaded", FaultType::kDriverUnloaded, false, true, {}, {}},
      {"clocks_locked", FaultType::kClocksLocked, true, true, {"watts"}, {}},
      {"cooling_failure", FaultType::kCoolingFailure, true, true, {"factor"}, {}},
      {"pstate_stuck", FaultType::kPstateStuck, true, true, {"pstate"}, {}},
      {"fabric", FaultType::kFabric, true, true, {"state", "health"}, {}},
      {"call_error", FaultType::kCallError, false, true, {"call", "error", "after_calls"}, {"call", "error"}},
  };
  return table;
}

}  // namespace

const FaultTypeInfo* findFaultType(std::string_view name) {
  for (const auto& info : faultTable()) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

std::string faultTypeList() {
  std::string out;
  for (const auto& info : faultTable()) {
    if (!out.empty()) out += ", ";
    out += info.name;
  }
  return out;
}

FaultEffects effectsAt(const std::vector<const FaultConfig*>& faults, const GpuProfile& profile, double t) {
  FaultEffects e;
  for (const FaultConfig* f : faults) {
    if (!f->activeAt(t)) continue;
    switch (f->type) {
      case FaultType::kThermalSlowdown:
        // What the cooler lets it reach at full clocks; physics.cpp caps it once slowed down.
        e.thermal = true;
        e.thermal_target = f->temperature > 0 ? f->temperature : profile.temp_slowdown + 6.0;
        break;
      case FaultType::kCoolingFailure:
        // The heat path itself fails (a stopped pump, a clogged heatsink): every watt heats the GPU
        // `factor` times as much. At 3 an H100 under load outruns even its slowdown clocks.
        e.cooling_factor *= f->factor > 0 ? f->factor : 3.0;
        break;
      case FaultType::kFanFailure:
        e.fan_failed = true;
        break;
      case FaultType::kPowerSlowdown:
        // An external power-supply slowdown: the HW slowdown line is asserted.
        e.clock_factor = std::min(e.clock_factor, f->clock_factor > 0 ? f->clock_factor : 0.5);
        e.reasons |= nvmlClocksThrottleReasonHwSlowdown;
        break;
      case FaultType::kSwPowerCap:
        // The driver's own power management holds the clocks down (a new driver's power policy):
        // only SwPowerCap says so, as it does for any GPU at its power limit.
        e.clock_factor = std::min(e.clock_factor, f->clock_factor > 0 ? f->clock_factor : 0.85);
        e.reasons |= nvmlClocksThrottleReasonSwPowerCap;
        break;
      case FaultType::kPowerBrake:
        // The power brake asserts HW slowdown and names itself as the cause.
        e.clock_factor = std::min(e.clock_factor, f->clock_factor > 0 ? f->clock_factor : 0.3);
        e.reasons |= nvmlClocksThrottleReasonHwSlowdown | nvmlClocksThrottleReasonHwPowerBrakeSlowdown;
        break;
      case FaultType::kPcieDowntrain:
        if (f->gen) e.pcie_gen = f->gen;
        if (f->width) e.pcie_width = f->width;
        break;
      case FaultType::kClocksLocked:
        // Clocks pinned at the application clock (a leftover `nvidia-smi -lgc`, or a driver that
        // never lets the board drop to P8): idle work still burns a P0 floor, ~120 W on an H100.
        e.clocks_locked = true;
        e.locked_idle_power =
            f->watts > 0 ? f->watts : profile.idle_power + 0.08 * (profile.full_power - profile.idle_power);
        break;
      case FaultType::kPstateStuck:
        // The board stays in a power-saving state whatever the load (a driver or VBIOS that never
        // raises it, a board in a degraded mode): idle clocks, so the power stays low too, and no
        // slowdown reason says why.
        e.pstate = f->pstate ? f->pstate : NVML_PSTATE_8;
        e.clock_factor = std::min(e.clock_factor, static_cast<double>(profile.idle_sm_clock) /
                                                      static_cast<double>(profile.app_graphics_clock));
        break;
      case FaultType::kNvlinkDown:
        if (f->link >= 0) e.nvlink_down_mask |= 1u << f->link;
        break;
      default:
        break;
    }
  }
  return e;
}

EccCounts eccAt(const std::vector<const FaultConfig*>& faults, double t) {
  EccCounts c;
  for (const FaultConfig* f : faults) {
    if (t < f->at) continue;
    if (f->type == FaultType::kEccSbe) c.sbe += f->count;
    if (f->type == FaultType::kEccDbe) c.dbe += f->count;
  }
  return c;
}

RetiredPages retiredAt(const std::vector<const FaultConfig*>& faults, double t) {
  RetiredPages r;
  for (const FaultConfig* f : faults) {
    if (f->type != FaultType::kRetiredPages || t < f->at) continue;
    r.sbe += f->sbe;
    r.dbe += f->dbe;
    r.pending = r.pending || f->pending;
  }
  return r;
}

RemappedRows remappedAt(const std::vector<const FaultConfig*>& faults, double t) {
  RemappedRows r;
  for (const FaultConfig* f : faults) {
    if (f->type != FaultType::kRowRemap || t < f->at) continue;
    r.correctable += f->correctable;
    r.uncorrectable += f->uncorrectable;
    r.pending = r.pending || f->pending;
    r.failure = r.failure || f->failure;
  }
  return r;
}

unsigned recoveryActionAt(const std::vector<const FaultConfig*>& faults, double t) {
  const FaultConfig* latest = nullptr;
  for (const FaultConfig* f : faults) {
    if (f->type != FaultType::kXid || f->action < 0 || f->at > t) continue;
    if (!latest || f->at >= latest->at) latest = f;
  }
  return latest ? static_cast<unsigned>(latest->action) : NVML_GPU_RECOVERY_ACTION_NONE;
}

nvmlGpuFabricInfo_v3_t fabricAt(const std::vector<const FaultConfig*>& faults, unsigned clique_id, double t) {
  nvmlGpuFabricInfo_v3_t info{};
  info.state = NVML_GPU_FABRIC_STATE_COMPLETED;
  info.status = NVML_SUCCESS;
  info.cliqueId = clique_id;
  unsigned raised = 0;
  const FaultConfig* latest = nullptr;
  for (const FaultConfig* f : faults) {
    if (f->type != FaultType::kFabric || !f->activeAt(t)) continue;
    raised |= f->fabric_health;
    if (!latest || f->at >= latest->at) latest = f;
  }
  if (latest) {
    info.state = static_cast<unsigned char>(latest->fabric_state);
    if (latest->fabric_failed) info.status = NVML_ERROR_UNKNOWN;
  }
  // Each condition FALSE unless raised; no partition or configuration problem is modelled.
  auto field = [&](unsigned shift, unsigned true_value, unsigned false_value) {
    const unsigned v = ((raised >> shift) & 3u) == true_value ? true_value : false_value;
    info.healthMask |= v << shift;
  };
  field(NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_DEGRADED_BW, NVML_GPU_FABRIC_HEALTH_MASK_DEGRADED_BW_TRUE,
        NVML_GPU_FABRIC_HEALTH_MASK_DEGRADED_BW_FALSE);
  field(NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_ROUTE_RECOVERY, NVML_GPU_FABRIC_HEALTH_MASK_ROUTE_RECOVERY_TRUE,
        NVML_GPU_FABRIC_HEALTH_MASK_ROUTE_RECOVERY_FALSE);
  field(NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_ROUTE_UNHEALTHY, NVML_GPU_FABRIC_HEALTH_MASK_ROUTE_UNHEALTHY_TRUE,
        NVML_GPU_FABRIC_HEALTH_MASK_ROUTE_UNHEALTHY_FALSE);
  field(NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_ACCESS_TIMEOUT_RECOVERY,
        NVML_GPU_FABRIC_HEALTH_MASK_ACCESS_TIMEOUT_RECOVERY_TRUE,
        NVML_GPU_FABRIC_HEALTH_MASK_ACCESS_TIMEOUT_RECOVERY_FALSE);
  info.healthMask |= NVML_GPU_FABRIC_HEALTH_MASK_INCORRECT_CONFIGURATION_NONE
                     << NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_INCORRECT_CONFIGURATION;
  // The simulator's summary: degraded bandwidth alone limits capacity, any other condition makes the
  // fabric unhealthy (NVIDIA documents the values, not how the driver derives them).
  const unsigned bw = NVML_GPU_FABRIC_HEALTH_MASK_DEGRADED_BW_TRUE << NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_DEGRADED_BW;
  info.healthSummary = raised == 0    ? NVML_GPU_FABRIC_HEALTH_SUMMARY_HEALTHY
                       : raised == bw ? NVML_GPU_FABRIC_HEALTH_SUMMARY_LIMITED_CAPACITY
                                      : NVML_GPU_FABRIC_HEALTH_SUMMARY_UNHEALTHY;
  return info;
}

unsigned long long pcieReplaysAt(const std::vector<const FaultConfig*>& faults, double t) {
  unsigned long long n = 0;
  for (const FaultConfig* f : faults) {
    if (f->type == FaultType::kPcieReplay) n += static_cast<unsigned long long>(std::floor(f->rate * f->elapsedAt(t)));
  }
  return n;
}

unsigned long long nvlinkErrorsAt(const std::vector<const FaultConfig*>& faults, unsigned link, unsigned counter,
                                  double t) {
  unsigned long long n = 0;
  for (const FaultConfig* f : faults) {
    if (f->type != FaultType::kNvlinkErrors) continue;
    if (f->link >= 0 && static_cast<unsigned>(f->link) != link) continue;
    double rate = 0;
    switch (counter) {
      case NVML_NVLINK_ERROR_DL_REPLAY:
        rate = f->replay;
        break;
      case NVML_NVLINK_ERROR_DL_RECOVERY:
        rate = f->recovery;
        break;
      case NVML_NVLINK_ERROR_DL_CRC_FLIT:
        rate = f->crc_flit;
        break;
      case NVML_NVLINK_ERROR_DL_CRC_DATA:
        rate = f->crc_data;
        break;
      default:
        break;
    }
    n += static_cast<unsigned long long>(std::floor(rate * f->elapsedAt(t)));
  }
  return n;
}

}  // namespace gw::sim
