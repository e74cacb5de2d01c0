// The profile table. Sources: nvidia-smi -q output of each product and NVIDIA's data sheets.
// Peak memory bandwidth = max_mem_clock x 2 (DDR) x bus width / 8 for HBM; GDDR6/6X clocks
// are reported by NVML at a quarter of the data rate, hence 9001/10501 MHz on 384-bit parts.
#include "sim/profiles.h"

#include "nvml/nvml_abi.h"

namespace gw::sim {
namespace {

// MIG geometries (nvidia-smi mig -lgip). Memory is the usable size NVML reports per instance.
const std::vector<MigProfile> kA100_80Mig = {
    {"1g.10gb", 1, 14, 9728, 1, 0},   {"1g.20gb", 1, 14, 19968, 1, 1},
    {"2g.20gb", 2, 28, 19968, 2, 1},  {"3g.40gb", 3, 42, 40192, 3, 2},
    {"4g.40gb", 4, 56, 40192, 4, 2},  {"7g.80gb", 7, 98, 80896, 7, 5},
};
const std::vector<MigProfile> kH100_80Mig = {
    {"1g.10gb", 1, 16, 9984, 1, 1},   {"1g.20gb", 1, 26, 19968, 1, 1},
    {"2g.20gb", 2, 32, 19968, 2, 2},  {"3g.40gb", 3, 60, 40448, 3, 3},
    {"4g.40gb", 4, 64, 40448, 4, 4},  {"7g.80gb", 7, 132, 80896, 8, 7},
};
const std::vector<MigProfile> kH200Mig = {
    {"1g.18gb", 1, 16, 16896, 1, 1},  {"1g.35gb", 1, 26, 33536, 1, 1},
    {"2g.35gb", 2, 32, 33536, 2, 2},  {"3g.71gb", 3, 60, 69888, 3, 3},
    {"4g.71gb", 4, 64, 69888, 4, 4},  {"7g.141gb", 7, 132, 142336, 8, 7},
};

const std::vector<GpuProfile>& Table() {
  static const std::vector<GpuProfile> table = {
      {
          .id = "H100-SXM5-80GB", .name = "NVIDIA H100 80GB HBM3", .pci_device_id = 0x2330,
          .pci_subsystem_id = 0x16C110DE, .brand = NVML_BRAND_NVIDIA,
          .architecture = NVML_DEVICE_ARCH_HOPPER, .cc_major = 9, .cc_minor = 0,
          .memory_mib = 81559, .reserved_mib = 531, .bar1_mib = 131072, .sm_count = 132,
          .cuda_cores = 16896, .memory_bus_width = 5120, .hbm = true,
          .max_sm_clock = 1980, .max_graphics_clock = 1980, .max_video_clock = 1545,
          .max_mem_clock = 2619, .app_graphics_clock = 1980, .app_mem_clock = 2619,
          .idle_sm_clock = 345, .idle_mem_clock = 2619,
          .power_default = 700, .power_min = 200, .power_max = 700,
          .idle_power = 72, .full_power = 760,
          .temp_shutdown = 92, .temp_slowdown = 89, .temp_mem_max = 95, .temp_gpu_max = 87,
          .thermal_resistance = 0.055, .thermal_tau_s = 30,
          .pcie_max_gen = 5, .pcie_max_width = 16, .nvlink_links = 18, .nvlink_version = 4,
          .ecc_supported = true, .ecc_default = true, .row_remapping = true,
          .persistence_default = true, .mig_capable = true, .fans = 0,
          .vbios = "96.00.74.00.01", .inforom_image = "G520.0200.00.05", .inforom_oem = "2.1",
          .inforom_ecc = "7.16", .inforom_power = "", .part_number = "692-2G520-0200-000",
          .serial_prefix = "165212", .mig_profiles = kH100_80Mig,
      },
      {
          .id = "H200-SXM-141GB", .name = "NVIDIA H200", .pci_device_id = 0x2335,
          .pci_subsystem_id = 0x18BE10DE, .brand = NVML_BRAND_NVIDIA,
          .architecture = NVML_DEVICE_ARCH_HOPPER, .cc_major = 9, .cc_minor = 0,
          .memory_mib = 143771, .reserved_mib = 563, .bar1_mib = 262144, .sm_count = 132,
          .cuda_cores = 16896, .memory_bus_width = 6144, .hbm = true,
          .max_sm_clock = 1980, .max_graphics_clock = 1980, .max_video_clock = 1545,
          .max_mem_clock = 3201, .app_graphics_clock = 1980, .app_mem_clock = 3201,
          .idle_sm_clock = 345, .idle_mem_clock = 3201,
          .power_default = 700, .power_min = 200, .power_max = 700,
          .idle_power = 78, .full_power = 770,
          .temp_shutdown = 92, .temp_slowdown = 89, .temp_mem_max = 95, .temp_gpu_max = 87,
          .thermal_resistance = 0.055, .thermal_tau_s = 30,
          .pcie_max_gen = 5, .pcie_max_width = 16, .nvlink_links = 18, .nvlink_version = 4,
          .ecc_supported = true, .ecc_default = true, .row_remapping = true,
          .persistence_default = true, .mig_capable = true, .fans = 0,
          .vbios = "96.00.9F.00.04", .inforom_image = "G525.0200.00.05", .inforom_oem = "2.1",
          .inforom_ecc = "7.16", .inforom_power = "", .part_number = "692-2G525-0200-000",
          .serial_prefix = "165302", .mig_profiles = kH200Mig,
      },
      {
          .id = "A100-SXM4-80GB", .name = "NVIDIA A100-SXM4-80GB", .pci_device_id = 0x20B2,
          .pci_subsystem_id = 0x147F10DE, .brand = NVML_BRAND_NVIDIA,
          .architecture = NVML_DEVICE_ARCH_AMPERE, .cc_major = 8, .cc_minor = 0,
          .memory_mib = 81920, .reserved_mib = 581, .bar1_mib = 131072, .sm_count = 108,
          .cuda_cores = 6912, .memory_bus_width = 5120, .hbm = true,
          .max_sm_clock = 1410, .max_graphics_clock = 1410, .max_video_clock = 1290,
          .max_mem_clock = 1593, .app_graphics_clock = 1275, .app_mem_clock = 1593,
          .idle_sm_clock = 210, .idle_mem_clock = 1593,
          .power_default = 400, .power_min = 100, .power_max = 400,
          .idle_power = 62, .full_power = 430,
          .temp_shutdown = 92, .temp_slowdown = 89, .temp_mem_max = 95, .temp_gpu_max = 85,
          .thermal_resistance = 0.085, .thermal_tau_s = 30,
          .pcie_max_gen = 4, .pcie_max_width = 16, .nvlink_links = 12, .nvlink_version = 3,
          .ecc_supported = true, .ecc_default = true, .row_remapping = true,
          .persistence_default = true, .mig_capable = true, .fans = 0,
          .vbios = "92.00.36.00.02", .inforom_image = "G506.0210.00.04", .inforom_oem = "2.0",
          .inforom_ecc = "6.16", .inforom_power = "", .part_number = "692-2G506-0210-002",
          .serial_prefix = "132102", .mig_profiles = kA100_80Mig,
      },
      {
          .id = "L40S", .name = "NVIDIA L40S", .pci_device_id = 0x26B9,
          .pci_subsystem_id = 0x185110DE, .brand = NVML_BRAND_NVIDIA,
          .architecture = NVML_DEVICE_ARCH_ADA, .cc_major = 8, .cc_minor = 9,
          .memory_mib = 46068, .reserved_mib = 457, .bar1_mib = 65536, .sm_count = 142,
          .cuda_cores = 18176, .memory_bus_width = 384, .hbm = false,
          .max_sm_clock = 2520, .max_graphics_clock = 2520, .max_video_clock = 1965,
          .max_mem_clock = 9001, .app_graphics_clock = 2520, .app_mem_clock = 9001,
          .idle_sm_clock = 210, .idle_mem_clock = 405,
          .power_default = 350, .power_min = 100, .power_max = 350,
          .idle_power = 32, .full_power = 365,
          .temp_shutdown = 98, .temp_slowdown = 95, .temp_mem_max = 0, .temp_gpu_max = 89,
          .thermal_resistance = 0.125, .thermal_tau_s = 40,
          .pcie_max_gen = 4, .pcie_max_width = 16, .nvlink_links = 0, .nvlink_version = 0,
          .ecc_supported = true, .ecc_default = true, .row_remapping = true,
          .persistence_default = true, .mig_capable = false, .fans = 0,
          .vbios = "95.02.4B.00.01", .inforom_image = "G133.0242.00.03", .inforom_oem = "2.1",
          .inforom_ecc = "6.16", .inforom_power = "", .part_number = "900-2G133-0080-000",
          .serial_prefix = "132392", .mig_profiles = {},
      },
      {
          .id = "RTX-4090", .name = "NVIDIA GeForce RTX 4090", .pci_device_id = 0x2684,
          .pci_subsystem_id = 0x165F10DE, .brand = NVML_BRAND_GEFORCE,
          .architecture = NVML_DEVICE_ARCH_ADA, .cc_major = 8, .cc_minor = 9,
          .memory_mib = 24564, .reserved_mib = 331, .bar1_mib = 256, .sm_count = 128,
          .cuda_cores = 16384, .memory_bus_width = 384, .hbm = false,
          .max_sm_clock = 2520, .max_graphics_clock = 2520, .max_video_clock = 2415,
          .max_mem_clock = 10501, .app_graphics_clock = 2520, .app_mem_clock = 10501,
          .idle_sm_clock = 210, .idle_mem_clock = 405,
          .power_default = 450, .power_min = 150, .power_max = 600,
          .idle_power = 22, .full_power = 470,
          .temp_shutdown = 92, .temp_slowdown = 89, .temp_mem_max = 0, .temp_gpu_max = 90,
          .thermal_resistance = 0.095, .thermal_tau_s = 20,
          .pcie_max_gen = 4, .pcie_max_width = 16, .nvlink_links = 0, .nvlink_version = 0,
          .ecc_supported = true, .ecc_default = false, .row_remapping = false,
          .persistence_default = false, .mig_capable = false, .fans = 2,
          .vbios = "95.02.18.80.5F", .inforom_image = "G002.0000.00.03", .inforom_oem = "2.0",
          .inforom_ecc = "", .inforom_power = "", .part_number = "900-1G136-2530-000",
          .serial_prefix = "", .mig_profiles = {},
      },
  };
  return table;
}

}  // namespace

const GpuProfile* FindProfile(std::string_view id) {
  for (const auto& p : Table()) {
    if (p.id == id) return &p;
  }
  return nullptr;
}

std::string ProfileIdList() {
  std::string out;
  for (const auto& p : Table()) {
    if (!out.empty()) out += ", ";
    out += p.id;
  }
  return out;
}

const MigProfile* FindMigProfile(const GpuProfile& profile, std::string_view name) {
  for (const auto& m : profile.mig_profiles) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

}  // namespace gw::sim
