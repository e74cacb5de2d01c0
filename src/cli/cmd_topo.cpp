// gpuwarden topo -m: the GPU interconnect matrix with nvidia-smi's legend, CPU and NUMA affinity,
// and a warning wherever peer traffic has to cross the CPU (R3). The matrix itself is
// nvml::readTopology, which the agent's /api/v1/topology serves too; its text is runTopoMatrix,
// which `gpuwarden smi topo -m` prints as well.
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/views.h"
#include "nvml/inventory.h"
#include "nvml/topology.h"

namespace gw::cli {

int runTopoMatrix(Context& ctx, bool json, bool as_nvidia_smi, std::ostream& out) {
  auto* s = ctx.nvml();
  if (!s) return ctx.failureExit();
  auto inv = nvml::readInventory(*s, kCallDeadline);
  if (!inv) {
    printError(inv.error());
    return kExitNoDriver;
  }
  const nvml::Topology topo = nvml::readTopology(*inv);
  const auto& rows = topo.gpus;
  if (json) {
    out << nvml::topologyJson(topo).dump(2) << "\n";
  } else {
    // nvidia-smi separates the columns with tabs (scripts split on them) and writes its own cell
    // as " X ". It underlines its header with terminal escapes even into a pipe, and since R535
    // adds a GPU NUMA ID column after an empty one (recorded from a real 580.159.04): its text is
    // copied as it is, so that scripts which strip the escapes keep working.
    std::string h = as_nvidia_smi ? "\t\x1b[4m" : "\t";
    for (std::size_t j = 0; j < rows.size(); ++j) h += "GPU" + std::to_string(j) + "\t";
    h += as_nvidia_smi ? "CPU Affinity\tNUMA Affinity\tGPU NUMA ID\x1b[0m" : "CPU Affinity\tNUMA Affinity";
    out << h << "\n";
    for (std::size_t i = 0; i < rows.size(); ++i) {
      std::string line = "GPU" + std::to_string(i);
      for (const auto& cell : rows[i].links) line += "\t" + (cell == "X" ? std::string(" X ") : cell);
      line += "\t" + (rows[i].cpus.empty() ? std::string("N/A") : nvml::formatIdRanges(rows[i].cpus));
      line += "\t" + (rows[i].numa_nodes.empty() ? std::string("N/A") : nvml::formatIdRanges(rows[i].numa_nodes));
      // The GPU's own NUMA node exists only where its memory is one (Grace Hopper's C2C);
      // gpuwarden does not read nvmlDeviceGetNumaNodeId, so it prints what a PCIe GPU answers.
      if (as_nvidia_smi) line += "\t\tN/A";
      out << line << "\n";
    }
    out << "\n" << nvml::kTopologyLegend;
    if (!as_nvidia_smi && !topo.warnings.empty()) {
      out << "\nWarnings:\n";
      for (const auto& w : topo.warnings) out << "  " << w << "\n";
    }
  }
  return inv->anyLost() ? kExitPartial : kExitOk;
}

void addTopo(CLI::App& app, Run& run) {
  auto* cmd = app.add_subcommand("topo", "GPU interconnect topology, like nvidia-smi topo -m");
  auto matrix = std::make_shared<bool>(false);
  cmd->add_flag("-m,--matrix", *matrix, "Print the connection matrix (the default)");
  cmd->footer(kInventoryExitCodes);
  // The flag's storage must outlive parsing: the callback owns it.
  cmd->callback([&run, matrix]() { run.exit_code = runTopoMatrix(run.ctx, run.ctx.options.json, false, std::cout); });
}

}  // namespace gw::cli
