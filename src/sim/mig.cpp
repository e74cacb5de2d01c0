#include "sim/mig.h"

#include <algorithm>
#include <iterator>

#include "sim/noise.h"

namespace gw::sim {
namespace {

// NVML_COMPUTE_INSTANCE_PROFILE_1_SLICE .. _6_SLICE, in index order.
constexpr unsigned kComputeSlices[] = {1, 2, 3, 4, 7, 8, 6};

unsigned memoryMask(unsigned start, unsigned size) {
  const unsigned end = std::min(start + size, 32u);
  unsigned m = 0;
  for (unsigned i = start; i < end; ++i) m |= 1u << i;
  return m;
}

struct Usage {
  unsigned memory = 0;  // bit per memory slice
  unsigned compute = 0;
  unsigned of_profile = 0;
};

Usage usage(const Device& gpu, const MigProfile& p) {
  Usage u;
  for (const GpuInstance* gi : gpu.gpu_instances) {
    u.memory |= memoryMask(gi->start, gi->profile->mem_slices);
    u.compute += gi->profile->gpu_slices;
    if (gi->profile == &p) ++u.of_profile;
  }
  return u;
}

bool fits(const Usage& u, const MigProfile& p, unsigned start) {
  const unsigned mask = memoryMask(start, p.mem_slices);
  return start + p.mem_slices <= kMigMemorySlices && (u.memory & mask) == 0 &&
         u.compute + p.gpu_slices <= kMigComputeSlices && u.of_profile < p.instances;
}

unsigned computeMask(const GpuInstance& gi) {
  unsigned m = 0;
  for (const ComputeInstance* ci : gi.cis) m |= memoryMask(ci->start, ci->size);
  return m;
}

// A compute instance of `size` slices starts at a multiple of its size, within the GPU instance.
std::vector<unsigned> computePlacements(const GpuInstance& gi, unsigned size) {
  std::vector<unsigned> starts;
  for (unsigned s = 0; size > 0 && s + size <= gi.profile->gpu_slices; s += size) starts.push_back(s);
  return starts;
}

Device* makeMigDevice(Device& gpu, ComputeInstance& ci) {
  World& w = *gpu.world;
  const GpuConfig& g = *gpu.cfg;
  auto m = std::make_unique<Device>();
  m->world = &w;
  m->is_mig = true;
  m->index = static_cast<unsigned>(gpu.mig_children.size());
  m->parent = &gpu;
  m->minor = gpu.minor;
  m->cfg = &g;
  m->profile = gpu.profile;
  m->mig = &ci.config;
  const MigProfile& p = *ci.gi->profile;
  m->name = gpu.name + " MIG " +
            (ci.size == p.gpu_slices ? std::string(p.name) : std::to_string(ci.size) + "c." + std::string(p.name));
  // The same (gi, ci) on the same GPU has the same UUID in every process that rebuilds it.
  const std::uint64_t salt = (static_cast<std::uint64_t>(ci.gi->id) << 8) | ci.id;
  const auto seed = w.scenario.seed;
  m->uuid = formatUuid("MIG-", hash(seed, g.index, Signal::kUuid, 100 + salt),
                       hash(seed, g.index, Signal::kUuid, 200 + salt));
  m->serial = gpu.serial;
  m->pci = gpu.pci;
  m->gates = gpu.gates;
  Device* raw = m.get();
  w.migs.push_back(std::move(m));
  return raw;
}

void sortChildren(Device& gpu) {
  std::stable_sort(gpu.mig_children.begin(), gpu.mig_children.end(), [](const Device* a, const Device* b) {
    if (a->mig->gpu_instance_id != b->mig->gpu_instance_id) return a->mig->gpu_instance_id < b->mig->gpu_instance_id;
    return a->mig->compute_instance_id < b->mig->compute_instance_id;
  });
}

}  // namespace

unsigned computeProfileSlices(unsigned profile) {
  return profile < std::size(kComputeSlices) ? kComputeSlices[profile] : 0;
}

const MigProfile* migProfileById(const Device& gpu, unsigned id) {
  for (const auto& p : gpu.profile->mig_profiles)
    if (p.id == id) return &p;
  return nullptr;
}

const MigProfile* migProfileByIndex(const Device& gpu, unsigned nvml_index) {
  for (const auto& p : gpu.profile->mig_profiles)
    if (p.nvml_index == nvml_index) return &p;
  return nullptr;
}

std::vector<unsigned> migPlacements(const MigProfile& p) {
  std::vector<unsigned> starts;
  for (unsigned k = 0; k < (p.places ? p.places : p.instances); ++k)
    if ((k + 1) * p.mem_slices <= kMigMemorySlices) starts.push_back(k * p.mem_slices);
  return starts;
}

GpuInstance* findGpuInstance(const Device& gpu, unsigned id) {
  for (GpuInstance* gi : gpu.gpu_instances)
    if (gi->id == id) return gi;
  return nullptr;
}

void loadScenarioMigLayout(Device& gpu) {
  const GpuConfig& g = *gpu.cfg;
  if (!g.mig_enabled) return;
  for (const MigInstanceConfig& inst : g.mig_instances) {
    GpuInstance* gi = findGpuInstance(gpu, inst.gpu_instance_id);
    if (!gi) {
      // The scenario names ids, NVIDIA's numbering gives their placement; the parser already
      // checked that the instances fit the GPU's slices.
      auto owned = std::make_unique<GpuInstance>();
      owned->gpu = &gpu;
      owned->profile = inst.profile;
      owned->id = inst.gpu_instance_id;
      owned->start = migPlacementStart(*inst.profile, inst.gpu_instance_id);
      gi = owned.get();
      gpu.world->gpu_instances.push_back(std::move(owned));
      gpu.gpu_instances.push_back(gi);
    }
    auto ci = std::make_unique<ComputeInstance>();
    ci->gi = gi;
    ci->id = inst.compute_instance_id;
    ci->size = inst.profile->gpu_slices;
    const auto* slot = std::find(std::begin(kComputeSlices), std::end(kComputeSlices), ci->size);
    ci->profile = static_cast<unsigned>(slot - std::begin(kComputeSlices));
    ci->config = inst;
    ci->device = makeMigDevice(gpu, *ci);
    gpu.mig_children.push_back(ci->device);
    gi->cis.push_back(ci.get());
    gpu.world->compute_instances.push_back(std::move(ci));
  }
}

void clearMigLayout(Device& gpu) {
  for (GpuInstance* gi : std::vector<GpuInstance*>(gpu.gpu_instances)) {
    for (ComputeInstance* ci : std::vector<ComputeInstance*>(gi->cis)) destroyComputeInstance(*ci);
    destroyGpuInstance(*gi);
  }
}

unsigned gpuInstanceCapacity(const Device& gpu, const MigProfile& p) {
  Usage u = usage(gpu, p);
  unsigned n = 0;
  for (unsigned start : migPlacements(p)) {
    if (!fits(u, p, start)) continue;
    u.memory |= memoryMask(start, p.mem_slices);
    u.compute += p.gpu_slices;
    ++u.of_profile;
    ++n;
  }
  return n;
}

nvmlReturn_t createGpuInstance(Device& gpu, const MigProfile& p, std::optional<unsigned> start, GpuInstance** out) {
  const Usage u = usage(gpu, p);
  std::optional<unsigned> at;
  for (unsigned s : migPlacements(p)) {
    if (start && s != *start) continue;
    if (fits(u, p, s)) {
      at = s;
      break;
    }
  }
  if (!at) return start ? NVML_ERROR_INVALID_ARGUMENT : NVML_ERROR_INSUFFICIENT_RESOURCES;
  unsigned id = migGpuInstanceId(p, *at);
  // A scenario may have named ids of its own: then the lowest one free.
  for (unsigned next = 0; findGpuInstance(gpu, id); ++next) id = next;
  auto gi = std::make_unique<GpuInstance>();
  gi->gpu = &gpu;
  gi->profile = &p;
  gi->id = id;
  gi->start = *at;
  *out = gi.get();
  gpu.gpu_instances.push_back(gi.get());
  std::sort(gpu.gpu_instances.begin(), gpu.gpu_instances.end(),
            [](const GpuInstance* a, const GpuInstance* b) { return a->id < b->id; });
  gpu.world->gpu_instances.push_back(std::move(gi));
  return NVML_SUCCESS;
}

void destroyGpuInstance(GpuInstance& gi) {
  gi.alive = false;
  auto& list = gi.gpu->gpu_instances;
  list.erase(std::remove(list.begin(), list.end(), &gi), list.end());
}

unsigned computeInstanceCapacity(const GpuInstance& gi, unsigned profile) {
  const unsigned size = computeProfileSlices(profile);
  unsigned used = computeMask(gi), n = 0;
  for (unsigned s : computePlacements(gi, size)) {
    if (used & memoryMask(s, size)) continue;
    used |= memoryMask(s, size);
    ++n;
  }
  return n;
}

nvmlReturn_t createComputeInstance(GpuInstance& gi, unsigned profile, std::optional<unsigned> id,
                                   std::optional<unsigned> start, ComputeInstance** out) {
  const unsigned size = computeProfileSlices(profile);
  if (size == 0 || size > gi.profile->gpu_slices) return NVML_ERROR_NOT_SUPPORTED;
  const unsigned used = computeMask(gi);
  std::optional<unsigned> at;
  for (unsigned s : computePlacements(gi, size)) {
    if (start && s != *start) continue;
    if ((used & memoryMask(s, size)) == 0) {
      at = s;
      break;
    }
  }
  if (!at) return NVML_ERROR_INSUFFICIENT_RESOURCES;
  auto taken = [&](unsigned v) {
    return std::any_of(gi.cis.begin(), gi.cis.end(), [&](const ComputeInstance* c) { return c->id == v; });
  };
  unsigned ci_id = 0;
  if (id) {
    if (taken(*id)) return NVML_ERROR_INVALID_ARGUMENT;
    ci_id = *id;
  } else {
    while (taken(ci_id)) ++ci_id;
  }
  auto ci = std::make_unique<ComputeInstance>();
  ci->gi = &gi;
  ci->id = ci_id;
  ci->profile = profile;
  ci->start = *at;
  ci->size = size;
  ci->config.profile = gi.profile;
  ci->config.gpu_instance_id = gi.id;
  ci->config.compute_instance_id = ci_id;
  Device& gpu = *gi.gpu;
  ci->device = makeMigDevice(gpu, *ci);
  gpu.mig_children.push_back(ci->device);
  sortChildren(gpu);
  gi.cis.push_back(ci.get());
  *out = ci.get();
  gpu.world->compute_instances.push_back(std::move(ci));
  return NVML_SUCCESS;
}

void destroyComputeInstance(ComputeInstance& ci) {
  ci.alive = false;
  ci.device->gone = true;
  auto& children = ci.gi->gpu->mig_children;
  children.erase(std::remove(children.begin(), children.end(), ci.device), children.end());
  auto& list = ci.gi->cis;
  list.erase(std::remove(list.begin(), list.end(), &ci), list.end());
}

}  // namespace gw::sim
