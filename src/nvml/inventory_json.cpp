#include "nvml/inventory_json.h"

#include <cmath>
#include <cstdio>

namespace gw::nvml {
namespace {

using nlohmann::json;

template <typename T>
json opt(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

}  // namespace

json migJson(const MigInfo& m, const GpuInfo& parent) {
  return {{"index", m.index},
          {"uuid", m.uuid},
          {"name", m.name},
          {"mig_profile", m.profile},
          {"gpu_instance_id", m.gpu_instance_id},
          {"compute_instance_id", m.compute_instance_id},
          {"sm_count", m.sm_count},
          {"memory_total_mib", m.memory_total_mib},
          {"parent_index", parent.index},
          {"parent_uuid", parent.uuid}};
}

json gpuJson(const GpuInfo& g) {
  char device_id[16];
  std::snprintf(device_id, sizeof device_id, "0x%04X", g.pci.device_id);
  json j;
  j["index"] = g.index;
  j["uuid"] = g.uuid;
  j["name"] = g.name;
  j["pci_bus_id"] = g.pci.bus_id;
  j["minor_number"] = opt(g.minor_number);
  j["device_node"] = g.minor_number ? json("/dev/nvidia" + std::to_string(*g.minor_number)) : json(nullptr);
  j["state"] = g.state;
  j["error"] = g.error;
  j["serial"] = g.serial;
  j["board_part_number"] = g.board_part;
  j["vbios_version"] = g.vbios;
  j["inforom_version"] = g.inforom;
  j["pci_device_id"] = g.pci.device_id ? json(device_id) : json(nullptr);
  j["architecture"] = architectureName(g.architecture);
  j["compute_capability"] =
      g.compute_capability
          ? json(std::to_string(g.compute_capability->major) + "." + std::to_string(g.compute_capability->minor))
          : json(nullptr);
  j["sm_count"] = opt(g.sm_count);
  j["cuda_cores"] = opt(g.cuda_cores);
  j["memory_total_mib"] = opt(g.memory_total_mib);
  j["memory_bus_width_bits"] = opt(g.memory_bus_width);
  j["max_memory_clock_mhz"] = opt(g.max_memory_clock);
  j["max_sm_clock_mhz"] = opt(g.max_sm_clock);
  j["peak_memory_bandwidth_gbs"] =
      g.peak_bandwidth_gbs ? json(std::round(*g.peak_bandwidth_gbs * 10) / 10) : json(nullptr);
  j["pcie_gen"] = opt(g.pcie_gen);
  j["pcie_width"] = opt(g.pcie_width);
  j["pcie_max_gen"] = opt(g.pcie_max_gen);
  j["pcie_max_width"] = opt(g.pcie_max_width);
  j["nvlink_links"] = g.nvlink_links;
  j["nvlink_active"] = g.nvlink_active;
  j["nvlink_version"] = g.nvlink_version;
  j["power_limit_w"] = opt(g.power_limit_w);
  j["power_default_limit_w"] = opt(g.power_default_w);
  j["power_min_limit_w"] = opt(g.power_min_w);
  j["power_max_limit_w"] = opt(g.power_max_w);
  j["ecc_enabled"] = opt(g.ecc_enabled);
  j["persistence_mode"] = opt(g.persistence);
  j["mig_enabled"] = opt(g.mig_enabled);
  j["numa_nodes"] = g.numa_nodes;
  j["cpu_affinity"] = formatIdRanges(g.cpus);
  json migs = json::array();
  for (const auto& m : g.mig_devices) migs.push_back(migJson(m, g));
  j["mig_devices"] = std::move(migs);
  return j;
}

}  // namespace gw::nvml
