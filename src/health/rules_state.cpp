// GPU and node state rules: a lost or stalled GPU, fewer GPUs than expected, persistence mode off,
// a driver/library mismatch, the driver's recovery action, and Xid events (R26), whose facts come
// from the Xid catalog.
#include <cctype>

#include "health/rule.h"
#include "health/rule_registry.h"
#include "knowledge/knowledge_base.h"
#include "knowledge/xid_catalog.h"
#include "nvml/nvml.h"

namespace gw::health {
namespace {

std::optional<Condition> gpuLost(const RuleContext& x) {
  const collect::GpuView& v = *x.view;
  if (!(v.state == collect::GpuState::Lost || x.gpu->fell_off_bus_ms >= 0)) return std::nullopt;
  return Condition{.severity = Severity::Fatal,
                   .summary = x.gpuName() + " is lost: it no longer answers (fallen off the bus or needs a reset).",
                   .action =
                       "Drain the node and reboot it; if the GPU is lost again, reseat or replace it (check "
                       "PCIe, power and temperature at the time).",
                   .evidence = "state=" + std::string(collect::stateName(v.state)) +
                               (v.state_reason.empty() ? "" : " (" + v.state_reason + ")")};
}

std::optional<Condition> gpuStalled(const RuleContext& x) {
  if (x.view->state != collect::GpuState::Stalled) return std::nullopt;
  return Condition{.severity = Severity::Critical,
                   .summary = "NVML calls on " + x.gpuName() + " hang past their deadline.",
                   .action =
                       "Check the kernel log for Xids; stop the GPU's processes and reset it (nvidia-smi -r), "
                       "or reboot the node.",
                   .evidence = x.view->state_reason};
}

std::optional<Condition> gpuCount(const RuleContext& x) {
  const int expected = x.config.expected_gpus, visible = x.node->visible_gpus;
  if (!(expected > 0 && visible >= 0 && visible < expected)) return std::nullopt;
  return Condition{.severity = Severity::Critical,
                   .summary = "The node shows " + std::to_string(visible) + " GPUs, fewer than the " +
                              std::to_string(expected) + " expected.",
                   .action =
                       "Check lspci and the kernel log for GPUs that fell off the bus or failed to initialise; "
                       "reseat or replace the missing GPU.",
                   .evidence = "visible=" + std::to_string(visible) + " expected=" + std::to_string(expected)};
}

std::optional<Condition> persistenceOff(const RuleContext& x) {
  const double mode = x.at(kPersistence);
  if (!(x.config.require_persistence && valid(mode) && mode == 0)) return std::nullopt;
  return Condition{
      .severity = Severity::Warning,
      .summary = x.gpuName() + " has persistence mode off: the driver tears down and re-initialises it between jobs.",
      .action = "Enable persistence mode (nvidia-smi -pm 1) or run nvidia-persistenced.",
      .evidence = "persistence_mode=0"};
}

constexpr int kNvmlErrorLibRmVersionMismatch = 18;

std::optional<Condition> driverMismatch(const RuleContext& x) {
  if (x.node->nvml_init_error != kNvmlErrorLibRmVersionMismatch) return std::nullopt;
  return Condition{.severity = Severity::Critical,
                   .summary = "The NVIDIA kernel module and the user-space NVML library are different versions.",
                   .action =
                       "Reboot the node (or reload the nvidia kernel modules) so the module matches the "
                       "library; do not mix driver packages.",
                   .evidence = "nvmlInit returned 18 (NVML_ERROR_LIB_RM_VERSION_MISMATCH)"};
}

// The driver's own verdict after an error (R560 and later; Xid 154 announces each change): until the
// GPU is drained, reset or the node rebooted as it asks, the GPU is not fit for work whatever the
// other signals say. Draining peer-to-peer traffic alone is a warning: the driver then names the
// next step.
std::optional<Condition> recoveryAction(const RuleContext& x) {
  const double a = x.at(kRecovery);
  if (!(valid(a) && a > 0)) return std::nullopt;
  const auto code = static_cast<unsigned>(a);
  const std::string name = nvml::recoveryActionName(code);
  std::string todo(knowledge::describe(knowledge::actionForRecoveryCode(static_cast<int>(code))));
  todo[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(todo[0])));
  return Condition{
      .severity = code == NVML_GPU_RECOVERY_ACTION_DRAIN_P2P ? Severity::Warning : Severity::Critical,
      .summary = "The driver asks for recovery of " + x.gpuName() + ": " + name + ".",
      .action = code == NVML_GPU_RECOVERY_ACTION_DRAIN_P2P
                    ? "Stop the processes that use peer-to-peer traffic on this GPU (and UVM persistence), "
                      "then read the recovery action again: the driver names the next step."
                    : todo + ", as the driver asks (" + name + ").",
      .evidence = "recovery_action=" + fmt(a) + " (" + name + ")"};
}

// Recent application-fault Xids on one GPU, for the repeat escalation.
int recentAppXids(const GpuHistory& g, const RuleConfig& c, std::int64_t now) {
  int n = 0;
  for (const auto& [code, seen] : g.xids)
    if (knowledge::lookupXid(code).applicationFault && now - seen.last <= c.xid_active_ms) n += seen.count;
  return n;
}

}  // namespace

Severity xidSeverity(int code) {
  const knowledge::XidInfo info = knowledge::lookupXid(code);
  if (info.applicationFault) return Severity::Info;
  switch (info.severity) {
    case knowledge::XidSeverity::kInfo:
      return Severity::Info;
    case knowledge::XidSeverity::kWarning:
      return Severity::Warning;
    case knowledge::XidSeverity::kCritical:
      return Severity::Critical;
    case knowledge::XidSeverity::kFatal:
      break;
  }
  return Severity::Fatal;
}

namespace {

// An application-fault Xid never marks a GPU bad on its own; the same fault repeating on one GPU
// while its peers run clean points at the GPU, so it escalates to a warning.
std::optional<Condition> xid(const RuleContext& x) {
  const RuleConfig& c = x.config;
  const auto& seen = x.gpu->xids.at(x.xid);
  if (x.now - seen.last > c.xid_active_ms) return std::nullopt;
  const knowledge::XidInfo info = knowledge::lookupXid(x.xid);
  Condition cond{.severity = xidSeverity(x.xid),
                 .summary = "Xid " + std::to_string(x.xid) + " on " + x.gpuName() + ": " + std::string(info.meaning),
                 .action = std::string(knowledge::describe(info.action)),
                 .evidence = "xid=" + std::to_string(x.xid) + " count=" + std::to_string(seen.count) +
                             (seen.message.empty() ? "" : " message=\"" + seen.message + "\""),
                 .sticky = !info.applicationFault};
  if (info.applicationFault) {
    const int here = recentAppXids(*x.gpu, c, x.now);
    int peersWithApp = 0;
    for (const GpuHistory* p : x.peers)
      if (recentAppXids(*p, c, x.now) > 0) ++peersWithApp;
    if (c.app_xid_repeat > 0 && here >= c.app_xid_repeat && peersWithApp == 0 && !x.peers.empty()) {
      cond.severity = Severity::Warning;
      cond.summary += " It repeats on this GPU only (" + std::to_string(here) + " times) while its peers run clean.";
      cond.action = std::string(knowledge::describe(info.escalation));
    }
  }
  const knowledge::KbEntry* kb = knowledge::kbEntryForXid(x.xid);
  cond.kb_id = kb ? std::string(kb->id) : std::string();
  return cond;
}

constexpr Threshold kGpuCount[] = {
    {.signal = "visible GPUs",
     .cmp = Cmp::kBelow,
     .value = [](const RuleConfig& c) { return static_cast<double>(c.expected_gpus); },
     .config_key = "expected_gpus",
     .severity = Severity::Critical},
};
constexpr Threshold kPersistence[] = {
    {.signal = "persistence mode", .cmp = Cmp::kEqual, .value = [](const RuleConfig&) { return 0.0; }},
};
constexpr Threshold kRecoveryAction[] = {
    {.signal = "drain peer-to-peer traffic (3)",
     .cmp = Cmp::kEqual,
     .value = [](const RuleConfig&) { return static_cast<double>(NVML_GPU_RECOVERY_ACTION_DRAIN_P2P); },
     .marks = "Drain P2P"},
    {.signal = "recovery action (critical but for 3: 1 reset, 2 reboot, 4 drain and reset)",
     .cmp = Cmp::kAbove,
     .value = [](const RuleConfig&) { return static_cast<double>(NVML_GPU_RECOVERY_ACTION_NONE); },
     .severity = Severity::Critical},
};
constexpr Threshold kXid[] = {
    {.signal = "application-fault Xids on one GPU within `xid_active_ms`, peers clean",
     .value = [](const RuleConfig& c) { return static_cast<double>(c.app_xid_repeat); },
     .config_key = "app_xid_repeat"},
};

const Rule kRules[] = {
    {.info = {.name = "gpu_lost",
              .config_key = "lost_hold_ms",
              .hold = &RuleConfig::lost_hold_ms,
              .kb_id = "xid79-fell-off-bus",
              .sticky = true,
              .severity = Severity::Fatal,
              .fires_when = "state Lost (or Xid 79 / fallen-off-bus event)"},
     .scope = RuleScope::kGpuState,
     .evaluate = gpuLost},
    {.info = {.name = "gpu_stalled",
              .config_key = "stalled_hold_ms",
              .hold = &RuleConfig::stalled_hold_ms,
              .severity = Severity::Critical,
              .fires_when = "state Stalled (NVML calls past their deadline)"},
     .scope = RuleScope::kGpuState,
     .evaluate = gpuStalled},
    {.info = {.name = "gpu_count",
              .config_key = "gpu_count_hold_ms",
              .hold = &RuleConfig::gpu_count_hold_ms,
              .kb_id = "no-devices",
              .severity = Severity::Critical,
              .fires_when = "fewer GPUs than `expected_gpus` (0 = off)",
              .thresholds = kGpuCount},
     .scope = RuleScope::kNode,
     .evaluate = gpuCount},
    {.info = {.name = "persistence_off",
              .config_key = "persistence_hold_ms",
              .hold = &RuleConfig::persistence_hold_ms,
              .fires_when = "persistence mode {0}",
              .thresholds = kPersistence},
     .evaluate = persistenceOff},
    {.info = {.name = "driver_mismatch",
              .kb_id = "driver-lib-mismatch",
              .severity = Severity::Critical,
              .fires_when = "`setNvmlInitError(18)`"},
     .scope = RuleScope::kNode,
     .evaluate = driverMismatch},
    {.info = {.name = "recovery_action",
              .config_key = "memory_hold_ms",
              .hold = &RuleConfig::memory_hold_ms,
              .severity = Severity::Critical,
              .fires_when = "the driver's recovery action {0} (warning) or {1} (critical)",
              .thresholds = kRecoveryAction},
     .evaluate = recoveryAction},
    {.info = {.name = "xid",
              .sticky = true,
              .fires_when = "Xid event: severity/action from the Xid catalog; application faults are `info` (not "
                            "sticky), `warning` when {0} repeat on one GPU while peers are clean; the knowledge-base "
                            "entry is the one about the code",
              .thresholds = kXid},
     .scope = RuleScope::kXid,
     .evaluate = xid},
};

}  // namespace

std::span<const Rule> stateRules() { return kRules; }

}  // namespace gw::health
