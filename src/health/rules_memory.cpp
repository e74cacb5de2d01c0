// Memory rules (R20): uncorrectable ECC errors, fast-rising correctable ones, page retirement and
// row remapping. Counters and flags are exact, so these hold for memory_hold_ms (0 by default).
#include "health/rule.h"

namespace gw::health {
namespace {

std::string orNa(double v) { return valid(v) ? fmt(v) : std::string("n/a"); }

std::optional<Condition> eccDbe(const RuleContext& x) {
  const double dbe = x.at(kDbeVol);
  const std::int64_t eventMs = x.gpu->dbe_event_ms;
  if (!((valid(dbe) && dbe > 0) || eventMs >= 0)) return std::nullopt;
  return Condition{.severity = Severity::Critical,
                   .summary = x.gpuName() + " reported uncorrectable (double-bit) ECC errors.",
                   .action =
                       "Drain the GPU and reset it (or reboot) so row remapping takes effect; if uncorrectable "
                       "errors recur, RMA the GPU.",
                   .evidence = "ecc_dbe_volatile=" + orNa(dbe) + (eventMs >= 0 ? " (DBE event seen)" : "")};
}

std::optional<Condition> eccSbeRising(const RuleContext& x) {
  const RuleConfig& c = x.config;
  const double sbe = x.at(kSbeVol);
  if (!valid(sbe)) return std::nullopt;
  const Sample* old = x.gpu->firstSince(x.now - c.sbe_window_ms);
  if (!(old && valid(old->v[kSbeVol]) && sbe - old->v[kSbeVol] >= c.sbe_rise_max)) return std::nullopt;
  return Condition{
      .severity = Severity::Warning,
      .summary = x.gpuName() + " correctable (single-bit) ECC errors are rising fast.",
      .action = "Watch for uncorrectable errors and row remapping; schedule a reset and field diagnostics.",
      .evidence = "ecc_sbe_volatile " + fmt(old->v[kSbeVol]) + " -> " + fmt(sbe) + " in " +
                  fmt((x.now - old->t) / 1000.0) + " s"};
}

std::optional<Condition> retiredPages(const RuleContext& x) {
  const RuleConfig& c = x.config;
  const auto& s = x.latest().v;
  const double retired = (valid(s[kRetSbe]) ? s[kRetSbe] : 0) + (valid(s[kRetDbe]) ? s[kRetDbe] : 0);
  const std::string evidence =
      "retired_pages sbe=" + orNa(s[kRetSbe]) + " dbe=" + orNa(s[kRetDbe]) + " pending=" + orNa(s[kRetPending]);
  if (retired >= c.retired_pages_max)
    return Condition{
        .severity = Severity::Critical,
        .summary = x.gpuName() + " has " + fmt(retired) + " retired memory pages, at the retirement limit.",
        .action = "Drain the node and replace the GPU (RMA).",
        .evidence = evidence};
  if (valid(s[kRetPending]) && s[kRetPending] > 0)
    return Condition{.severity = Severity::Warning,
                     .summary = x.gpuName() + " has memory pages waiting to be retired.",
                     .action = "Drain the GPU and reset it (or reboot) so the pending pages are retired.",
                     .evidence = evidence};
  return std::nullopt;
}

std::optional<Condition> rowRemap(const RuleContext& x) {
  const RuleConfig& c = x.config;
  const auto& s = x.latest().v;
  const std::string evidence = "remapped_rows_uncorrectable=" + orNa(s[kRemapUnc]) +
                               " pending=" + orNa(s[kRemapPending]) + " failure=" + orNa(s[kRemapFailure]);
  if (valid(s[kRemapFailure]) && s[kRemapFailure] > 0)
    return Condition{.severity = Severity::Critical,
                     .summary = x.gpuName() + " failed to remap a memory row: no spare rows are left.",
                     .action = "Drain the node and replace the GPU (RMA).",
                     .evidence = evidence};
  if (valid(s[kRemapUnc]) && s[kRemapUnc] >= c.remap_uncorrectable_max)
    return Condition{.severity = Severity::Critical,
                     .summary = x.gpuName() + " has " + fmt(s[kRemapUnc]) + " rows remapped for uncorrectable errors.",
                     .action = "Drain the node and replace the GPU (RMA).",
                     .evidence = evidence};
  if (valid(s[kRemapPending]) && s[kRemapPending] > 0)
    return Condition{.severity = Severity::Warning,
                     .summary = x.gpuName() + " has a row remapping pending.",
                     .action = "Drain the GPU and reset it (nvidia-smi -r) or reboot so the remapping takes effect.",
                     .evidence = evidence};
  return std::nullopt;
}

constexpr Threshold kDbe[] = {
    {.signal = "volatile DBE count",
     .cmp = Cmp::kAbove,
     .value = [](const RuleConfig&) { return 0.0; },
     .severity = Severity::Critical},
};
constexpr Threshold kSbe[] = {
    {.signal = "volatile SBE rise within `sbe_window_ms`",
     .value = [](const RuleConfig& c) { return c.sbe_rise_max; },
     .config_key = "sbe_rise_max"},
};
constexpr Threshold kRetired[] = {
    {.signal = "pages pending retirement", .cmp = Cmp::kAbove, .value = [](const RuleConfig&) { return 0.0; }},
    {.signal = "retired pages (SBE + DBE)",
     .value = [](const RuleConfig& c) { return c.retired_pages_max; },
     .config_key = "retired_pages_max",
     .severity = Severity::Critical},
};
constexpr Threshold kRemap[] = {
    {.signal = "row remapping pending", .cmp = Cmp::kAbove, .value = [](const RuleConfig&) { return 0.0; }},
    {.signal = "row remapping failure",
     .cmp = Cmp::kAbove,
     .value = [](const RuleConfig&) { return 0.0; },
     .severity = Severity::Critical},
    {.signal = "rows remapped for uncorrectable errors",
     .value = [](const RuleConfig& c) { return c.remap_uncorrectable_max; },
     .config_key = "remap_uncorrectable_max",
     .severity = Severity::Critical},
};

const Rule kRules[] = {
    {.info = {.name = "ecc_dbe",
              .config_key = "memory_hold_ms",
              .hold = &RuleConfig::memory_hold_ms,
              .kb_id = "ecc-rising",
              .sticky = true,
              .severity = Severity::Critical,
              .fires_when = "volatile DBE {0} or a DBE event",
              .thresholds = kDbe},
     .evaluate = eccDbe},
    {.info = {.name = "ecc_sbe_rising",
              .config_key = "memory_hold_ms",
              .hold = &RuleConfig::memory_hold_ms,
              .kb_id = "ecc-rising",
              .fires_when = "volatile SBE rise {0} within `sbe_window_ms` (10 min)",
              .thresholds = kSbe},
     .evaluate = eccSbeRising},
    {.info = {.name = "retired_pages",
              .config_key = "memory_hold_ms",
              .hold = &RuleConfig::memory_hold_ms,
              .kb_id = "xid63-row-remap",
              .sticky = true,
              .fires_when = "pending {0} (warning) or SBE + DBE {1} (critical)",
              .thresholds = kRetired},
     .evaluate = retiredPages},
    {.info = {.name = "row_remap",
              .config_key = "memory_hold_ms",
              .hold = &RuleConfig::memory_hold_ms,
              .kb_id = "xid63-row-remap",
              .sticky = true,
              .fires_when = "pending {0} (warning), failure {1} or uncorrectable {2} (critical)",
              .thresholds = kRemap},
     .evaluate = rowRemap},
};

}  // namespace

std::span<const Rule> memoryRules() { return kRules; }

}  // namespace gw::health
