// What each clock-event (throttle) reason bit means: NVML's nvmlClocksEventReason* / the older
// nvmlClocksThrottleReason* values (the same bits), with nvidia-smi's name for it
// (clocks_event_reasons.<name>) and a few words for people. One table: job accounting, diag's
// watch evidence and the command line all name reasons from here.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace gw::knowledge {

struct ClockEventReason {
  std::uint64_t bit;
  const char* name;   // nvidia-smi: "sw_power_cap"
  const char* title;  // "SW power cap"
};

// In bit order.
std::span<const ClockEventReason> clockEventReasons();
// "SW power cap, HW slowdown" for the bits set ("none" for 0); unknown bits are left out.
std::string clockEventReasonsText(std::uint64_t bits);

inline constexpr std::uint64_t kClockEventGpuIdle = 0x1;

}  // namespace gw::knowledge
