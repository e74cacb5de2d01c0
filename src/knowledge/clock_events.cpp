#include "knowledge/clock_events.h"

namespace gw::knowledge {

std::span<const ClockEventReason> clockEventReasons() {
  // Bit values from nvml.h (checked against bindings.rs by tests/abi).
  static constexpr ClockEventReason kReasons[] = {
      {0x1, "gpu_idle", "idle"},
      {0x2, "applications_clocks_setting", "application clocks"},
      {0x4, "sw_power_cap", "SW power cap"},
      {0x8, "hw_slowdown", "HW slowdown"},
      {0x10, "sync_boost", "sync boost"},
      {0x20, "sw_thermal_slowdown", "SW thermal slowdown"},
      {0x40, "hw_thermal_slowdown", "HW thermal slowdown"},
      {0x80, "hw_power_brake_slowdown", "HW power brake"},
      {0x100, "display_clock_setting", "display clocks"},
  };
  return kReasons;
}

std::string clockEventReasonsText(std::uint64_t bits) {
  std::string s;
  for (const auto& r : clockEventReasons())
    if (bits & r.bit) s += (s.empty() ? "" : ", ") + std::string(r.title);
  return s.empty() ? "none" : s;
}

}  // namespace gw::knowledge
