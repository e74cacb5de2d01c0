#include "nvml/inventory.h"

#include <cmath>

#include "nvml/errors.h"
#include "platform/deadline.h"

namespace gw::nvml {
namespace {

template <typename T>
std::optional<T> opt(const Result<T>& r) {
  return r ? std::optional<T>(*r) : std::nullopt;
}

std::optional<double> watts(const Result<unsigned>& mw) {
  return mw ? std::optional<double>(*mw / 1000.0) : std::nullopt;
}

}  // namespace

std::string migProfileName(const std::string& device_name, unsigned slices, unsigned long long memory_mb) {
  if (auto at = device_name.rfind(" MIG "); at != std::string::npos && at + 5 < device_name.size())
    return device_name.substr(at + 5);
  auto gb = static_cast<unsigned long long>((memory_mb + 512) / 1024);
  if (gb % 5 == 4) ++gb;
  return std::to_string(slices) + "g." + std::to_string(gb) + "gb";
}

std::string gpuInstanceProfile(const std::string& mig_profile) {
  std::size_t i = 0;
  while (i < mig_profile.size() && mig_profile[i] >= '0' && mig_profile[i] <= '9') ++i;
  if (i > 0 && mig_profile.compare(i, 2, "c.") == 0) return mig_profile.substr(i + 2);
  return mig_profile;
}

bool Inventory::anyLost() const {
  for (const auto& g : gpus)
    if (g.state != "ok") return true;
  return false;
}

std::optional<unsigned> smCountFromCores(unsigned arch, unsigned cores) {
  unsigned per_sm = 0;
  switch (arch) {
    case NVML_DEVICE_ARCH_VOLTA:
      per_sm = 64;
      break;
    case NVML_DEVICE_ARCH_TURING:
      per_sm = 64;
      break;
    case NVML_DEVICE_ARCH_AMPERE:
      per_sm = 64;
      break;  // GA100; GA10x have 128 but report via attributes
    case NVML_DEVICE_ARCH_ADA:
      per_sm = 128;
      break;
    case NVML_DEVICE_ARCH_HOPPER:
      per_sm = 128;
      break;
    default:
      return std::nullopt;
  }
  if (cores == 0 || cores % per_sm != 0) return std::nullopt;
  return cores / per_sm;
}

std::string formatIdRanges(const std::vector<unsigned>& ids) {
  std::string out;
  for (std::size_t i = 0; i < ids.size();) {
    std::size_t j = i;
    while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(ids[i]);
    if (j > i) out += "-" + std::to_string(ids[j]);
    i = j + 1;
  }
  return out;
}

namespace {

void readMigDevices(GpuInfo& g) {
  const Device& d = g.device;
  unsigned max = d.maxMigDevices().value_or(0);
  for (unsigned m = 0; m < max; ++m) {
    auto md = d.migDevice(m);
    if (!md) continue;  // NOT_FOUND: no instance in this slot
    MigInfo mi;
    mi.index = static_cast<unsigned>(g.mig_devices.size());
    mi.device = *md;
    mi.name = md->name().value_or("");
    mi.uuid = md->uuid().value_or("");
    mi.gpu_instance_id = md->gpuInstanceId().value_or(0);
    mi.compute_instance_id = md->computeInstanceId().value_or(0);
    if (auto a = md->attributes()) {
      mi.sm_count = a->multiprocessorCount;
      mi.memory_total_mib = a->memorySizeMB;
      mi.profile = migProfileName(mi.name, a->gpuInstanceSliceCount, a->memorySizeMB);
    }
    if (auto mem = md->memory(); mem && mi.memory_total_mib == 0) mi.memory_total_mib = mem->total / (1024 * 1024);
    g.mig_devices.push_back(std::move(mi));
  }
}

GpuInfo readGpu(const Session& s, unsigned i, InventoryDepth depth) {
  GpuInfo g;
  g.index = i;
  {
    auto dev = s.deviceByIndex(i);
    if (!dev) {
      g.state = isLost(dev.status().nvmlCode()) ? "lost" : "error";
      g.error = dev.error();
      return g;
    }
    g.device = *dev;
    const Device& d = g.device;
    auto name = d.name();
    if (!name) {
      // The first call decides: a lost GPU answers nothing else either.
      g.state = isLost(name.status().nvmlCode()) ? "lost" : "error";
      g.error = name.error();
      if (auto pci = d.pciInfo()) g.pci = *pci;
      return g;
    }
    g.name = *name;
    g.uuid = d.uuid().value_or("");
    if (depth == InventoryDepth::Identity) {
      if (auto pci = d.pciInfo()) g.pci = *pci;
      g.minor_number = opt(d.minorNumber());
      g.mig_enabled = opt(d.migEnabled());
      if (g.mig_enabled.value_or(false)) readMigDevices(g);
      return g;
    }
    g.serial = d.serial().value_or("");
    g.vbios = d.vbiosVersion().value_or("");
    g.inforom = d.inforomImageVersion().value_or("");
    g.board_part = d.boardPartNumber().value_or("");
    if (auto pci = d.pciInfo()) g.pci = *pci;
    g.minor_number = opt(d.minorNumber());
    g.architecture = d.architecture().value_or(NVML_DEVICE_ARCH_UNKNOWN);
    g.compute_capability = opt(d.computeCapability());
    g.cuda_cores = opt(d.cudaCores());
    if (auto a = d.attributes(); a && a->multiprocessorCount > 0) {
      g.sm_count = a->multiprocessorCount;
    } else if (g.cuda_cores) {
      g.sm_count = smCountFromCores(g.architecture, *g.cuda_cores);
    }
    if (auto m = d.memory()) g.memory_total_mib = m->total / (1024 * 1024);
    g.memory_bus_width = opt(d.memoryBusWidth());
    g.max_memory_clock = opt(d.maxClock(NVML_CLOCK_MEM));
    g.max_sm_clock = opt(d.maxClock(NVML_CLOCK_SM));
    if (g.memory_bus_width && g.max_memory_clock)
      g.peak_bandwidth_gbs = peakMemoryBandwidthGBs(*g.max_memory_clock, *g.memory_bus_width);
    g.pcie_gen = opt(d.pcieGen());
    g.pcie_width = opt(d.pcieWidth());
    g.pcie_max_gen = opt(d.pcieMaxGen());
    g.pcie_max_width = opt(d.pcieMaxWidth());
    for (unsigned link = 0; link < NVML_NVLINK_MAX_LINKS; ++link) {
      auto active = d.nvlinkActive(link);
      if (!active) continue;
      ++g.nvlink_links;
      if (*active) ++g.nvlink_active;
      if (g.nvlink_version == 0) g.nvlink_version = d.nvlinkVersion(link).value_or(0);
    }
    g.power_limit_w = watts(d.powerLimitMw());
    g.power_default_w = watts(d.defaultPowerLimitMw());
    if (auto c = d.powerLimitConstraintsMw()) {
      g.power_min_w = c->first / 1000.0;
      g.power_max_w = c->second / 1000.0;
    }
    g.ecc_enabled = opt(d.eccEnabled());
    g.persistence = opt(d.persistenceMode());
    g.mig_enabled = opt(d.migEnabled());
    g.numa_nodes = d.numaNodes().value_or({});
    g.cpus = d.cpuAffinity().value_or({});

    if (g.mig_enabled.value_or(false)) readMigDevices(g);
  }
  return g;
}

}  // namespace

Result<Inventory> readInventory(const Session& s, std::chrono::milliseconds deadline, InventoryDepth depth) {
  Inventory inv;
  inv.driver_version = s.driverVersion().value_or("");
  inv.nvml_version = s.nvmlVersion().value_or("");
  inv.cuda_driver_version = s.cudaDriverVersion().value_or(0);
  auto count = s.deviceCount();
  if (!count) return count.status();
  // Every GPU on its own thread: a hung one is listed as stalled after the deadline and holds up
  // no other.
  const Session* session = &s;
  auto read = platform::runEachWithDeadline<GpuInfo>(
      *count, [session, depth](std::size_t i) { return readGpu(*session, static_cast<unsigned>(i), depth); }, deadline);
  for (unsigned i = 0; i < *count; ++i) {
    if (read[i]) {
      inv.gpus.push_back(std::move(*read[i]));
      continue;
    }
    GpuInfo g;
    g.index = i;
    g.state = "stalled";
    g.error = noAnswer(deadline);
    inv.gpus.push_back(std::move(g));
  }
  return inv;
}

}  // namespace gw::nvml
