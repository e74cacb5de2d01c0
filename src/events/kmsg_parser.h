// Kernel log lines → typed NVIDIA events (R26).
//
// Accepts a line as read from /dev/kmsg ("6,1234,5678901,-;NVRM: Xid ..."), as printed by dmesg
// ("[ 1234.567890] NVRM: ..."), dmesg -T ("[Sun Mar 29 19:20:37 2026] NVRM: ..."), dmesg -r
// ("<4>[ 12.3] ..."), syslog / journalctl ("Nov 29 10:00:01 host kernel: ...", ISO-8601
// timestamps too), or bare ("NVRM: Xid ...").
//
// Understood bodies:
//   NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python3, GPU has fallen off the bus.
//   NVRM: Xid (0000:3b:00): 13, ...                      (older drivers, no "PCI:")
//   NVRM: GPU at PCI:0000:3b:00: GPU-1b2c...             (PCI address -> UUID)
//   NVRM: GPU 0000:3b:00.0: GPU has fallen off the bus.  (no Xid number: an inferred Xid 79)
//   NVRM: Xid (PCI:0000:1b:00): 149, NETIR_LINK_EVT Fatal XC0 i0 Link 04 (0x... 0x... ...)
//   NVRM: Xid (PCI:0000:01:00): 154, GPU recovery action changed from 0x0 (None) to 0x2 (...)
//   nvidia-nvswitch0: SXid (PCI:0000:05:00.0): 12028, Non-fatal, Link 32 ...
//
// No regex: a hand parser over string_view. Lines that are not NVIDIA-related are rejected after
// a cheap substring prefilter. A line that claims to be an Xid/SXid but cannot be read is a parse
// error, never a crash.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"

namespace gw::events {

enum class KernelEventKind {
  kXid,      // NVRM Xid (code = Xid number); also the inferred Xid 79 of a "fallen off" line
  kSXid,     // NVSwitch SXid (code = SXid number)
  kGpuUuid,  // "NVRM: GPU at PCI:...: GPU-uuid": tells which UUID sits at which PCI address
};

// Kernel log level (the "<N>" / kmsg priority), syslog numbering.
enum class KernelLevel {
  kEmergency = 0,
  kAlert = 1,
  kCritical = 2,
  kError = 3,
  kWarning = 4,
  kNotice = 5,
  kInfo = 6,
  kDebug = 7,
};

// A wall-clock time as printed in the line. Fields the line does not carry stay 0 (year is 0 for
// "Nov 29 10:00:01"). utcOffsetMinutes is set only when the line has a zone (ISO-8601).
struct WallClock {
  int year = 0;
  int month = 0;  // 1..12
  int day = 0;
  int hour = 0;
  int minute = 0;
  int second = 0;
  int microsecond = 0;
  std::optional<int> utcOffsetMinutes;
};

// Recovery action named by Xid 154, nvmlDeviceGpuRecoveryAction_t numbering.
struct RecoveryActionChange {
  int from = 0;
  int to = 0;
  std::string fromLabel;  // "None"
  std::string toLabel;    // "Node Reboot Required"
};

struct KernelEvent {
  KernelEventKind kind = KernelEventKind::kXid;
  // Monotonic time since boot, µs: the kmsg record's timestamp or dmesg's "[ s.us]".
  std::optional<uint64_t> monotonicUs;
  std::optional<uint64_t> kmsgSequence;
  std::optional<WallClock> wallClock;  // syslog / journalctl / dmesg -T
  std::optional<KernelLevel> level;    // from the kmsg priority or "<N>" if present
  std::string pciBusId;                // NVML form: "00000000:3B:00.0"
  int code = 0;                        // Xid or SXid number
  bool inferred = false;               // a "fallen off the bus" line with no Xid number
  std::optional<int> pid;              // absent for "pid='<unknown>'"
  std::string processName;             // empty for "<unknown>"
  std::string message;                 // text after the code (and pid/name)
  std::string device;                  // "nvidia-nvswitch0" for SXid lines
  std::string uuid;                    // kGpuUuid: "GPU-1b2c..."
  // NVLink / NVSwitch details, when the line carries them (Xid 74, 136, 144-150, 155; SXid).
  std::optional<int> link;
  std::optional<bool> fatal;
  std::string nvlinkUnit;  // "SAW_MVB", "NETIR_LINK_EVT", ...
  std::optional<uint32_t> intrInfo;
  std::optional<uint32_t> errorStatus;
  std::optional<RecoveryActionChange> recovery;  // Xid 154
  std::string raw;                               // the line as given (without trailing newline)
};

// Ok(event), Ok(nullopt) for a line that is not an NVIDIA event, or an error for a malformed
// NVIDIA line (the caller counts those).
Result<std::optional<KernelEvent>> parseKernelLine(std::string_view line);

// The cheap prefilter on its own: could this line be an NVIDIA event at all?
bool mightBeNvidiaEvent(std::string_view line);

// "0000:3b:00", "PCI:0000:3b:00.0", "3b:00.0" → "00000000:3B:00.0"; nullopt if not an address.
std::optional<std::string> normalizePciBusId(std::string_view text);

std::string_view toString(KernelEventKind kind);
std::string_view toString(KernelLevel level);

}  // namespace gw::events
