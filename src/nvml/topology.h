// The GPU interconnect matrix (R3): what `gpuwarden topo -m` prints and the agent's
// /api/v1/topology serves, read and rendered here once for both.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "nvml/inventory.h"

namespace gw::nvml {

struct Topology {
  struct Row {
    unsigned index = 0;
    std::string uuid, state;         // state as in the inventory ("ok", "lost", ...)
    std::vector<std::string> links;  // one cell per GPU: X, NV#, PIX, PXB, PHB, NODE, SYS, "-" (not ok), "?"
    std::vector<unsigned> cpus, numa_nodes;
  };
  std::vector<Row> gpus;
  // Pairs whose peer traffic crosses the CPU (PHB, NODE, SYS), once per pair.
  std::vector<std::string> warnings;
};

// Calls NVML (NVLink remotes, common ancestors) for every GPU of `inv` that is "ok".
Topology readTopology(const Inventory& inv);

// {"gpus": [{"index", "uuid", "state", "links": [...], "cpu_affinity": "0-55", "numa_affinity": "0"}],
//  "warnings": [...], "legend": {"X": "Self", ...}}
nlohmann::json topologyJson(const Topology& t);

// nvidia-smi's legend, one line per cell kind ("  X    = Self").
extern const char* const kTopologyLegend;

}  // namespace gw::nvml
