#include "nvml/topology.h"

#include <algorithm>
#include <map>
#include <utility>

namespace gw::nvml {
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

Links nvlinksOf(const Device& d) {
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

// The legend as (cell, meaning), in nvidia-smi's order.
const std::pair<const char*, const char*> kLegendEntries[] = {
    {"X", "Self"},
    {"SYS", "Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)"},
    {"NODE", "Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node"},
    {"PHB", "Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)"},
    {"PXB", "Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)"},
    {"PIX", "Connection traversing at most a single PCIe bridge"},
    {"NV#", "Connection traversing a bonded set of # NVLinks"},
};

}  // namespace

const char* const kTopologyLegend =
    "Legend:\n\n"
    "  X    = Self\n"
    "  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)\n"
    "  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node\n"
    "  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)\n"
    "  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)\n"
    "  PIX  = Connection traversing at most a single PCIe bridge\n"
    "  NV#  = Connection traversing a bonded set of # NVLinks\n";

Topology readTopology(const Inventory& inv) {
  const auto& gpus = inv.gpus;
  const std::size_t n = gpus.size();
  std::vector<Links> links(n);
  for (std::size_t i = 0; i < n; ++i)
    if (gpus[i].state == "ok") links[i] = nvlinksOf(gpus[i].device);
  Topology t;
  for (std::size_t i = 0; i < n; ++i) {
    Topology::Row row;
    row.index = gpus[i].index;
    row.uuid = gpus[i].uuid;
    row.state = gpus[i].state;
    row.cpus = gpus[i].cpus;
    row.numa_nodes = gpus[i].numa_nodes;
    for (std::size_t j = 0; j < n; ++j) {
      if (i == j) {
        row.links.emplace_back("X");
        continue;
      }
      if (gpus[i].state != "ok" || gpus[j].state != "ok") {
        row.links.emplace_back("-");
        continue;
      }
      unsigned nv = 0;
      if (auto it = links[i].to_gpu.find(gpus[j].pci.bus_id); it != links[i].to_gpu.end()) nv = it->second;
      // Through NVSwitch every GPU reaches every other over all its switch links.
      if (nv == 0 && links[i].to_switch && links[j].to_switch) nv = std::min(links[i].to_switch, links[j].to_switch);
      if (nv) {
        row.links.push_back("NV" + std::to_string(nv));
        continue;
      }
      auto level = gpus[i].device.topologyCommonAncestor(gpus[j].device);
      row.links.emplace_back(level ? pcieLevel(*level) : "?");
      if (i < j && level && *level >= NVML_TOPOLOGY_HOSTBRIDGE)
        t.warnings.push_back("GPU" + std::to_string(i) + " <-> GPU" + std::to_string(j) + " (" + row.links.back() +
                             "): peer-to-peer traffic crosses the CPU" +
                             (*level == NVML_TOPOLOGY_SYSTEM ? " and the link between NUMA nodes" : "") +
                             "; expect lower all-reduce bandwidth than PIX/PXB or NVLink");
    }
    t.gpus.push_back(std::move(row));
  }
  return t;
}

nlohmann::json topologyJson(const Topology& t) {
  nlohmann::json j;
  j["gpus"] = nlohmann::json::array();
  for (const auto& r : t.gpus)
    j["gpus"].push_back({{"index", r.index},
                         {"uuid", r.uuid},
                         {"state", r.state},
                         {"links", r.links},
                         {"cpu_affinity", formatIdRanges(r.cpus)},
                         {"numa_affinity", formatIdRanges(r.numa_nodes)}});
  j["warnings"] = t.warnings;
  j["legend"] = nlohmann::json::object();
  for (const auto& [cell, meaning] : kLegendEntries) j["legend"][cell] = meaning;
  return j;
}

}  // namespace gw::nvml
