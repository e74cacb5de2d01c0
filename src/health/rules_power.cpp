// Power rules (R18, R21): low draw at full load, high draw while idle, slowdowns for power, a
// power cap, a power-saving P-state under load.
#include "health/rule.h"

namespace gw::health {
namespace {

std::uint64_t reasonsOf(const RuleContext& x) {
  return valid(x.at(kReasons)) ? static_cast<std::uint64_t>(x.at(kReasons)) : 0;
}

// A slowdown reason, or a power-saving P-state, explains low power, so it is left to the slowdown
// and P-state rules.
std::optional<Condition> powerLowUnderLoad(const RuleContext& x) {
  const RuleConfig& c = x.config;
  const auto& s = x.latest().v;
  const double util = s[kUtil];
  const double limit = valid(s[kEnforced]) && s[kEnforced] > 0 ? s[kEnforced] : s[kPowerLimit];
  const bool saving = valid(s[kPstate]) && s[kPstate] >= c.pstate_slow && s[kPstate] < 32;
  const bool explained = (reasonsOf(x) & (kHwSlowdown | kHwPowerBrake | kSwThermal | kHwThermal)) || saving;
  if (!(valid(util) && util >= c.full_load_util && valid(s[kPower]) && valid(limit) && limit > 0 &&
        s[kPower] < c.low_power_fraction * limit && !explained))
    return std::nullopt;
  return Condition{
      .severity = Severity::Warning,
      .summary = x.gpuName() + " draws " + fmt(s[kPower]) + " W at " + fmt(util) + " % utilisation, " +
                 fmt(100 * s[kPower] / limit) + " % of its " + trimmed(limit) + " W limit.",
      .action =
          "Check the power cables and connectors, the power limit and the clocks (nvidia-smi -q -d "
          "POWER,PERFORMANCE,CLOCK); memory-bound work also draws less.",
      .evidence = "power_usage=" + fmt(s[kPower], 1) + " limit=" + trimmed(limit) + " gpu_util=" + fmt(util)};
}

// An idle board normally drops to P8; one still in P0 has its clocks held up (a leftover
// `nvidia-smi -lgc`/`-lmc`, an application-clock setting, or a context keeping it awake).
std::optional<Condition> idlePowerHigh(const RuleContext& x) {
  const RuleConfig& c = x.config;
  const auto& s = x.latest().v;
  const double util = s[kUtil];
  if (!(valid(util) && util <= c.idle_util && valid(s[kPower]) && s[kPower] > c.idle_power_w)) return std::nullopt;
  const bool stuckP0 = valid(s[kPstate]) && s[kPstate] == 0;
  return Condition{
      .severity = Severity::Warning,
      .summary = x.gpuName() + " draws " + fmt(s[kPower]) + " W while idle" +
                 (stuckP0 ? ", held in P0" + (valid(s[kSmClock]) ? " at " + fmt(s[kSmClock]) + " MHz" : std::string()) +
                                " instead of dropping to its idle clocks."
                          : " (normal is 20-90 W depending on the board)."),
      .action = stuckP0 ? "Check for locked clocks (nvidia-smi -q -d CLOCK,PERFORMANCE) and reset them with "
                          "nvidia-smi -rgc and -rmc; "
                          "look for a leftover process keeping a context (nvidia-smi "
                          "--query-compute-apps=pid,used_memory)."
                        : "Look for a leftover process holding the GPU (nvidia-smi "
                          "--query-compute-apps=pid,used_memory); enable persistence mode or reset the GPU.",
      .evidence = "power_usage=" + fmt(s[kPower], 1) + " gpu_util=" + fmt(util) + " threshold=" +
                  trimmed(c.idle_power_w) + (valid(s[kPstate]) ? " pstate=" + fmt(s[kPstate]) : std::string()) +
                  (valid(s[kSmClock]) ? " sm_clock=" + fmt(s[kSmClock]) : std::string())};
}

std::optional<Condition> powerSlowdown(const RuleContext& x) {
  const auto& s = x.latest().v;
  const std::uint64_t reasons = reasonsOf(x);
  const bool brake = reasons & kHwPowerBrake;
  const bool hwSlow = (reasons & kHwSlowdown) && !(reasons & (kSwThermal | kHwThermal));
  if (!(brake || hwSlow)) return std::nullopt;
  return Condition{
      .severity = Severity::Critical,
      .summary = x.gpuName() + (brake ? " is held down by the power brake (external power-brake signal)."
                                      : " is slowed by hardware (HW slowdown without a thermal cause)."),
      .action =
          "Check the node's power supplies, power cables and the BMC's power-brake events; drain the node if it "
          "persists.",
      .evidence = "clock_event_reasons=" + hex(static_cast<double>(reasons)) +
                  (valid(s[kSmClock]) ? " sm_clock=" + fmt(s[kSmClock]) : "") +
                  (valid(s[kPower]) ? " power_usage=" + fmt(s[kPower], 1) : "")};
}

std::optional<Condition> powerCapped(const RuleContext& x) {
  const RuleConfig& c = x.config;
  const auto& s = x.latest().v;
  const std::uint64_t reasons = reasonsOf(x);
  const bool underLoad = valid(s[kUtil]) && s[kUtil] >= c.load_util;
  const bool capped = underLoad && (reasons & kSwPowerCap) && valid(s[kEnforced]) && valid(s[kDefaultLimit]) &&
                      s[kDefaultLimit] > 0 && s[kEnforced] < c.power_cap_fraction * s[kDefaultLimit];
  if (!capped) return std::nullopt;
  return Condition{.severity = Severity::Warning,
                   .summary = x.gpuName() + " is power-capped at " + trimmed(s[kEnforced]) + " W, below its default " +
                              trimmed(s[kDefaultLimit]) + " W limit, while under load.",
                   .action = "Restore the power limit (nvidia-smi -pl) unless the cap is intended.",
                   .evidence = "enforced_power_limit=" + trimmed(s[kEnforced]) + " default=" +
                               trimmed(s[kDefaultLimit]) + " reasons=" + hex(static_cast<double>(reasons))};
}

// P-states run 0..15; NVML answers 32 for "unknown".
std::optional<Condition> pstateUnderLoad(const RuleContext& x) {
  const RuleConfig& c = x.config;
  const double util = x.at(kUtil), pstate = x.at(kPstate);
  const bool underLoad = valid(util) && util >= c.load_util;
  if (!(underLoad && valid(pstate) && pstate >= c.pstate_slow && pstate < 32)) return std::nullopt;
  return Condition{
      .severity = Severity::Warning,
      .summary = x.gpuName() + " is in power-saving state P" + fmt(pstate) + " while " + fmt(util) + " % busy.",
      .action =
          "Check clocks and power limits (nvidia-smi -q -d PERFORMANCE,CLOCK); reset application clocks or the "
          "GPU.",
      .evidence = "pstate=" + fmt(pstate) + " gpu_util=" + fmt(util)};
}

constexpr Threshold kLowPower[] = {
    {.signal = "utilisation",
     .value = [](const RuleConfig& c) { return c.full_load_util; },
     .unit = " %",
     .config_key = "full_load_util"},
    {.signal = "power, share of the enforced limit",
     .cmp = Cmp::kBelow,
     .value = [](const RuleConfig& c) { return c.low_power_fraction; },
     .unit = " of the enforced limit",
     .percent = true,
     .step = 0.01,
     .config_key = "low_power_fraction"},
};
constexpr Threshold kIdlePower[] = {
    {.signal = "utilisation",
     .cmp = Cmp::kAtMost,
     .value = [](const RuleConfig& c) { return c.idle_util; },
     .unit = " %",
     .config_key = "idle_util"},
    {.signal = "power",
     .cmp = Cmp::kAbove,
     .value = [](const RuleConfig& c) { return c.idle_power_w; },
     .unit = " W",
     .config_key = "idle_power_w"},
};
constexpr Threshold kPowerCapped[] = {
    {.signal = "utilisation",
     .value = [](const RuleConfig& c) { return c.load_util; },
     .unit = " %",
     .config_key = "load_util"},
    {.signal = "enforced limit, share of the default",
     .cmp = Cmp::kBelow,
     .value = [](const RuleConfig& c) { return c.power_cap_fraction; },
     .unit = " of the default",
     .percent = true,
     .step = 0.01,
     .config_key = "power_cap_fraction"},
};
constexpr Threshold kPstate[] = {
    {.signal = "P-state", .value = [](const RuleConfig& c) { return c.pstate_slow; }, .config_key = "pstate_slow"},
    {.signal = "P-state (32: unknown)", .cmp = Cmp::kBelow, .value = [](const RuleConfig&) { return 32.0; }},
    {.signal = "utilisation",
     .value = [](const RuleConfig& c) { return c.load_util; },
     .unit = " %",
     .config_key = "load_util"},
};

const Rule kRules[] = {
    {.info = {.name = "power_low_under_load",
              .config_key = "low_power_hold_ms",
              .hold = &RuleConfig::low_power_hold_ms,
              .kb_id = "low-power-under-load",
              .fires_when = "util {0}, power {1}, no slowdown reason and no power-saving P-state",
              .thresholds = kLowPower},
     .evaluate = powerLowUnderLoad},
    {.info = {.name = "idle_power_high",
              .config_key = "idle_power_hold_ms",
              .hold = &RuleConfig::idle_power_hold_ms,
              .fires_when = "util {0}, power {1}",
              .thresholds = kIdlePower},
     .evaluate = idlePowerHigh},
    {.info = {.name = "power_slowdown",
              .config_key = "power_slowdown_hold_ms",
              .hold = &RuleConfig::power_slowdown_hold_ms,
              .kb_id = "low-power-under-load",
              .severity = Severity::Critical,
              .fires_when = "power brake, or HW slowdown without a thermal reason"},
     .evaluate = powerSlowdown},
    {.info = {.name = "power_capped",
              .config_key = "power_cap_hold_ms",
              .hold = &RuleConfig::power_cap_hold_ms,
              .kb_id = "low-power-under-load",
              .fires_when = "SW power cap while util {0} and the enforced limit {1}",
              .thresholds = kPowerCapped},
     .evaluate = powerCapped},
    {.info = {.name = "pstate_under_load",
              .config_key = "pstate_hold_ms",
              .hold = &RuleConfig::pstate_hold_ms,
              .kb_id = "low-power-under-load",
              .fires_when = "P-state {0} (and {1}) while util {2}",
              .thresholds = kPstate},
     .evaluate = pstateUnderLoad},
};

}  // namespace

std::span<const Rule> powerRules() { return kRules; }

}  // namespace gw::health
