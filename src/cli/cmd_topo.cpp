// gpuwarden topo -m: the GPU interconnect matrix with nvidia-smi's legend, CPU and NUMA affinity,
// and a warning wherever peer traffic has to cross the CPU (R3). The matrix itself is
// nvml::readTopology, which the agent's /api/v1/topology serves too.
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "nvml/inventory.h"
#include "nvml/topology.h"

namespace gw::cli {

void addTopo(CLI::App& app, Run& run) {
  auto* cmd = app.add_subcommand("topo", "GPU interconnect topology, like nvidia-smi topo -m");
  auto matrix = std::make_shared<bool>(false);
  cmd->add_flag("-m,--matrix", *matrix, "Print the connection matrix (the default)");
  // The flag's storage must outlive parsing: the callback owns it.
  cmd->callback([&run, matrix]() {
    auto* s = run.ctx.nvml();
    if (!s) {
      run.exit_code = run.ctx.failureExit();
      return;
    }
    auto inv = nvml::readInventory(*s, kCallDeadline);
    if (!inv) {
      printError(inv.error());
      run.exit_code = kExitNoDriver;
      return;
    }
    const nvml::Topology topo = nvml::readTopology(*inv);
    const auto& rows = topo.gpus;
    if (run.ctx.options.json) {
      std::cout << nvml::topologyJson(topo).dump(2) << "\n";
    } else {
      std::string h = fmt::format("{:<8}", "");
      for (std::size_t j = 0; j < rows.size(); ++j) h += fmt::format("{:<8}", "GPU" + std::to_string(j));
      h += fmt::format("{:<20}{:<16}", "CPU Affinity", "NUMA Affinity");
      std::cout << h << "\n";
      for (std::size_t i = 0; i < rows.size(); ++i) {
        std::string line = fmt::format("{:<8}", "GPU" + std::to_string(i));
        for (const auto& cell : rows[i].links) line += fmt::format("{:<8}", cell);
        line += fmt::format("{:<20}{:<16}", rows[i].cpus.empty() ? "N/A" : nvml::formatIdRanges(rows[i].cpus),
                            rows[i].numa_nodes.empty() ? "N/A" : nvml::formatIdRanges(rows[i].numa_nodes));
        std::cout << line << "\n";
      }
      std::cout << "\n" << nvml::kTopologyLegend;
      if (!topo.warnings.empty()) {
        std::cout << "\nWarnings:\n";
        for (const auto& w : topo.warnings) std::cout << "  " << w << "\n";
      }
    }
    run.exit_code = inv->anyLost() ? kExitPartial : kExitOk;
  });
}

}  // namespace gw::cli
