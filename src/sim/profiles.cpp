// The profile table. Sources: nvidia-smi -q output of each product and NVIDIA's data sheets.
// Peak memory bandwidth = max_mem_clock x 2 (DDR) x bus width / 8 for HBM; GDDR6/6X clocks
// are reported by NVML at a quarter of the data rate, hence 9001/10501 MHz on 384-bit parts.
#include "sim/profiles.h"

#include "nvml/nvml_abi.h"

namespace gw::sim {
namespace {

// MIG geometries (nvidia-smi mig -lgip). Memory is the usable size NVML reports per instance.
// Columns: name, compute slices, SMs, MiB, CE, DEC, NVML profile index, profile id, instances,
// memory slices, JPEG, OFA.
constexpr unsigned k1 = NVML_GPU_INSTANCE_PROFILE_1_SLICE, k1r1 = NVML_GPU_INSTANCE_PROFILE_1_SLICE_REV1,
                   k1r2 = NVML_GPU_INSTANCE_PROFILE_1_SLICE_REV2, k2 = NVML_GPU_INSTANCE_PROFILE_2_SLICE,
                   k3 = NVML_GPU_INSTANCE_PROFILE_3_SLICE, k4 = NVML_GPU_INSTANCE_PROFILE_4_SLICE,
                   k7 = NVML_GPU_INSTANCE_PROFILE_7_SLICE;
const std::vector<MigProfile> kA100_80Mig = {
    {"1g.10gb", 1, 14, 9728, 1, 0, k1, 19, 7, 1, 0, 0},  {"1g.20gb", 1, 14, 19968, 1, 1, k1r2, 15, 4, 2, 0, 0},
    {"2g.20gb", 2, 28, 19968, 2, 1, k2, 14, 3, 2, 0, 0}, {"3g.40gb", 3, 42, 40192, 3, 2, k3, 9, 2, 4, 0, 0},
    {"4g.40gb", 4, 56, 40192, 4, 2, k4, 5, 1, 4, 0, 0},  {"7g.80gb", 7, 98, 80896, 7, 5, k7, 0, 1, 8, 1, 1},
};
const std::vector<MigProfile> kH100_80Mig = {
    {"1g.10gb", 1, 16, 9984, 1, 1, k1, 19, 7, 1, 1, 0},  {"1g.20gb", 1, 26, 19968, 1, 1, k1r2, 15, 4, 2, 1, 0},
    {"2g.20gb", 2, 32, 19968, 2, 2, k2, 14, 3, 2, 2, 0}, {"3g.40gb", 3, 60, 40448, 3, 3, k3, 9, 2, 4, 3, 0},
    {"4g.40gb", 4, 64, 40448, 4, 4, k4, 5, 1, 4, 4, 0},  {"7g.80gb", 7, 132, 80896, 8, 7, k7, 0, 1, 8, 7, 1},
};
// H200: as `nvidia-smi mig -lgip` listed them on a real H200 with driver 580.159.04
// (tests/e2e/fixtures/real-h200-580.159.04/nvidia-smi-mig-lgip.txt), the +me profile too.
const std::vector<MigProfile> kH200Mig = {
    {"1g.18gb", 1, 16, 16384, 1, 1, k1, 19, 7, 1, 1, 0},         {"1g.35gb", 1, 26, 33280, 1, 1, k1r2, 15, 4, 2, 1, 0},
    {"2g.35gb", 2, 32, 33280, 2, 2, k2, 14, 3, 2, 2, 0},         {"3g.71gb", 3, 60, 71424, 3, 3, k3, 9, 2, 4, 3, 0},
    {"4g.71gb", 4, 64, 71424, 4, 4, k4, 5, 1, 4, 4, 0},          {"7g.141gb", 7, 132, 143360, 8, 7, k7, 0, 1, 8, 7, 1},
    {"1g.18gb+me", 1, 16, 16384, 1, 1, k1r1, 20, 1, 1, 1, 1, 7},
};

// The first GPU instance id of each size; an instance's id counts its placement from there.
unsigned firstGpuInstanceId(const MigProfile& p) {
  switch (p.gpu_slices) {
    case 7:
      return 0;
    case 4:
    case 3:
      return 1;
    case 2:
      return 3;
    default:
      return 7;
  }
}
// 1-slice profiles count in memory slices (a 1g.20gb at 2 is id 9, beside a 1g.10gb at 1, id 8).
unsigned idStride(const MigProfile& p) { return p.gpu_slices == 1 ? 1 : p.mem_slices; }

const std::vector<GpuProfile>& profileTable() {
  static const std::vector<GpuProfile> table = {
      // H100 SXM5 80GB: what a real driver answers. Recorded from `nvidia-smi -a` of an
      // "NVIDIA H100 80GB HBM3" on driver 545.23.08 (Princeton's PLI nodes,
      // https://github.com/PrincetonUniversity/gpu_programming_intro/blob/master/01_what_is_a_gpu/pli.md):
      // device 0x2330 / subsystem 0x16C1, VBIOS 96.00.74.00.0D, part 692-2G520-0200-000, InfoROM
      // G520.0200.00.05 / OEM 2.1 / ECC 7.16 / power object N/A, FB 81559 MiB (85520809984 bytes)
      // with 328 MiB reserved, BAR1 131072 MiB, PCIe Gen5 x16, power limit 700.00 W (default 700,
      // min 200, max 700 W = 700000/200000/700000 mW), idle 345 MHz graphics/SM, 2619 MHz memory,
      // 765 MHz video, application and max clocks 1980/2619 MHz (video max 1545), fan speed N/A
      // (SXM: nvmlDeviceGetFanSpeed answers NOT_SUPPORTED). Known difference: the real board
      // shows retired pages N/A (Hopper remaps rows instead); the simulator still retires pages on
      // it, because fault-retired-pages (the retired_pages rule's scenario) is a DGX H100.
      // That driver prints only T.Limit offsets for the thresholds; shutdown 92 C,
      // slowdown 89 C, max operating 87 C and memory max 95 C are from `nvidia-smi -q` of the same
      // SXM5 board sold as H800 (driver 525.105.17,
      // https://github.com/liguodongiot/llm-action/blob/main/docs/llm-base/nvidia-smi.md).
      {
          .id = "H100-SXM5-80GB",
          .name = "NVIDIA H100 80GB HBM3",
          .pci_device_id = 0x2330,
          .pci_subsystem_id = 0x16C110DE,
          .brand = NVML_BRAND_NVIDIA,
          .architecture = NVML_DEVICE_ARCH_HOPPER,
          .cc_major = 9,
          .cc_minor = 0,
          .memory_mib = 81559,
          .reserved_mib = 328,
          .bar1_mib = 131072,
          .sm_count = 132,
          .cuda_cores = 16896,
          .memory_bus_width = 5120,
          .hbm = true,
          .max_sm_clock = 1980,
          .max_graphics_clock = 1980,
          .max_video_clock = 1545,
          .max_mem_clock = 2619,
          .app_graphics_clock = 1980,
          .app_mem_clock = 2619,
          .idle_sm_clock = 345,
          .idle_mem_clock = 2619,
          .idle_video_clock = 765,
          .power_default_mw = 700000,
          .power_min_mw = 200000,
          .power_max_mw = 700000,
          .idle_power = 72,
          .full_power = 760,
          .temp_shutdown = 92,
          .temp_slowdown = 89,
          .temp_mem_max = 95,
          .temp_gpu_max = 87,
          .thermal_resistance = 0.055,
          .thermal_tau_s = 30,
          .pcie_max_gen = 5,
          .pcie_max_width = 16,
          .nvlink_links = 18,
          .nvlink_version = 4,
          .ecc_supported = true,
          .ecc_default = true,
          .row_remapping = true,
          .persistence_default = true,
          .mig_capable = true,
          .fans = 0,
          .zero_rpm_start_c = 0,
          .vbios = "96.00.74.00.0D",
          .inforom_image = "G520.0200.00.05",
          .inforom_oem = "2.1",
          .inforom_ecc = "7.16",
          .inforom_power = "",
          .part_number = "692-2G520-0200-000",
          .serial_prefix = "165412",
          .mig_profiles = kH100_80Mig,
      },
      // H200 SXM 141GB: identity, reserve, idle state and thresholds as a real one answered on
      // driver 580.159.04 (tests/e2e/fixtures/real-h200-580.159.04): subsystem 0x18BF10DE, VBIOS
      // 96.00.A5.00.1A, InfoROM G520.0282.02.02, 616 MiB reserved, idle in P0 at 345 MHz SM /
      // 765 MHz video with the link at Gen5, T.Limit thresholds -8/-2/0 C around a maximum
      // operating 87 C (shutdown 95, slowdown 89).
      {
          .id = "H200-SXM-141GB",
          .name = "NVIDIA H200",
          .pci_device_id = 0x2335,
          .pci_subsystem_id = 0x18BF10DE,
          .brand = NVML_BRAND_NVIDIA,
          .architecture = NVML_DEVICE_ARCH_HOPPER,
          .cc_major = 9,
          .cc_minor = 0,
          .memory_mib = 143771,
          .reserved_mib = 616,
          .bar1_mib = 262144,
          .sm_count = 132,
          .cuda_cores = 16896,
          .memory_bus_width = 6144,
          .hbm = true,
          .max_sm_clock = 1980,
          .max_graphics_clock = 1980,
          .max_video_clock = 1545,
          .max_mem_clock = 3201,
          .app_graphics_clock = 1980,
          .app_mem_clock = 3201,
          .idle_sm_clock = 345,
          .idle_mem_clock = 3201,
          .idle_video_clock = 765,
          .power_default_mw = 700000,
          .power_min_mw = 200000,
          .power_max_mw = 700000,
          .idle_power = 78,
          .full_power = 770,
          .temp_shutdown = 95,
          .temp_slowdown = 89,
          .temp_mem_max = 95,
          .temp_gpu_max = 87,
          .thermal_resistance = 0.055,
          .thermal_tau_s = 30,
          .pcie_max_gen = 5,
          .pcie_max_width = 16,
          .nvlink_links = 18,
          .nvlink_version = 4,
          .ecc_supported = true,
          .ecc_default = true,
          .row_remapping = true,
          .persistence_default = true,
          .mig_capable = true,
          .fans = 0,
          .zero_rpm_start_c = 0,
          .vbios = "96.00.A5.00.1A",
          .inforom_image = "G520.0282.02.02",
          .inforom_oem = "2.1",
          .inforom_ecc = "7.16",
          .inforom_power = "",
          .part_number = "692-2G520-0282-000",
          .serial_prefix = "165372",
          .mig_profiles = kH200Mig,
          .idle_in_p0 = true,
          .retires_pages = false,
          .remap_banks = 3072,
      },
      {
          .id = "A100-SXM4-80GB",
          .name = "NVIDIA A100-SXM4-80GB",
          .pci_device_id = 0x20B2,
          .pci_subsystem_id = 0x147F10DE,
          .brand = NVML_BRAND_NVIDIA,
          .architecture = NVML_DEVICE_ARCH_AMPERE,
          .cc_major = 8,
          .cc_minor = 0,
          .memory_mib = 81920,
          .reserved_mib = 581,
          .bar1_mib = 131072,
          .sm_count = 108,
          .cuda_cores = 6912,
          .memory_bus_width = 5120,
          .hbm = true,
          .max_sm_clock = 1410,
          .max_graphics_clock = 1410,
          .max_video_clock = 1290,
          .max_mem_clock = 1593,
          .app_graphics_clock = 1275,
          .app_mem_clock = 1593,
          .idle_sm_clock = 210,
          .idle_mem_clock = 1593,
          .idle_video_clock = 210,
          .power_default_mw = 400000,
          .power_min_mw = 100000,
          .power_max_mw = 400000,
          .idle_power = 62,
          .full_power = 430,
          .temp_shutdown = 92,
          .temp_slowdown = 89,
          .temp_mem_max = 95,
          .temp_gpu_max = 85,
          .thermal_resistance = 0.085,
          .thermal_tau_s = 30,
          .pcie_max_gen = 4,
          .pcie_max_width = 16,
          .nvlink_links = 12,
          .nvlink_version = 3,
          .ecc_supported = true,
          .ecc_default = true,
          .row_remapping = true,
          .persistence_default = true,
          .mig_capable = true,
          .fans = 0,
          .zero_rpm_start_c = 0,
          .vbios = "92.00.36.00.02",
          .inforom_image = "G506.0210.00.04",
          .inforom_oem = "2.0",
          .inforom_ecc = "6.16",
          .inforom_power = "",
          .part_number = "692-2G506-0210-002",
          .serial_prefix = "132102",
          .mig_profiles = kA100_80Mig,
      },
      {
          .id = "L40S",
          .name = "NVIDIA L40S",
          .pci_device_id = 0x26B9,
          .pci_subsystem_id = 0x185110DE,
          .brand = NVML_BRAND_NVIDIA,
          .architecture = NVML_DEVICE_ARCH_ADA,
          .cc_major = 8,
          .cc_minor = 9,
          .memory_mib = 46068,
          .reserved_mib = 457,
          .bar1_mib = 65536,
          .sm_count = 142,
          .cuda_cores = 18176,
          .memory_bus_width = 384,
          .hbm = false,
          .max_sm_clock = 2520,
          .max_graphics_clock = 2520,
          .max_video_clock = 1965,
          .max_mem_clock = 9001,
          .app_graphics_clock = 2520,
          .app_mem_clock = 9001,
          .idle_sm_clock = 210,
          .idle_mem_clock = 405,
          .idle_video_clock = 210,
          .power_default_mw = 350000,
          .power_min_mw = 100000,
          .power_max_mw = 350000,
          .idle_power = 32,
          .full_power = 365,
          .temp_shutdown = 98,
          .temp_slowdown = 95,
          .temp_mem_max = 0,
          .temp_gpu_max = 89,
          .thermal_resistance = 0.125,
          .thermal_tau_s = 40,
          .pcie_max_gen = 4,
          .pcie_max_width = 16,
          .nvlink_links = 0,
          .nvlink_version = 0,
          .ecc_supported = true,
          .ecc_default = true,
          .row_remapping = true,
          .persistence_default = true,
          .mig_capable = false,
          .fans = 0,
          .zero_rpm_start_c = 0,
          .vbios = "95.02.4B.00.01",
          .inforom_image = "G133.0242.00.03",
          .inforom_oem = "2.1",
          .inforom_ecc = "6.16",
          .inforom_power = "",
          .part_number = "900-2G133-0080-000",
          .serial_prefix = "132392",
          .mig_profiles = {},
      },
      {
          .id = "RTX-4090",
          .name = "NVIDIA GeForce RTX 4090",
          .pci_device_id = 0x2684,
          .pci_subsystem_id = 0x165F10DE,
          .brand = NVML_BRAND_GEFORCE,
          .architecture = NVML_DEVICE_ARCH_ADA,
          .cc_major = 8,
          .cc_minor = 9,
          .memory_mib = 24564,
          .reserved_mib = 331,
          .bar1_mib = 256,
          .sm_count = 128,
          .cuda_cores = 16384,
          .memory_bus_width = 384,
          .hbm = false,
          .max_sm_clock = 2520,
          .max_graphics_clock = 2520,
          .max_video_clock = 2415,
          .max_mem_clock = 10501,
          .app_graphics_clock = 2520,
          .app_mem_clock = 10501,
          .idle_sm_clock = 210,
          .idle_mem_clock = 405,
          .idle_video_clock = 210,
          .power_default_mw = 450000,
          .power_min_mw = 150000,
          .power_max_mw = 600000,
          .idle_power = 22,
          .full_power = 470,
          .temp_shutdown = 92,
          .temp_slowdown = 89,
          .temp_mem_max = 0,
          .temp_gpu_max = 90,
          .thermal_resistance = 0.095,
          .thermal_tau_s = 20,
          .pcie_max_gen = 4,
          .pcie_max_width = 16,
          .nvlink_links = 0,
          .nvlink_version = 0,
          .ecc_supported = true,
          .ecc_default = false,
          .row_remapping = false,
          .persistence_default = false,
          .mig_capable = false,
          .fans = 2,
          // Like most GeForce and workstation boards: silent at the desktop, spinning by 55 °C.
          .zero_rpm_start_c = 55,
          .vbios = "95.02.18.80.5F",
          .inforom_image = "G002.0000.00.03",
          .inforom_oem = "2.0",
          .inforom_ecc = "",
          .inforom_power = "",
          .part_number = "900-1G136-2530-000",
          .serial_prefix = "",
          .mig_profiles = {},
      },
  };
  return table;
}

}  // namespace

const GpuProfile* findProfile(std::string_view id) {
  for (const auto& p : profileTable()) {
    if (p.id == id) return &p;
  }
  return nullptr;
}

std::string profileIdList() {
  std::string out;
  for (const auto& p : profileTable()) {
    if (!out.empty()) out += ", ";
    out += p.id;
  }
  return out;
}

unsigned migGpuInstanceId(const MigProfile& p, unsigned start) { return firstGpuInstanceId(p) + start / idStride(p); }

unsigned migPlacementStart(const MigProfile& p, unsigned gpu_instance_id) {
  const unsigned first = firstGpuInstanceId(p);
  return gpu_instance_id < first ? 0 : (gpu_instance_id - first) * idStride(p);
}

const MigProfile* findMigProfile(const GpuProfile& profile, std::string_view name) {
  for (const auto& m : profile.mig_profiles) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

}  // namespace gw::sim
