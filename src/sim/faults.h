// Fault catalog and the effect of active faults at a simulated time. Adding a fault type:
// a FaultType value, a row in faultTable() (faults.cpp), its parameters in the parser's
// parseFaultParam if new, and its effect below.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "nvml/nvml_abi.h"
#include "sim/scenario.h"

namespace gw::sim {

struct FaultTypeInfo {
  std::string_view name;
  FaultType type;
  bool per_gpu;  // needs `gpu:`; false for machine-wide faults
  bool allows_duration;
  std::vector<std::string_view> params;  // allowed keys beside type/gpu/at/duration/note
  std::vector<std::string_view> required;
};

const FaultTypeInfo* findFaultType(std::string_view name);
std::string faultTypeList();

// What the faults active at time t do to a GPU's physics (clock, power, temperature, links).
struct FaultEffects {
  bool thermal = false;
  double thermal_target = 0;  // degrees C the cooler can no longer keep below
  bool fan_failed = false;
  double cooling_factor = 1;              // multiplies the thermal resistance
  double clock_factor = 1;                // power slowdown / brake
  std::uint64_t reasons = 0;              // clock event reasons forced by faults
  unsigned pcie_gen = 0, pcie_width = 0;  // 0 = not downtrained
  std::uint32_t nvlink_down_mask = 0;
  bool clocks_locked = false;
  double locked_idle_power = 0;  // watts drawn at 0 % utilisation while locked
  unsigned pstate = 0;           // a P-state held whatever the load; 0 = the load decides
};
FaultEffects effectsAt(const std::vector<const FaultConfig*>& faults, const GpuProfile& profile, double t);

// Monotonic counters: sums over faults that have started by t.
struct EccCounts {
  unsigned long long sbe = 0, dbe = 0;
};
EccCounts eccAt(const std::vector<const FaultConfig*>& faults, double t);
struct RetiredPages {
  unsigned sbe = 0, dbe = 0;
  bool pending = false;
};
RetiredPages retiredAt(const std::vector<const FaultConfig*>& faults, double t);
struct RemappedRows {
  unsigned correctable = 0, uncorrectable = 0;
  bool pending = false, failure = false;
};
RemappedRows remappedAt(const std::vector<const FaultConfig*>& faults, double t);
// The recovery action the driver asks for at t: the latest xid fault with an action that has
// started, NVML_GPU_RECOVERY_ACTION_NONE when none has.
unsigned recoveryActionAt(const std::vector<const FaultConfig*>& faults, double t);
// The GPU's fabric registration at t on an NVSwitch system: completed, successful and healthy but
// for the fabric faults active then (the latest one's state; their health conditions together).
nvmlGpuFabricInfo_v3_t fabricAt(const std::vector<const FaultConfig*>& faults, unsigned clique_id, double t);
unsigned long long pcieReplaysAt(const std::vector<const FaultConfig*>& faults, double t);
// counter: nvmlNvLinkErrorCounter_t
unsigned long long nvlinkErrorsAt(const std::vector<const FaultConfig*>& faults, unsigned link, unsigned counter,
                                  double t);

}  // namespace gw::sim
