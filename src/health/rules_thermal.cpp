// Thermal rules (R19): core and memory temperature, thermal slowdown, a failed fan.
#include <algorithm>

#include "health/rule.h"

namespace gw::health {
namespace {

std::optional<Condition> gpuTemperature(const RuleContext& x) {
  const RuleConfig& c = x.config;
  const double temp = x.at(kTemp), slowdownTemp = x.at(kSlowdownTemp);
  if (!valid(temp) || temp < c.gpu_temp_c) return std::nullopt;
  const bool slowdown = valid(slowdownTemp) && slowdownTemp > 0 && temp >= slowdownTemp;
  return Condition{
      .severity = slowdown ? Severity::Critical : Severity::Warning,
      .summary = x.gpuName() + " core temperature is " + fmt(temp) + " °C, at or above the " + fmt(c.gpu_temp_c) +
                 " °C alert threshold.",
      .action =
          "Check cooling: inlet air temperature, airflow, fans and blocked heatsinks; reduce the load or drain the GPU "
          "if it keeps rising.",
      .evidence = "gpu_temp=" + fmt(temp) + " threshold=" + fmt(c.gpu_temp_c) +
                  (valid(slowdownTemp) ? " slowdown_temp=" + fmt(slowdownTemp) : "")};
}

std::optional<Condition> memoryTemperature(const RuleContext& x) {
  const RuleConfig& c = x.config;
  const double temp = x.at(kMemTemp);
  if (!valid(temp) || temp < c.memory_temp_c) return std::nullopt;
  return Condition{.severity = Severity::Warning,
                   .summary = x.gpuName() + " memory temperature is " + fmt(temp) + " °C, at or above the " +
                              fmt(c.memory_temp_c) + " °C alert threshold.",
                   .action = "Check cooling and airflow; HBM this hot throttles and ages faster.",
                   .evidence = "memory_temp=" + fmt(temp) + " threshold=" + fmt(c.memory_temp_c)};
}

// A thermal reason alone is not enough: the clocks must also have fallen, against the board's
// maximum or against the last minute (boards that never report a maximum).
std::optional<Condition> thermalSlowdown(const RuleContext& x) {
  const RuleConfig& c = x.config;
  const auto& s = x.latest().v;
  const std::uint64_t reasons = valid(s[kReasons]) ? static_cast<std::uint64_t>(s[kReasons]) : 0;
  if (!(reasons & (kSwThermal | kHwThermal))) return std::nullopt;
  const double maxSm = valid(s[kMaxSm]) && s[kMaxSm] > 0 ? s[kMaxSm] : x.gpu->max_sm_clock;
  double minuteMax = 0;
  x.gpu->forEachSince(x.now - 60'000, [&](const Sample& o) {
    if (valid(o.v[kSmClock])) minuteMax = std::max(minuteMax, o.v[kSmClock]);
  });
  const double sm = s[kSmClock];
  const bool fell = valid(sm) && ((maxSm > 0 && sm < maxSm * (1 - c.thermal_clock_drop)) ||
                                  (minuteMax > 0 && sm < minuteMax * (1 - c.thermal_clock_drop)));
  if (!fell) return std::nullopt;
  const bool hw = reasons & kHwThermal;
  return Condition{
      .severity = hw ? Severity::Critical : Severity::Warning,
      .summary = x.gpuName() + " is slowing its clocks to protect itself from heat (" + (hw ? "hardware" : "software") +
                 " thermal slowdown).",
      .action =
          "Check cooling (inlet temperature, airflow, fans, heatsink contact); drain the GPU if the slowdown persists.",
      .evidence = "clock_event_reasons=" + hex(static_cast<double>(reasons)) + " sm_clock=" + fmt(sm) +
                  " max_sm_clock=" + fmt(maxSm) + (valid(s[kTemp]) ? " gpu_temp=" + fmt(s[kTemp]) : "")};
}

std::optional<Condition> fanFailure(const RuleContext& x) {
  const double fan = x.at(kFan), temp = x.at(kTemp);
  if (!(valid(fan) && fan <= 1 && valid(temp) && temp >= x.config.fan_min_temp_c)) return std::nullopt;
  return Condition{.severity = Severity::Critical,
                   .summary = x.gpuName() + " fan is at " + fmt(fan) + " % while the GPU is at " + fmt(temp) +
                              " °C: the fan has failed.",
                   .action = "Drain the GPU and replace its fan or board before it overheats.",
                   .evidence = "fan_speed=" + fmt(fan) + " gpu_temp=" + fmt(temp)};
}

constexpr Threshold kGpuTemp[] = {
    {.signal = "core temperature",
     .value = [](const RuleConfig& c) { return c.gpu_temp_c; },
     .unit = " °C",
     .config_key = "gpu_temp_c"},
    {.signal = "core temperature",
     .against = "the GPU's slowdown temperature",
     .unit = " °C",
     .severity = Severity::Critical},
};
constexpr Threshold kMemoryTemp[] = {
    {.signal = "memory temperature",
     .value = [](const RuleConfig& c) { return c.memory_temp_c; },
     .unit = " °C",
     .config_key = "memory_temp_c"},
};
constexpr Threshold kThermalSlowdown[] = {
    {.signal = "SM clock, share of its maximum",
     .cmp = Cmp::kBelow,
     .value = [](const RuleConfig& c) { return 1 - c.thermal_clock_drop; },
     .unit = " of the maximum",
     .percent = true,
     .step = 0.005,
     .config_key = "thermal_clock_drop (1 − it)"},
};
constexpr Threshold kFan[] = {
    {.signal = "fan speed",
     .cmp = Cmp::kAtMost,
     .value = [](const RuleConfig&) { return 1.0; },
     .unit = " %",
     .severity = Severity::Critical},
    {.signal = "core temperature",
     .value = [](const RuleConfig& c) { return c.fan_min_temp_c; },
     .unit = " °C",
     .config_key = "fan_min_temp_c",
     .severity = Severity::Critical},
};

const Rule kRules[] = {
    {.info = {.name = "gpu_temperature",
              .config_key = "temperature_hold_ms",
              .hold = &RuleConfig::temperature_hold_ms,
              .kb_id = "hot-and-loud",
              .fires_when = "core {0} (critical {1})",
              .thresholds = kGpuTemp},
     .evaluate = gpuTemperature},
    {.info = {.name = "memory_temperature",
              .config_key = "temperature_hold_ms",
              .hold = &RuleConfig::temperature_hold_ms,
              .kb_id = "hot-and-loud",
              .fires_when = "memory {0}",
              .thresholds = kMemoryTemp},
     .evaluate = memoryTemperature},
    {.info = {.name = "thermal_slowdown",
              .config_key = "thermal_hold_ms",
              .hold = &RuleConfig::thermal_hold_ms,
              .kb_id = "hot-and-loud",
              .fires_when = "HW/SW thermal reason and SM clock {0} or of the last minute's highest (critical when HW)",
              .thresholds = kThermalSlowdown},
     .evaluate = thermalSlowdown},
    {.info = {.name = "fan_failure",
              .config_key = "fan_hold_ms",
              .hold = &RuleConfig::fan_hold_ms,
              .kb_id = "fans-not-spinning",
              .severity = Severity::Critical,
              .fires_when = "fan {0} while core {1}",
              .thresholds = kFan},
     .evaluate = fanFailure},
};

}  // namespace

std::span<const Rule> thermalRules() { return kRules; }

}  // namespace gw::health
