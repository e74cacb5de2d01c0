// Built-in GPU models: the fixed facts of each product, as NVML reports them on real hardware.
// A scenario names a profile; everything per-card (bus id, workload, faults) lives in the
// scenario, everything per-model lives here.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gw::sim {

// A GPU instance profile (nvmlGpuInstanceProfileInfo_t). An A100/H100/H200 has 7 compute slices
// and 8 memory slices; an instance's possible placements are the multiples of its memory size,
// one per instance the profile allows ({0..6}:1, {0,2,4}:2, {0,4}:4, {0}:4, {0}:8), as NVML lists
// them (nvidia-smi mig -lgipp).
struct MigProfile {
  std::string_view name;  // "1g.10gb", as nvidia-smi mig -lgip prints it
  unsigned gpu_slices;    // compute slices: sliceCount
  unsigned sm_count;      // multiprocessorCount of the instance
  unsigned memory_mib;    // memorySizeMB of the instance
  unsigned copy_engines;
  unsigned decoders;
  unsigned nvml_index = 0;  // NVML_GPU_INSTANCE_PROFILE_*: the `profile` of ...ProfileInfo
  unsigned id = 0;          // the profile id nvidia-smi prints and -cgi takes
  unsigned instances = 0;   // instanceCount: at most this many at once
  unsigned mem_slices = 0;  // memory slices: placement size
  unsigned jpegs = 0, ofas = 0;
  // Where it may start, when that differs from `instances`: the +me profile fits at any of the
  // seven 1-slice places but takes all media engines, so one at a time (nvidia-smi mig -lgipp).
  unsigned places = 0;
};

constexpr unsigned kMigComputeSlices = 7;
constexpr unsigned kMigMemorySlices = 8;

// NVIDIA's GPU instance id of an instance of `p` placed at memory slice `start` (the driver's
// numbering: 7g 0, 4g 1, 3g 1-2, 2g 3-5, 1g 7-14), and the start back from an id.
unsigned migGpuInstanceId(const MigProfile& p, unsigned start);
unsigned migPlacementStart(const MigProfile& p, unsigned gpu_instance_id);

struct GpuProfile {
  std::string_view id;     // scenario name: "H100-SXM5-80GB"
  std::string_view name;   // marketing name exactly as nvidia-smi prints it
  unsigned pci_device_id;  // device id, without the vendor half
  unsigned pci_subsystem_id;
  unsigned brand;         // nvmlBrandType_t
  unsigned architecture;  // NVML_DEVICE_ARCH_*
  int cc_major, cc_minor;
  unsigned memory_mib;    // framebuffer total as NVML reports it
  unsigned reserved_mib;  // driver/firmware reservation (nvmlMemory_v2_t.reserved)
  unsigned bar1_mib;
  unsigned sm_count;
  unsigned cuda_cores;
  unsigned memory_bus_width;  // bits
  bool hbm;                   // HBM parts report a memory temperature
  // Clocks in MHz.
  unsigned max_sm_clock, max_graphics_clock, max_video_clock, max_mem_clock;
  unsigned app_graphics_clock, app_mem_clock;
  unsigned idle_sm_clock, idle_mem_clock, idle_video_clock;
  // Power limits in milliwatts, as NVML reports them (a limit need not be a whole watt).
  unsigned power_default_mw, power_min_mw, power_max_mw;
  double idle_power;  // at 0 % utilisation (P8, or P0 where idle_in_p0)
  double full_power;  // demand at 100 % of a compute-bound load (may exceed the limit)
  // Thermal: thresholds in degrees C, and the model of the cooler.
  unsigned temp_shutdown, temp_slowdown, temp_mem_max, temp_gpu_max;
  double thermal_resistance;  // degrees C per watt above inlet air, at steady state
  double thermal_tau_s;       // first-order time constant of the heatsink
  // Buses.
  unsigned pcie_max_gen, pcie_max_width;
  unsigned nvlink_links, nvlink_version;
  // Features.
  bool ecc_supported, ecc_default;
  bool row_remapping;  // Ampere and later datacenter parts
  bool persistence_default;
  bool mig_capable;
  unsigned fans;  // 0: passive or SXM (nvmlDeviceGetFanSpeed is NOT_SUPPORTED)
  // Zero-RPM boards stop their fans while cool and start them when the core reaches this; 0: the
  // fans always turn. A fact of the board's fan table, like its thresholds.
  unsigned zero_rpm_start_c;
  // Identity strings.
  std::string_view vbios, inforom_image, inforom_oem, inforom_ecc, inforom_power, part_number;
  std::string_view serial_prefix;
  std::vector<MigProfile> mig_profiles;
  // Idle in P0 at the idle clocks with the link at full speed, instead of P8 on a link trained
  // down to Gen1: what a real H200 (driver 580.159.04, persistence on) answered at rest.
  bool idle_in_p0 = false;
  // Page retirement (nvmlDeviceGetRetiredPages): Ampere and later replace it with row remapping
  // and answer NOT_SUPPORTED, as the recorded H200 did; on for the profiles that still carry
  // the retired_pages rule's scenarios.
  bool retires_pages = true;
  // Memory banks the row remapper tracks (nvmlDeviceGetRowRemapperHistogram's total), where one was
  // recorded (the H200: 3072); 0: not known, and the call answers NOT_SUPPORTED.
  unsigned remap_banks = 0;
};

// nullptr when unknown.
const GpuProfile* findProfile(std::string_view id);
// "H100-SXM5-80GB, H200-SXM-141GB, ..." for error messages and docs.
std::string profileIdList();
const MigProfile* findMigProfile(const GpuProfile& profile, std::string_view name);

}  // namespace gw::sim
