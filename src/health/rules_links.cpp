// Link rules: a PCIe link trained below its maximum or replaying packets, NVLink links down or
// counting errors, a GPU not (or badly) registered with its NVSwitch fabric.
#include <algorithm>

#include "health/rule.h"
#include "nvml/nvml.h"

namespace gw::health {
namespace {

// Only under load: an idle GPU lowers its link speed on purpose to save power.
std::optional<Condition> pcieDowntrain(const RuleContext& x) {
  const auto& s = x.latest().v;
  const double util = s[kUtil];
  const bool underLoad = valid(util) && util >= x.config.load_util;
  const double maxGen = valid(s[kPcieMaxGen]) && s[kPcieMaxGen] > 0 ? s[kPcieMaxGen] : x.gpu->max_pcie_gen;
  const double maxWidth = valid(s[kPcieMaxWidth]) && s[kPcieMaxWidth] > 0 ? s[kPcieMaxWidth] : x.gpu->max_pcie_width;
  const bool down =
      underLoad && valid(s[kPcieGen]) && valid(s[kPcieWidth]) && (s[kPcieGen] < maxGen || s[kPcieWidth] < maxWidth);
  if (!down) return std::nullopt;
  return Condition{.severity = Severity::Warning,
                   .summary = x.gpuName() + " PCIe link runs at Gen" + fmt(s[kPcieGen]) + " x" + fmt(s[kPcieWidth]) +
                              " under load, below its Gen" + fmt(maxGen) + " x" + fmt(maxWidth) + " maximum.",
                   .action =
                       "Reseat the GPU or riser, check the slot, cables and BIOS PCIe settings; host-device "
                       "transfers are slower until fixed.",
                   .evidence = "pcie_link_gen=" + fmt(s[kPcieGen]) + "/" + fmt(maxGen) + " pcie_link_width=" +
                               fmt(s[kPcieWidth]) + "/" + fmt(maxWidth) + " gpu_util=" + fmt(util)};
}

// The rate needs at least half a window of history, so a counter read once is never a rate.
std::optional<Condition> pcieReplay(const RuleContext& x) {
  const RuleConfig& c = x.config;
  const auto& s = x.latest().v;
  if (!valid(s[kReplay])) return std::nullopt;
  const Sample* old = x.gpu->firstSince(x.now - c.pcie_replay_window_ms);
  if (!(old && valid(old->v[kReplay]) && x.now - old->t >= c.pcie_replay_window_ms / 2)) return std::nullopt;
  const double perMin = (s[kReplay] - old->v[kReplay]) * 60'000.0 / static_cast<double>(x.now - old->t);
  const int gen = valid(s[kPcieGen]) ? static_cast<int>(s[kPcieGen]) : 5;
  const double allowed = c.pcie_replay_per_min[static_cast<std::size_t>(std::clamp(gen, 1, 5) - 1)];
  if (!(perMin > allowed)) return std::nullopt;
  return Condition{.severity = Severity::Warning,
                   .summary = x.gpuName() + " PCIe link is replaying " + fmt(perMin, 1) +
                              " packets a minute, above the Gen" + std::to_string(gen) + " allowance of " +
                              fmt(allowed) + ".",
                   .action =
                       "Reseat the GPU or riser and check the slot; a marginal link corrupts packets and can "
                       "drop the GPU off the bus.",
                   .evidence = "pcie_replay_counter " + fmt(old->v[kReplay]) + " -> " + fmt(s[kReplay]) + " in " +
                               fmt((x.now - old->t) / 1000.0) + " s"};
}

std::optional<Condition> nvlinkDown(const RuleContext& x) {
  const double active = x.at(kNvlActive), baseline = x.gpu->nvlink_baseline;
  if (!(valid(active) && baseline > 0 && active < baseline)) return std::nullopt;
  return Condition{.severity = Severity::Critical,
                   .summary = x.gpuName() + " has " + fmt(baseline - active) + " NVLink link(s) down (" + fmt(active) +
                              " of " + fmt(baseline) + " active).",
                   .action =
                       "Drain the node and reset the GPU / fabric; if the link stays down, inspect the NVLink / "
                       "NVSwitch hardware.",
                   .evidence = "nvlink_active_links=" + fmt(active) + " baseline=" + fmt(baseline)};
}

std::optional<Condition> nvlinkErrors(const RuleContext& x) {
  const RuleConfig& c = x.config;
  const Sample& latest = x.latest();
  const Sample* old = x.gpu->firstSince(x.now - c.nvlink_window_ms);
  if (!old || old == &latest) return std::nullopt;
  double rise = 0;
  for (Col k : {kNvlCrcFlit, kNvlCrcData, kNvlReplay, kNvlRecovery})
    if (valid(latest.v[k]) && valid(old->v[k])) rise += latest.v[k] - old->v[k];
  if (!(rise >= c.nvlink_error_max && rise > 0)) return std::nullopt;
  return Condition{.severity = Severity::Warning,
                   .summary = x.gpuName() + " NVLink error counters (CRC / replay / recovery) are increasing.",
                   .action =
                       "Schedule a drain and NVLink diagnostics (dcgmi diag -r 3); reseat or replace the part if "
                       "errors keep rising.",
                   .evidence = "nvlink errors +" + fmt(rise) + " in " + fmt((x.now - old->t) / 1000.0) + " s"};
}

// On an NVSwitch system (HGX, DGX, GB200 racks) a GPU is usable only once nvidia-fabricmanager has
// registered it with the fabric: until then CUDA fails on it with error 802 ("system not yet
// initialized") while nvidia-smi shows a healthy card, the classic "fabricmanager is not running"
// after a driver upgrade. The registration comes first; its health summary only counts once done.
std::optional<Condition> fabric(const RuleContext& x) {
  const double st = x.at(kFabric), health = x.at(kFabricHealth);
  const std::string who = x.gpuName();
  const std::string error802 = "CUDA fails on this GPU with error 802 (system not yet initialized) until it is.";
  const unsigned code = valid(st) ? static_cast<unsigned>(st) : nvml::kFabricNotSupported;
  if (code != nvml::kFabricSuccess && code != nvml::kFabricNotSupported) {
    const std::string evidence = "fabric_status=" + fmt(st) + " (" + nvml::fabricStatusName(code) + ")";
    switch (code) {
      case nvml::kFabricNotStarted:
        return Condition{.severity = Severity::Critical,
                         .summary = who +
                                    " is not registered with the NVSwitch fabric (not started): "
                                    "nvidia-fabricmanager is not running. " +
                                    error802,
                         .action =
                             "Start nvidia-fabricmanager (systemctl start nvidia-fabricmanager; its version must "
                             "equal the driver's) and read /var/log/fabricmanager.log if it stops again.",
                         .evidence = evidence};
      case nvml::kFabricInProgress:
        return Condition{.severity = Severity::Warning,
                         .summary = who + "'s registration with the NVSwitch fabric is still in progress. " + error802,
                         .action =
                             "Read /var/log/fabricmanager.log: registration takes seconds, so a long one is stuck; "
                             "restart nvidia-fabricmanager.",
                         .evidence = evidence};
      case nvml::kFabricFailure:
        return Condition{.severity = Severity::Critical,
                         .summary = who + "'s registration with the NVSwitch fabric failed. " + error802,
                         .action =
                             "Read /var/log/fabricmanager.log and the kernel log (SXid lines); restart "
                             "nvidia-fabricmanager; if it fails again, drain the node and reset the GPUs and "
                             "NVSwitches (or reboot).",
                         .evidence = evidence};
      default:
        return Condition{.severity = Severity::Warning,
                         .summary = who + " reports a fabric status gpuwarden does not know (" + fmt(st) + ").",
                         .action = "Compare nvidia-smi -q's Fabric section with the driver's documentation.",
                         .evidence = evidence};
    }
  }
  if (!(code == nvml::kFabricSuccess && valid(health))) return std::nullopt;
  const auto summary = static_cast<unsigned>(health);
  const std::string evidence = "fabric_health=" + fmt(health) + " (" + nvml::fabricHealthSummaryName(summary) + ")";
  if (summary == NVML_GPU_FABRIC_HEALTH_SUMMARY_UNHEALTHY)
    return Condition{.severity = Severity::Critical,
                     .summary = who + "'s NVSwitch fabric is unhealthy (a route is unhealthy or recovering).",
                     .action =
                         "Drain the node; read nvidia-smi -q's Fabric health, nvidia-smi nvlink -e and the SXid "
                         "lines of the kernel log; reset the GPUs and NVSwitches or reboot.",
                     .evidence = evidence};
  if (summary == NVML_GPU_FABRIC_HEALTH_SUMMARY_LIMITED_CAPACITY)
    return Condition{.severity = Severity::Warning,
                     .summary = who + "'s NVSwitch fabric runs with limited capacity (bandwidth degraded).",
                     .action =
                         "Collective traffic over NVLink is slower: schedule a drain and check the links "
                         "(nvidia-smi nvlink -s, nvidia-smi nvlink -e).",
                     .evidence = evidence};
  return std::nullopt;
}

constexpr Threshold kDowntrain[] = {
    {.signal = "link generation", .cmp = Cmp::kBelow, .against = "the highest it supports"},
    {.signal = "link width", .cmp = Cmp::kBelow, .against = "the widest it supports"},
    {.signal = "utilisation",
     .value = [](const RuleConfig& c) { return c.load_util; },
     .unit = " %",
     .config_key = "load_util"},
};
constexpr Threshold kReplay[] = {
    {.signal = "replays a minute at Gen1",
     .cmp = Cmp::kAbove,
     .value = [](const RuleConfig& c) { return c.pcie_replay_per_min[0]; },
     .config_key = "pcie_replay_per_min[0]"},
    {.signal = "replays a minute at Gen2",
     .cmp = Cmp::kAbove,
     .value = [](const RuleConfig& c) { return c.pcie_replay_per_min[1]; },
     .config_key = "pcie_replay_per_min[1]"},
    {.signal = "replays a minute at Gen3",
     .cmp = Cmp::kAbove,
     .value = [](const RuleConfig& c) { return c.pcie_replay_per_min[2]; },
     .config_key = "pcie_replay_per_min[2]"},
    {.signal = "replays a minute at Gen4",
     .cmp = Cmp::kAbove,
     .value = [](const RuleConfig& c) { return c.pcie_replay_per_min[3]; },
     .config_key = "pcie_replay_per_min[3]"},
    {.signal = "replays a minute at Gen5 and later",
     .cmp = Cmp::kAbove,
     .value = [](const RuleConfig& c) { return c.pcie_replay_per_min[4]; },
     .config_key = "pcie_replay_per_min[4]"},
};
constexpr Threshold kNvlinkDown[] = {
    {.signal = "active NVLink links", .cmp = Cmp::kBelow, .against = "the most seen", .severity = Severity::Critical},
};
constexpr Threshold kNvlinkErrors[] = {
    {.signal = "CRC + replay + recovery error rise within `nvlink_window_ms`",
     .value = [](const RuleConfig& c) { return c.nvlink_error_max; },
     .config_key = "nvlink_error_max"},
};

constexpr Threshold kFabric[] = {
    {.signal = "fabric status 1 (not started)",
     .cmp = Cmp::kEqual,
     .value = [](const RuleConfig&) { return static_cast<double>(nvml::kFabricNotStarted); },
     .severity = Severity::Critical,
     .marks = "not started"},
    {.signal = "fabric status 2 (in progress)",
     .cmp = Cmp::kEqual,
     .value = [](const RuleConfig&) { return static_cast<double>(nvml::kFabricInProgress); },
     .marks = "in progress"},
    {.signal = "fabric status 4 (failure)",
     .cmp = Cmp::kEqual,
     .value = [](const RuleConfig&) { return static_cast<double>(nvml::kFabricFailure); },
     .severity = Severity::Critical,
     .marks = "failed"},
    {.signal = "fabric health 2 (unhealthy)",
     .cmp = Cmp::kEqual,
     .value = [](const RuleConfig&) { return static_cast<double>(NVML_GPU_FABRIC_HEALTH_SUMMARY_UNHEALTHY); },
     .severity = Severity::Critical,
     .marks = "unhealthy"},
    {.signal = "fabric health 3 (limited capacity)",
     .cmp = Cmp::kEqual,
     .value = [](const RuleConfig&) { return static_cast<double>(NVML_GPU_FABRIC_HEALTH_SUMMARY_LIMITED_CAPACITY); },
     .marks = "limited capacity"},
};

const Rule kRules[] = {
    {.info = {.name = "pcie_downtrain",
              .config_key = "pcie_hold_ms",
              .hold = &RuleConfig::pcie_hold_ms,
              .fires_when = "gen {0} or width {1} while util {2}",
              .thresholds = kDowntrain},
     .evaluate = pcieDowntrain},
    {.info = {.name = "pcie_replay",
              .config_key = "pcie_hold_ms",
              .hold = &RuleConfig::pcie_hold_ms,
              .fires_when = "replays a minute (over `pcie_replay_window_ms`, 1 min) at Gen1 {0}, Gen2 {1}, Gen3 {2}, "
                            "Gen4 {3}, Gen5+ {4}",
              .thresholds = kReplay},
     .evaluate = pcieReplay},
    {.info = {.name = "nvlink_down",
              .config_key = "nvlink_hold_ms",
              .hold = &RuleConfig::nvlink_hold_ms,
              .severity = Severity::Critical,
              .fires_when = "active links {0}",
              .thresholds = kNvlinkDown},
     .evaluate = nvlinkDown},
    {.info = {.name = "nvlink_errors",
              .config_key = "nvlink_hold_ms",
              .hold = &RuleConfig::nvlink_hold_ms,
              .fires_when = "CRC + replay + recovery rise {0} within `nvlink_window_ms` (5 min)",
              .thresholds = kNvlinkErrors},
     .evaluate = nvlinkErrors},
    {.info = {.name = "fabric",
              .config_key = "fabric_hold_ms",
              .hold = &RuleConfig::fabric_hold_ms,
              .severity = Severity::Critical,
              .fires_when = "NVSwitch systems: fabric status {0} or {2} (critical), {1} (warning); once registered, "
                            "health summary {3} (critical), {4} (warning)",
              .thresholds = kFabric},
     .evaluate = fabric},
};

}  // namespace

std::span<const Rule> linkRules() { return kRules; }

}  // namespace gw::health
