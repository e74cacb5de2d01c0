// `gpuwarden smi ARGS...`: nvidia-smi's command line, verbatim, so that
// `alias nvidia-smi='gpuwarden smi'` keeps operators' scripts working (issue 15, R23).
//
// Split in two: the dispatcher (cmd_smi.cpp) parses nvidia-smi's arguments, runs the loop
// (-l/-lms), the output file (-f) and the non-query views (summary, -L, -q, -q -x, dmon, pmon,
// topo -m); the query views (--query-gpu, --query-compute-apps, --query-retired-pages,
// --query-remapped-rows) live in smi_query.cpp. The field catalog (src/fields) stays the one
// source of field names, meanings and formats.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "cli/context.h"

namespace gw::cli::smi {

// nvidia-smi's documented return values (its man page, "RETURN VALUE"): scripts test these, so
// `smi` uses them instead of gpuwarden's own 0/1/2/3.
enum SmiExit : int {
  kSmiOk = 0,
  kSmiInvalidArgument = 2,  // bad flag, bad value, unknown field
  kSmiNotSupported = 3,     // the operation is not available on the target device
  kSmiNoPermission = 4,     // needs root (or another privilege)
  kSmiNotFound = 6,         // the -i target does not exist
  kSmiInsufficientPower = 8,
  kSmiDriverNotLoaded = 9,
  kSmiInterruptIssue = 10,
  kSmiLibraryNotFound = 12,  // NVML could not be loaded
  kSmiFunctionNotFound = 13,
  kSmiCorruptedInforom = 14,
  kSmiGpuLost = 15,  // a GPU has fallen off the bus
  kSmiResetRequired = 16,
  kSmiOperatingSystem = 17,
  kSmiLibraryMismatch = 18,  // driver and library versions differ
  kSmiInUse = 19,
  kSmiMemory = 20,
  kSmiNoData = 21,
  kSmiVgpuEccNotSupported = 22,
  kSmiInsufficientResources = 23,
  kSmiOther = 255,
};

// nvidia-smi's line for a GPU whose handle it cannot get; `where` is the bus id, or the index
// where the bus id is not known.
inline std::string noHandleLine(const std::string& where, const std::string& reason) {
  return "Unable to determine the device handle for GPU" + where + ": " + reason + "\n";
}

// One --query-* request, already split out of the command line by the dispatcher.
struct QueryRequest {
  enum class Kind { Gpu, ComputeApps, RetiredPages, RemappedRows };
  Kind kind = Kind::Gpu;
  std::string fields;  // the comma-separated list after --query-gpu= (and the others)
  std::string format;  // the value of --format ("csv", "csv,noheader,nounits"); empty: csv
  std::string ids;     // the value of -i/--id; empty: every GPU
  bool header = true;  // false on every round of a -l loop but the first (nvidia-smi prints it once)
};

// Runs one round of a query and writes nvidia-smi's CSV to `out`, errors (nvidia-smi's own
// wording) to `err`. Returns an SmiExit. `ctx` opens NVML (or the simulator) on first use.
int runQuery(Context& ctx, const QueryRequest& request, std::ostream& out, std::ostream& err);

// The setting flags (-pm, -pl, ...; smi_settings.h) are gpuwarden-full's, which links the agent's
// control socket and the records database: its main() installs the runner. The front, to which
// front_route.h never hands such a line, has none and says so. `words` are the words after
// `smi`, which the agent parses again.
struct SettingRequest;
using SettingsRunner = int (*)(Context& ctx, const std::string& ids, const SettingRequest& request,
                               const std::vector<std::string>& words, std::ostream& out, std::ostream& err);
void setSettingsRunner(SettingsRunner runner);

// The text `--help-query-gpu` (and the other --help-query-*) print, in nvidia-smi's layout.
std::string queryHelp(QueryRequest::Kind kind);

}  // namespace gw::cli::smi
