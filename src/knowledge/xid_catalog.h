// The Xid catalog: the one table that says what each NVIDIA Xid code means, whose fault it is and
// what an operator should do about it (R26). Facts follow NVIDIA's published Xid catalog
// ("Analyzing Xid Errors with the Xid Catalog": immediate and investigatory resolution buckets)
// and the GPU debug guidelines; docs/xid.md is rendered from this table (renderXidCatalogMarkdown)
// and a test keeps the two equal.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

namespace gw::knowledge {

// Where the fault most likely lies.
enum class XidCategory {
  kApplication,  // the user's program (bad address, killed, illegal instruction)
  kDriver,       // driver / CUDA software or a channel it had to tear down
  kMemory,       // GPU memory: ECC, row remapping, page retirement
  kNvLink,       // NVLink / C2C links and NVSwitch fabric
  kBus,          // PCIe and power delivery to the board
  kThermal,      // temperature-driven
  kFirmware,     // GSP, PMU, SEC2, InfoROM and other on-board firmware
  kHardware,     // the GPU itself
  kUnknown,      // a code gpuwarden does not know
};

// What to do, ordered by escalation (a larger value is a heavier action).
enum class XidAction {
  kNone,             // nothing to do now (informational or already handled)
  kRestartApp,       // restart the affected application; the GPU is fine
  kResetGpu,         // stop the GPU's processes and reset it (nvidia-smi -r)
  kRebootNode,       // drain the node and reboot it
  kDrainAndReplace,  // drain the node and repair / replace the part (RMA)
};

enum class XidSeverity {
  kInfo,      // no impact
  kWarning,   // one application affected, or a condition to watch; the GPU stays usable
  kCritical,  // the GPU needs a reset (or is degraded) before it is trusted again
  kFatal,     // the GPU is lost until the node is rebooted or the part replaced
};

struct XidInfo {
  int code = 0;
  std::string_view mnemonic;  // NVIDIA's mnemonic, e.g. ROBUST_CHANNEL_GPU_ECC_DBE
  std::string_view meaning;   // one sentence an operator understands
  XidCategory category = XidCategory::kUnknown;
  XidAction action = XidAction::kNone;      // immediate action (vendor: "Immediate Action")
  XidAction escalation = XidAction::kNone;  // if it recurs or persists ("Investigatory Action")
  XidSeverity severity = XidSeverity::kWarning;
  // The application's fault: on its own this Xid must never mark a GPU bad.
  bool applicationFault = false;
  // Listed as "Unused" on Ampere and newer in the current vendor catalog; seen on older GPUs.
  bool legacy = false;
  std::string_view vendorImmediate;      // vendor resolution bucket, e.g. RESTART_APP
  std::string_view vendorInvestigatory;  // vendor investigatory bucket, e.g. CONTACT_SUPPORT
  std::string_view note;                 // what to look at; where the seed handbook differs
  bool known = true;                     // false for the generic entry of an unknown code
};

// O(1) lookup. An unknown code returns a generic entry (known == false) that says so and
// carries the code asked for.
XidInfo lookupXid(int code);
bool isKnownXid(int code);

// The whole table, sorted by code.
std::span<const XidInfo> xidCatalog();

std::string_view toString(XidCategory category);
std::string_view toString(XidAction action);
std::string_view toString(XidSeverity severity);
// Longer text for an operator ("drain the node and reboot it").
std::string_view describe(XidAction action);

// Recovery action carried by Xid 154 ("GPU recovery action changed from 0x0 (None) to 0x2 (Node
// Reboot Required)"), mapped to our action scale. Values follow nvmlDeviceGpuRecoveryAction_t:
// 0 none, 1 GPU reset, 2 node reboot, 3 drain P2P, 4 drain and reset.
XidAction actionForRecoveryCode(int recoveryCode);

// The meaning's opening clause, for a one-line mention ("GPU has fallen off the bus"); "" for an
// unknown code, so a caller can fall back to the bare number.
std::string_view headline(const XidInfo& info);

// One Xid in one line, as every other place that names an Xid's meaning shows it (the knowledge
// base's entries and docs, `explain`): "Xid 63 (INFOROM_DRAM_RETIREMENT_EVENT): <meaning> Action:
// <describe(action)>; if it recurs: <describe(escalation)>." The recurrence clause is left out when
// it adds nothing. An unknown code says so.
std::string xidSummaryLine(int code);

// docs/xid.md, rendered from the table.
std::string renderXidCatalogMarkdown();

}  // namespace gw::knowledge
