// A snapshot of what the machine has: every GPU and MIG device with the R2 inventory. Built by
// discovery, the agent's /api/v1/gpus and diag alike, so there is one way to enumerate.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "nvml/nvml.h"

namespace gw::nvml {

struct MigInfo {
  unsigned index = 0;               // position under its parent
  std::string name, uuid, profile;  // profile like "1g.10gb"
  unsigned gpu_instance_id = 0, compute_instance_id = 0;
  unsigned sm_count = 0;
  std::uint64_t memory_total_mib = 0;
  Device device;
};

struct GpuInfo {
  unsigned index = 0;
  Device device;
  std::string state = "ok";  // "ok", or "lost" when the GPU stopped answering
  std::string error;         // why, when not ok
  std::string name, uuid, serial, vbios, inforom, board_part;
  std::optional<unsigned> minor_number;  // /dev/nvidia<minor>: the driver's number, not the index
  PciInfo pci;
  unsigned architecture = NVML_DEVICE_ARCH_UNKNOWN;
  std::optional<Version> compute_capability;
  std::optional<unsigned> sm_count, cuda_cores;
  std::optional<std::uint64_t> memory_total_mib;
  std::optional<unsigned> memory_bus_width, max_memory_clock, max_sm_clock;
  std::optional<double> peak_bandwidth_gbs;
  std::optional<unsigned> pcie_gen, pcie_width, pcie_max_gen, pcie_max_width;
  unsigned nvlink_links = 0, nvlink_active = 0, nvlink_version = 0;
  std::optional<double> power_limit_w, power_default_w, power_min_w, power_max_w;
  std::optional<bool> ecc_enabled, persistence, mig_enabled;
  std::vector<unsigned> numa_nodes, cpus;
  std::vector<MigInfo> mig_devices;
};

struct Inventory {
  std::string driver_version, nvml_version;
  int cuda_driver_version = 0;
  std::vector<GpuInfo> gpus;
  bool anyLost() const;
};

// How much of each GPU to read: all of the R2 inventory, or only what names it (index, name, UUID,
// PCI bus id, minor number, MIG mode and MIG devices): what `smi -L` and the monitors need. On a
// real driver the rest (VBIOS, InfoROM, NVLink links, limits...) costs a list most of its time.
enum class InventoryDepth { Full, Identity };

// Enumerates every GPU, each on its own thread; a GPU that fails to answer is listed with state
// "lost" (or "error") and its error, one that has not answered within `deadline` as "stalled"
// (its reading thread is abandoned: see platform/deadline.h), and the others are still read.
// Fails only when the device count itself cannot be read.
Result<Inventory> readInventory(const Session& session, std::chrono::milliseconds deadline,
                                InventoryDepth depth = InventoryDepth::Full);

// "0-55,112-167" from a sorted id list.
std::string formatIdRanges(const std::vector<unsigned>& ids);
// A MIG device's profile name ("1g.10gb", or "1c.3g.40gb" for a compute instance smaller than its
// GPU instance, as nvidia-smi -L names it):
// the driver's own, the end of the device's name ("NVIDIA A100-SXM4-80GB MIG 1g.10gb"), which is
// also the name of its profile in `mig -lgip`. Only a name without it falls back to a guess from
// the slice count and memory: GiB to the nearest whole (a half rounds up), then up to the
// marketing size where NVIDIA's names do (9.75 GiB is "10gb"); the guess misses on some boards
// (H200's 1g is 16.5 GiB, named "18gb").
std::string migProfileName(const std::string& device_name, unsigned slices, unsigned long long memory_mb);
// The GPU instance's profile of a MIG device's profile name ("1c.3g.40gb" → "3g.40gb"): what
// dcgm-exporter's GPU_I_PROFILE and Kubernetes' mig-<profile> resources name.
std::string gpuInstanceProfile(const std::string& mig_profile);
// SMs from CUDA cores where NVML has no attribute query for full GPUs.
std::optional<unsigned> smCountFromCores(unsigned arch, unsigned cores);

}  // namespace gw::nvml
