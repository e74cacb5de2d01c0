// `gpuwarden cluster diag` (docs/slurm.md): `gpuwarden diag` on many nodes as one Slurm job step
// (srun, one task per node, --label), the reports gathered from srun's output and read back as
// diag reports, one row per node.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"

namespace gw::cluster {

// srun --label output ("3: text") → each task's text, by task number. Lines without a label
// (srun's own messages) are kept under -1. Bounded: at most max_bytes per task.
std::map<int, std::string> splitLabelledOutput(const std::string& out, std::size_t max_bytes = 8 << 20);

// The GPU count of a node from sinfo's %G ("gpu:h100:8(S:0-1)", "gpu:a100:4,gpu:t4:2", "(null)").
unsigned gpuCountFromGres(const std::string& gres);

struct NodeDiag {
  std::string node;
  std::string overall;  // pass, warn, fail, incomplete; "no report" when none could be read
  int exit_code = 2;
  unsigned gpus = 0;
  std::vector<std::string> failed;  // "GPU 5: retired_pages: ..." (fail first, then warn)
  std::string error;                // why there is no report
};

// The nodes of `sinfo -h -N -o "%N|%G|%t"`: those that can run a job now (idle, mix, alloc, with
// no flag after the state) with their GPU counts; when the nodes were named on the command line
// (`named`), a "no report" row for each that cannot, saying its state and what its flag means
// (`idle*`: not responding). A node listed once per partition is one node.
struct SinfoNodes {
  std::map<std::string, unsigned> usable;
  std::vector<NodeDiag> untestable;
};
SinfoNodes nodesFromSinfo(const std::string& out, bool named);

// One task's text → its row (`fallback_node` names it when the report does not).
NodeDiag readNodeReport(const std::string& text, const std::string& fallback_node);

// {"level", "nodes": [...], "summary": {"nodes", "pass", "warn", "fail", "incomplete", "no_report"},
//  "exit_code"}: 0 every node passed (or warned), 1 a node failed, 4 a node incomplete or without a
// report (nothing failed).
nlohmann::json fleetJson(const std::vector<NodeDiag>& rows, int level);
std::string fleetTable(const std::vector<NodeDiag>& rows);

}  // namespace gw::cluster
