// The scrolling and matrix views that `gpuwarden X` and `gpuwarden smi X` share (dmon, pmon,
// topo -m): each is rendered here once, in nvidia-smi's layout, so that the two commands cannot
// drift apart. The commands only parse their own flags and call these.
#pragma once

#include <ostream>
#include <string>

#include "cli/commands.h"

namespace gw::cli {

struct DmonOptions {
  std::string groups = "puc";    // nvidia-smi dmon -s: p u c v m e t
  double delay = 1;              // seconds between samples
  int count = 0;                 // 0: until interrupted
  std::string ids;               // -i
  std::string format = "table";  // table, csv or json (gpuwarden's own; smi uses table)
  // Annotations after a row ("<- idle while peers busy", "<- GPU lost") are for a person at a
  // terminal; a pipe gets nvidia-smi's bare columns and the lost/stalled notes on `err`.
  bool markers = false;
};
// Returns a gpuwarden Exit (ok, partial when a GPU did not answer, usage, no driver).
int runDmon(Context& ctx, const DmonOptions& o, std::ostream& out, std::ostream& err);
// The unknown group in `groups`, or 0 when all are known.
char unknownDmonGroup(const std::string& groups);

struct PmonOptions {
  std::string groups = "um";  // nvidia-smi pmon -s: u utilisation, m memory
  double delay = 1;
  int count = 0;
  std::string ids;
  bool json = false;
  bool markers = false;  // as for dmon: stalled/lost notes in the table only on a terminal
};
int runPmon(Context& ctx, const PmonOptions& o, std::ostream& out, std::ostream& err);

// topo -m: nvidia-smi's tab-separated matrix and legend. as_nvidia_smi: nvidia-smi's text
// exactly (its underlined header, the GPU NUMA ID column, no warnings); else gpuwarden's, which
// adds notes on pairs whose traffic crosses the CPU.
int runTopoMatrix(Context& ctx, bool json, bool as_nvidia_smi, std::ostream& out);

// Whether the process's standard output is a terminal.
bool stdoutIsTerminal();

}  // namespace gw::cli
