// gpuwarden topo -m: the GPU interconnect matrix with nvidia-smi's legend, CPU and NUMA affinity,
// and a warning wherever peer traffic has to cross the CPU (R3).
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "nvml/inventory.h"

namespace gw::cli {
namespace {

const char* pcieLevel(unsigned level) {
  switch (level) {
    case NVML_TOPOLOGY_INTERNAL:
      return "X";
    case NVML_TOPOLOGY_SINGLE:
      return "PIX";
    case NVML_TOPOLOGY_MULTIPLE:
      return "PXB";
    case NVML_TOPOLOGY_HOSTBRIDGE:
      return "PHB";
    case NVML_TOPOLOGY_NODE:
      return "NODE";
    case NVML_TOPOLOGY_SYSTEM:
      return "SYS";
    default:
      return "?";
  }
}

struct Links {
  std::map<std::string, unsigned> to_gpu;  // peer bus id -> active links
  unsigned to_switch = 0;
};

Links nvlinksOf(const nvml::Device& d) {
  Links l;
  for (unsigned link = 0; link < NVML_NVLINK_MAX_LINKS; ++link) {
    auto active = d.nvlinkActive(link);
    if (!active || !*active) continue;
    auto type = d.nvlinkRemoteType(link);
    if (type && *type == NVML_NVLINK_DEVICE_TYPE_SWITCH) {
      ++l.to_switch;
      continue;
    }
    if (auto pci = d.nvlinkRemotePci(link)) ++l.to_gpu[pci->bus_id];
  }
  return l;
}

constexpr const char* kLegend =
    "Legend:\n\n"
    "  X    = Self\n"
    "  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)\n"
    "  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node\n"
    "  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)\n"
    "  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)\n"
    "  PIX  = Connection traversing at most a single PCIe bridge\n"
    "  NV#  = Connection traversing a bonded set of # NVLinks\n";

}  // namespace

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
    const auto& gpus = inv->gpus;
    const std::size_t n = gpus.size();
    std::vector<Links> links(n);
    for (std::size_t i = 0; i < n; ++i)
      if (gpus[i].state == "ok") links[i] = nvlinksOf(gpus[i].device);
    std::vector<std::vector<std::string>> cell(n, std::vector<std::string>(n));
    std::vector<std::string> warnings;
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = 0; j < n; ++j) {
        if (i == j) {
          cell[i][j] = "X";
          continue;
        }
        if (gpus[i].state != "ok" || gpus[j].state != "ok") {
          cell[i][j] = "-";
          continue;
        }
        unsigned nv = 0;
        if (auto it = links[i].to_gpu.find(gpus[j].pci.bus_id); it != links[i].to_gpu.end()) nv = it->second;
        // Through NVSwitch every GPU reaches every other over all its switch links.
        if (nv == 0 && links[i].to_switch && links[j].to_switch) nv = std::min(links[i].to_switch, links[j].to_switch);
        if (nv) {
          cell[i][j] = "NV" + std::to_string(nv);
          continue;
        }
        auto level = gpus[i].device.topologyCommonAncestor(gpus[j].device);
        cell[i][j] = level ? pcieLevel(*level) : "?";
        if (i < j && level && *level >= NVML_TOPOLOGY_HOSTBRIDGE) {
          warnings.push_back(
              fmt::format("GPU{} <-> GPU{} ({}): peer-to-peer traffic crosses the CPU{}; expect lower all-reduce "
                          "bandwidth than PIX/PXB or NVLink",
                          i, j, cell[i][j], *level == NVML_TOPOLOGY_SYSTEM ? " and the link between NUMA nodes" : ""));
        }
      }
    }
    if (run.ctx.options.json) {
      nlohmann::json j;
      j["gpus"] = nlohmann::json::array();
      for (std::size_t i = 0; i < n; ++i) {
        nlohmann::json row;
        row["index"] = gpus[i].index;
        row["state"] = gpus[i].state;
        row["links"] = cell[i];
        row["cpu_affinity"] = nvml::formatIdRanges(gpus[i].cpus);
        row["numa_affinity"] = nvml::formatIdRanges(gpus[i].numa_nodes);
        j["gpus"].push_back(row);
      }
      j["warnings"] = warnings;
      std::cout << j.dump(2) << "\n";
    } else {
      std::string h = fmt::format("{:<8}", "");
      for (std::size_t j = 0; j < n; ++j) h += fmt::format("{:<8}", "GPU" + std::to_string(j));
      h += fmt::format("{:<20}{:<16}", "CPU Affinity", "NUMA Affinity");
      std::cout << h << "\n";
      for (std::size_t i = 0; i < n; ++i) {
        std::string line = fmt::format("{:<8}", "GPU" + std::to_string(i));
        for (std::size_t j = 0; j < n; ++j) line += fmt::format("{:<8}", cell[i][j]);
        line += fmt::format("{:<20}{:<16}", gpus[i].cpus.empty() ? "N/A" : nvml::formatIdRanges(gpus[i].cpus),
                            gpus[i].numa_nodes.empty() ? "N/A" : nvml::formatIdRanges(gpus[i].numa_nodes));
        std::cout << line << "\n";
      }
      std::cout << "\n" << kLegend;
      if (!warnings.empty()) {
        std::cout << "\nWarnings:\n";
        for (const auto& w : warnings) std::cout << "  " << w << "\n";
      }
    }
    run.exit_code = inv->anyLost() ? kExitPartial : kExitOk;
  });
}

}  // namespace gw::cli
