// nvidia-smi's command line, parsed by its own grammar (not CLI11's): `gpuwarden smi` receives the
// words after `smi` untouched, so that `alias nvidia-smi='gpuwarden smi'` keeps scripts working.
// Pure (no NVML, no I/O) so that the unit tests hold every flag and error to nvidia-smi's.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cli/smi/smi.h"

namespace gw::cli::smi {

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
    Topo,  // topo -m
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
  std::string select;    // -s: the metric groups, empty for the subcommand's default
  unsigned count = 0;    // -c: samples, 0 until interrupted
  unsigned delay_s = 1;  // -d: seconds between samples
};

struct SmiParse {
  SmiArgs args;
  int exit = kSmiOk;  // an SmiExit; not kSmiOk: `error` says why
  std::string error;  // what to print on stderr, nvidia-smi's sentence included
  bool ok() const { return exit == kSmiOk; }
};

SmiParse parseSmiArgs(const std::vector<std::string>& argv);

// nvidia-smi's own sentence for a command line it does not accept.
inline constexpr const char* kInvalidCombination =
    "Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.";

// The sections -d accepts with -q (nvidia-smi's names).
const std::vector<std::string>& querySections();

}  // namespace gw::cli::smi
