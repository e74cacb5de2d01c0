// nvidia-smi's command line, parsed by its own grammar (not CLI11's): `gpuwarden smi` receives the
// words after `smi` untouched, so that `alias nvidia-smi='gpuwarden smi'` keeps scripts working.
// Pure (no NVML, no I/O) so that the unit tests hold every flag and error to nvidia-smi's.
#pragma once

#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "cli/smi/smi.h"

namespace gw::cli::smi {

// One settings change, parsed and checked for form (the board's range is NVML's to check).
struct SettingRequest {
  enum class Kind {
    Persistence,              // -pm 0|1: on = enabled
    PowerLimit,               // -pl WATTS: watts
    LockGpuClocks,            // -lgc MIN[,MAX]: a, b
    ResetGpuClocks,           // -rgc
    LockMemoryClocks,         // -lmc MIN[,MAX]: a, b
    ResetMemoryClocks,        // -rmc
    ApplicationsClocks,       // -ac MEM,GRAPHICS: a (memory), b (graphics)
    ResetApplicationsClocks,  // -rac
    ComputeMode,              // -c 0|1|2|3 or its name: a
    Ecc,                      // -e 0|1: on
    Reset,                    // -r
    MigMode,                  // -mig 0|1: on
    // nvidia-smi mig ...: the lists change nothing and run as any user.
    MigListGpuProfiles,          // -lgip
    MigListPlacements,           // -lgipp
    MigListGpuInstances,         // -lgi
    MigCreateGpuInstances,       // -cgi PROFILES [-C]: profiles, default_ci
    MigDestroyGpuInstances,      // -dgi [-gi IDS]
    MigListComputeProfiles,      // -lcip [-gi IDS]
    MigListComputeInstances,     // -lci [-gi IDS]
    MigCreateComputeInstances,   // -cci [PROFILES] [-gi IDS]: profiles (empty: the default)
    MigDestroyComputeInstances,  // -dci [-ci IDS] [-gi IDS]
  };
  Kind kind = Kind::Persistence;
  std::string flag;  // as typed ("--power-limit"), for messages
  bool on = false;
  double watts = 0;
  unsigned a = 0, b = 0;
  // mig: the comma lists as given (profile ids or names; instance ids), empty for "all".
  std::vector<std::string> profiles;
  std::vector<unsigned> gpu_instances, compute_instances;
  bool default_ci = false;  // -C with -cgi
};

// True for the MIG subcommand's lists, which change nothing (no agent, no root, no record).
bool isMigList(SettingRequest::Kind kind);
bool isMigCommand(SettingRequest::Kind kind);

struct SmiArgs {
  enum class Mode {
    Summary,    // no view flag: the table
    Help,       // -h
    Version,    // --version
    ListGpus,   // -L
    Query,      // -q (with -x: XML)
    Select,     // --query-gpu= and the other --query-*=
    HelpQuery,  // --help-query-gpu and the others
    Dmon,
    Pmon,
    Topo,     // topo -m
    Setting,  // -pm, -pl, -lgc, ... (setting below)
  };
  Mode mode = Mode::Summary;
  std::string ids;                                         // -i/--id, as given (comma list)
  std::string filename;                                    // -f/--filename: output goes there instead of stdout
  std::optional<unsigned> loop_ms;                         // -l/--loop or -lms/--loop-ms: repeat until interrupted
  bool xml = false;                                        // -x with -q
  std::vector<std::string> sections;                       // -d with -q, upper case as nvidia-smi spells them
  QueryRequest query;                                      // Select: kind, fields, format, ids
  QueryRequest::Kind help_kind = QueryRequest::Kind::Gpu;  // HelpQuery
  // dmon and pmon
  std::string select;      // -s: the metric groups, empty for the subcommand's default
  unsigned count = 0;      // -c: samples, 0 until interrupted
  unsigned delay_s = 1;    // -d: seconds between samples
  SettingRequest setting;  // Setting
};

struct SmiParse {
  SmiArgs args;
  int exit = kSmiOk;  // an SmiExit; not kSmiOk: `error` says why
  std::string error;  // nvidia-smi's sentence (to stdout) and gpuwarden's note (to stderr)
  bool ok() const { return exit == kSmiOk; }
};

SmiParse parseSmiArgs(const std::vector<std::string>& argv);

// The longest -l interval: its milliseconds still fit `loop_ms` (about 49 days).
inline constexpr unsigned kMaxLoopSeconds = std::numeric_limits<unsigned>::max() / 1000;

// nvidia-smi's own sentence for a command line it does not accept.
inline constexpr const char* kInvalidCombination =
    "Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.";

// True when `word` (an argument after `smi`) names a flag or subcommand that changes a GPU:
// front_route.h sends such lines to the full program, which alone links the settings.
bool changesSettings(const std::string& word);

// nvidia-smi's names of the compute modes (NVML_COMPUTEMODE_*): "DEFAULT", "EXCLUSIVE_THREAD",
// "PROHIBITED", "EXCLUSIVE_PROCESS".
const char* computeModeWord(unsigned mode);

// The sections -d accepts with -q (nvidia-smi's names).
const std::vector<std::string>& querySections();

}  // namespace gw::cli::smi
