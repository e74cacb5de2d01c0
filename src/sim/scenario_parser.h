// Scenario file → validated Scenario. Every error names the file, the line and the field:
//   scenarios/bad.yaml:14: gpus[2].workload: unknown preset 'trainnig' (expected ...)
#pragma once

#include <string>

#include "sim/scenario.h"

namespace gw::sim {

struct LoadResult {
  bool ok = false;
  Scenario scenario;
  std::string error;
  // The text of every file read (the scenario and its bases): two loads with the same
  // sources describe the same machine.
  std::string sources;
};

LoadResult loadScenarioFile(const std::string& path);

// Parses "0-55,112-167" into inclusive ranges; false when malformed.
bool parseCpuList(const std::string& text, std::vector<std::pair<unsigned, unsigned>>* out);

}  // namespace gw::sim
