// gpuwarden discovery: the R2 inventory of every GPU and MIG device.
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "nvml/inventory.h"
#include "nvml/inventory_json.h"

namespace gw::cli {
namespace {

using nlohmann::json;

template <typename T>
std::string orNA(const std::optional<T>& v, const char* suffix = "") {
  return v ? fmt::format("{}{}", *v, suffix) : "N/A";
}

// Watts as NVML's milliwatts allow: "700", "312.5", "312.125" (never rounded to a whole watt).
std::string watts(double w) {
  std::string s = fmt::format("{:.3f}", w);
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s;
}

void printText(const nvml::Inventory& inv, bool verbose) {
  std::cout << fmt::format(
      "Driver {} | NVML {} | CUDA {} (the highest CUDA runtime this driver supports, not an installed toolkit)\n",
      inv.driver_version.empty() ? "N/A" : inv.driver_version, inv.nvml_version.empty() ? "N/A" : inv.nvml_version,
      inv.cuda_driver_version ? nvml::cudaVersionString(inv.cuda_driver_version) : "N/A");
  std::cout << inv.gpus.size() << " GPU" << (inv.gpus.size() == 1 ? "" : "s") << "\n";
  for (const auto& g : inv.gpus) {
    if (g.state != "ok") {
      std::cout << fmt::format("GPU {}: {} {}: {}\n", g.index, g.pci.bus_id.empty() ? "" : g.pci.bus_id,
                               g.state == "lost"      ? "LOST"
                               : g.state == "stalled" ? "STALLED"
                                                      : "ERROR",
                               g.error);
      continue;
    }
    std::cout << fmt::format("GPU {}: {} (UUID: {})\n", g.index, g.name, g.uuid);
    std::string cc =
        g.compute_capability ? fmt::format("{}.{}", g.compute_capability->major, g.compute_capability->minor) : "N/A";
    std::string mem = g.memory_total_mib ? fmt::format("{} MiB", *g.memory_total_mib) : "N/A";
    std::string bw = g.peak_bandwidth_gbs ? fmt::format("{:.0f} GB/s peak", *g.peak_bandwidth_gbs) : "peak N/A";
    std::cout << fmt::format("  {} | {} | compute {} | {} SMs | {} ({}-bit, {})\n", g.pci.bus_id,
                             nvml::architectureName(g.architecture), cc, orNA(g.sm_count), mem,
                             orNA(g.memory_bus_width), bw);
    std::string pcie = fmt::format("PCIe Gen{} x{} (max Gen{} x{})", orNA(g.pcie_gen), orNA(g.pcie_width),
                                   orNA(g.pcie_max_gen), orNA(g.pcie_max_width));
    std::string nvl =
        g.nvlink_links ? fmt::format("NVLink{} {}/{} up", g.nvlink_version ? fmt::format(" v{}", g.nvlink_version) : "",
                                     g.nvlink_active, g.nvlink_links)
                       : "no NVLink";
    std::string power = g.power_limit_w ? watts(*g.power_limit_w) + " W limit" : "power limit N/A";
    auto onoff = [](const std::optional<bool>& b) { return b ? (*b ? "on" : "off") : "N/A"; };
    std::cout << fmt::format("  {} | {} | {} | MIG {} | ECC {} | persistence {}\n", pcie, nvl, power,
                             onoff(g.mig_enabled), onoff(g.ecc_enabled), onoff(g.persistence));
    if (verbose) {
      std::cout << fmt::format("  serial {} | VBIOS {} | InfoROM {} | part {} | device {}\n", g.serial, g.vbios,
                               g.inforom, g.board_part,
                               g.minor_number ? fmt::format("/dev/nvidia{}", *g.minor_number) : "N/A");
      std::cout << fmt::format("  CUDA cores {} | max SM clock {} MHz | max memory clock {} MHz\n", orNA(g.cuda_cores),
                               orNA(g.max_sm_clock), orNA(g.max_memory_clock));
      if (g.power_min_w && g.power_max_w)
        std::cout << fmt::format("  power limit range {}-{} W, default {}\n", watts(*g.power_min_w),
                                 watts(*g.power_max_w), g.power_default_w ? watts(*g.power_default_w) + " W" : "N/A");
      std::cout << fmt::format("  NUMA node {} | CPU affinity {}\n",
                               g.numa_nodes.empty() ? "N/A" : nvml::formatIdRanges(g.numa_nodes),
                               g.cpus.empty() ? "N/A" : nvml::formatIdRanges(g.cpus));
    }
    for (const auto& m : g.mig_devices) {
      std::cout << fmt::format("  MIG {} GPU {}/{}: {} (UUID: {}) {} SMs, {} MiB\n", m.profile, g.index, m.index,
                               m.name, m.uuid, m.sm_count, m.memory_total_mib);
    }
  }
}

}  // namespace

void addDiscovery(CLI::App& app, Run& run) {
  auto* cmd = app.add_subcommand("discovery", "List every GPU and MIG device with its hardware inventory");
  auto verbose = std::make_shared<bool>(false);
  cmd->add_flag("-v,--verbose", *verbose, "Also print serial, VBIOS, clocks, power range, NUMA and CPU affinity");
  cmd->footer(
      "The CUDA version shown is the newest CUDA runtime the driver can serve; toolkits installed on\n"
      "the host are listed by `gpuwarden doctor` and `gpuwarden cuda list`.\n" +
      std::string(kInventoryExitCodes));
  cmd->callback([&run, verbose]() {
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
    if (run.ctx.options.json) {
      json j;
      j["driver_version"] = inv->driver_version;
      j["nvml_version"] = inv->nvml_version;
      j["cuda_driver_version"] =
          inv->cuda_driver_version ? json(nvml::cudaVersionString(inv->cuda_driver_version)) : json(nullptr);
      j["gpu_count"] = inv->gpus.size();
      j["gpus"] = json::array();
      for (const auto& g : inv->gpus) j["gpus"].push_back(nvml::gpuJson(g));
      std::cout << j.dump(2) << "\n";
    } else {
      printText(*inv, *verbose);
    }
    run.exit_code = inv->anyLost() ? kExitPartial : kExitOk;
  });
}

}  // namespace gw::cli
