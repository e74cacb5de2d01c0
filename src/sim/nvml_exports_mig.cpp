// MIG partitioning: MIG mode, GPU instances and compute instances (nvidia-smi mig ...). Reads are
// open to every user (the driver's mig/monitor capability is world-readable); changes need root,
// as the other setters. The layout lives in sim/mig.h, under World::mig_mu.
#include "sim/export_api.h"

#include <algorithm>
#include <mutex>

#include "sim/mig.h"
#include "sim/world.h"

using namespace gw::sim;

namespace {

// Buffers NVML fills are sized by the profile's instanceCount; nothing here has more.
constexpr unsigned kMaxInstances = 8;

// Running processes on the GPU, or only on one compute instance.
bool processesRunning(const Call& c, const Device& gpu, const ComputeInstance* ci = nullptr) {
  for (const auto& p : gpu.cfg->processes) {
    if (!processRunning(p, c.t)) continue;
    if (!ci || (p.gpu_instance == ci->gi->id && p.compute_instance == ci->id)) return true;
  }
  return false;
}

// The GPU instance behind a handle, live and of this world; `c` is the gate of its GPU.
GpuInstance* enterGpuInstance(nvmlGpuInstance_t h, const char* function, Call* c) {
  auto* gi = reinterpret_cast<GpuInstance*>(h);
  if (!gi || gi->magic != kGpuInstanceMagic) {
    *c = enterSystem(function);
    if (*c) c->rc = NVML_ERROR_INVALID_ARGUMENT;
    return nullptr;
  }
  *c = enterDevice(reinterpret_cast<nvmlDevice_t>(gi->gpu), function, MigPolicy::kPhysicalOnly);
  if (!*c) return nullptr;
  return gi;
}

ComputeInstance* enterComputeInstance(nvmlComputeInstance_t h, const char* function, Call* c) {
  auto* ci = reinterpret_cast<ComputeInstance*>(h);
  if (!ci || ci->magic != kComputeInstanceMagic) {
    *c = enterSystem(function);
    if (*c) c->rc = NVML_ERROR_INVALID_ARGUMENT;
    return nullptr;
  }
  *c = enterDevice(reinterpret_cast<nvmlDevice_t>(ci->gi->gpu), function, MigPolicy::kPhysicalOnly);
  if (!*c) return nullptr;
  return ci;
}

#define GW_ENTER_GI(handle)                                 \
  Call c;                                                   \
  GpuInstance* gi = enterGpuInstance(handle, __func__, &c); \
  if (!gi) return c.rc

#define GW_ENTER_CI(handle)                                         \
  Call c;                                                           \
  ComputeInstance* ci = enterComputeInstance(handle, __func__, &c); \
  if (!ci) return c.rc

void fillGpuProfile(const MigProfile& p, unsigned instances, nvmlGpuInstanceProfileInfo_t* info) {
  *info = {};
  info->id = p.id;
  info->isP2pSupported = 0;
  info->sliceCount = p.gpu_slices;
  info->instanceCount = instances;
  info->multiprocessorCount = p.sm_count;
  info->copyEngineCount = p.copy_engines;
  info->decoderCount = p.decoders;
  info->encoderCount = 0;  // neither A100 nor H100/H200 has NVENC
  info->jpegCount = p.jpegs;
  info->ofaCount = p.ofas;
  info->memorySizeMB = p.memory_mib;
}

// MIG must be on for anything about instances, as NVML answers.
nvmlReturn_t profileOf(const Call& c, unsigned profile_id, const MigProfile** out) {
  if (!c.dev->profile->mig_capable) return NVML_ERROR_NOT_SUPPORTED;
  if (!c.dev->mig_current.load()) return NVML_ERROR_NOT_SUPPORTED;
  *out = migProfileById(*c.dev, profile_id);
  return *out ? NVML_SUCCESS : NVML_ERROR_INVALID_ARGUMENT;
}

}  // namespace

extern "C" {

nvmlReturn_t nvmlDeviceSetMigMode(nvmlDevice_t device, unsigned int mode, nvmlReturn_t* activationStatus) {
  GW_ENTER_DEVICE(device, MigPolicy::kPhysicalOnly);
  if (!activationStatus) return NVML_ERROR_INVALID_ARGUMENT;
  if (!mayChangeSettings(c)) return NVML_ERROR_NO_PERMISSION;
  if (!c.dev->profile->mig_capable) return NVML_ERROR_NOT_SUPPORTED;
  if (mode != NVML_DEVICE_MIG_ENABLE && mode != NVML_DEVICE_MIG_DISABLE) return NVML_ERROR_INVALID_ARGUMENT;
  const bool on = mode == NVML_DEVICE_MIG_ENABLE;
  {
    std::lock_guard lock(c.world->mig_mu);
    if (c.dev->mig_current.load() == on) {
      *activationStatus = NVML_SUCCESS;
      return NVML_SUCCESS;
    }
    // The driver resets the GPU to change the mode: not while anything runs on it, nor while
    // instances are left (they would be torn down under their users).
    if (processesRunning(c, *c.dev) || !c.dev->gpu_instances.empty()) return NVML_ERROR_IN_USE;
    // Bare metal: NVML resets the GPU itself, so the new mode is current at once (a VM would
    // answer RESET_REQUIRED in activationStatus and leave it pending).
    c.dev->mig_current = on;
  }
  *activationStatus = NVML_SUCCESS;
  return saved(c);
}

nvmlReturn_t nvmlDeviceGetGpuInstanceProfileInfo(nvmlDevice_t device, unsigned int profile,
                                                 nvmlGpuInstanceProfileInfo_t* info) {
  GW_ENTER_DEVICE(device, MigPolicy::kPhysicalOnly);
  if (!info || profile > NVML_GPU_INSTANCE_PROFILE_1_SLICE_REV2) return NVML_ERROR_INVALID_ARGUMENT;
  // A MIG-capable GPU describes its profiles with MIG off too: a real H200 on 580.159.04 did
  // (nvidia-smi mig -lgip listed them all, every instance free).
  if (!c.dev->profile->mig_capable) return NVML_ERROR_NOT_SUPPORTED;
  const MigProfile* p = migProfileByIndex(*c.dev, profile);
  if (!p) return NVML_ERROR_NOT_SUPPORTED;
  fillGpuProfile(*p, p->instances, info);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetGpuInstanceProfileInfoV(nvmlDevice_t device, unsigned int profile,
                                                  nvmlGpuInstanceProfileInfo_v2_t* info) {
  if (!info) return NVML_ERROR_INVALID_ARGUMENT;
  if (info->version != nvmlGpuInstanceProfileInfo_v2) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  nvmlGpuInstanceProfileInfo_t v1{};
  const nvmlReturn_t rc = nvmlDeviceGetGpuInstanceProfileInfo(device, profile, &v1);
  if (rc != NVML_SUCCESS) return rc;
  const MigProfile* p = migProfileByIndex(*reinterpret_cast<Device*>(device), profile);
  info->id = v1.id;
  info->isP2pSupported = v1.isP2pSupported;
  info->sliceCount = v1.sliceCount;
  info->instanceCount = v1.instanceCount;
  info->multiprocessorCount = v1.multiprocessorCount;
  info->copyEngineCount = v1.copyEngineCount;
  info->decoderCount = v1.decoderCount;
  info->encoderCount = v1.encoderCount;
  info->jpegCount = v1.jpegCount;
  info->ofaCount = v1.ofaCount;
  info->memorySizeMB = v1.memorySizeMB;
  return copyString(info->name, sizeof info->name, "MIG " + std::string(p->name));
}

nvmlReturn_t nvmlDeviceGetGpuInstancePossiblePlacements_v2(nvmlDevice_t device, unsigned int profileId,
                                                           nvmlGpuInstancePlacement_t* placements,
                                                           unsigned int* count) {
  GW_ENTER_DEVICE(device, MigPolicy::kPhysicalOnly);
  if (!count) return NVML_ERROR_INVALID_ARGUMENT;
  // Where a profile could go is a fact of the GPU, answered with MIG off too (a real H200 on
  // 580.159.04 listed every placement, nvidia-smi mig -lgipp).
  if (!c.dev->profile->mig_capable) return NVML_ERROR_NOT_SUPPORTED;
  const MigProfile* p = migProfileById(*c.dev, profileId);
  if (!p) return NVML_ERROR_INVALID_ARGUMENT;
  const auto starts = migPlacements(*p);
  if (!placements) {
    *count = static_cast<unsigned>(starts.size());
    return NVML_SUCCESS;
  }
  if (*count < starts.size()) {
    *count = static_cast<unsigned>(starts.size());
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  for (std::size_t i = 0; i < starts.size(); ++i) placements[i] = {starts[i], p->mem_slices};
  *count = static_cast<unsigned>(starts.size());
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetGpuInstanceRemainingCapacity(nvmlDevice_t device, unsigned int profileId,
                                                       unsigned int* count) {
  GW_ENTER_DEVICE(device, MigPolicy::kPhysicalOnly);
  if (!count) return NVML_ERROR_INVALID_ARGUMENT;
  const MigProfile* p = nullptr;
  if (nvmlReturn_t rc = profileOf(c, profileId, &p); rc != NVML_SUCCESS) return rc;
  std::lock_guard lock(c.world->mig_mu);
  *count = gpuInstanceCapacity(*c.dev, *p);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceCreateGpuInstance(nvmlDevice_t device, unsigned int profileId, nvmlGpuInstance_t* gpuInstance) {
  GW_ENTER_DEVICE(device, MigPolicy::kPhysicalOnly);
  if (!gpuInstance) return NVML_ERROR_INVALID_ARGUMENT;
  if (!mayChangeSettings(c)) return NVML_ERROR_NO_PERMISSION;
  const MigProfile* p = nullptr;
  if (nvmlReturn_t rc = profileOf(c, profileId, &p); rc != NVML_SUCCESS) return rc;
  GpuInstance* gi = nullptr;
  {
    std::lock_guard lock(c.world->mig_mu);
    if (nvmlReturn_t rc = createGpuInstance(*c.dev, *p, std::nullopt, &gi); rc != NVML_SUCCESS) return rc;
  }
  *gpuInstance = reinterpret_cast<nvmlGpuInstance_t>(gi);
  return saved(c);
}

nvmlReturn_t nvmlDeviceGetGpuInstances(nvmlDevice_t device, unsigned int profileId, nvmlGpuInstance_t* gpuInstances,
                                       unsigned int* count) {
  GW_ENTER_DEVICE(device, MigPolicy::kPhysicalOnly);
  if (!gpuInstances || !count) return NVML_ERROR_INVALID_ARGUMENT;
  const MigProfile* p = nullptr;
  if (nvmlReturn_t rc = profileOf(c, profileId, &p); rc != NVML_SUCCESS) return rc;
  std::lock_guard lock(c.world->mig_mu);
  unsigned n = 0;
  for (GpuInstance* gi : c.dev->gpu_instances)
    if (gi->profile == p && n < p->instances) gpuInstances[n++] = reinterpret_cast<nvmlGpuInstance_t>(gi);
  *count = n;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetGpuInstanceById(nvmlDevice_t device, unsigned int id, nvmlGpuInstance_t* gpuInstance) {
  GW_ENTER_DEVICE(device, MigPolicy::kPhysicalOnly);
  if (!gpuInstance) return NVML_ERROR_INVALID_ARGUMENT;
  if (!c.dev->profile->mig_capable || !c.dev->mig_current.load()) return NVML_ERROR_NOT_SUPPORTED;
  std::lock_guard lock(c.world->mig_mu);
  GpuInstance* gi = findGpuInstance(*c.dev, id);
  if (!gi) return NVML_ERROR_NOT_FOUND;
  *gpuInstance = reinterpret_cast<nvmlGpuInstance_t>(gi);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpuInstanceGetInfo(nvmlGpuInstance_t gpuInstance, nvmlGpuInstanceInfo_t* info) {
  GW_ENTER_GI(gpuInstance);
  if (!info) return NVML_ERROR_INVALID_ARGUMENT;
  std::lock_guard lock(c.world->mig_mu);
  if (!gi->alive) return NVML_ERROR_INVALID_ARGUMENT;
  info->device = reinterpret_cast<nvmlDevice_t>(gi->gpu);
  info->id = gi->id;
  info->profileId = gi->profile->id;
  info->placement = {gi->start, gi->profile->mem_slices};
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpuInstanceDestroy(nvmlGpuInstance_t gpuInstance) {
  GW_ENTER_GI(gpuInstance);
  if (!mayChangeSettings(c)) return NVML_ERROR_NO_PERMISSION;
  {
    std::lock_guard lock(c.world->mig_mu);
    if (!gi->alive) return NVML_ERROR_INVALID_ARGUMENT;
    // As NVML: compute instances keep their GPU instance in use until they are destroyed.
    if (!gi->cis.empty()) return NVML_ERROR_IN_USE;
    destroyGpuInstance(*gi);
  }
  return saved(c);
}

nvmlReturn_t nvmlGpuInstanceGetComputeInstanceProfileInfo(nvmlGpuInstance_t gpuInstance, unsigned int profile,
                                                          unsigned int engProfile,
                                                          nvmlComputeInstanceProfileInfo_t* info) {
  GW_ENTER_GI(gpuInstance);
  if (!info || engProfile != NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED) return NVML_ERROR_INVALID_ARGUMENT;
  const unsigned size = computeProfileSlices(profile);
  if (size == 0) return NVML_ERROR_INVALID_ARGUMENT;
  std::lock_guard lock(c.world->mig_mu);
  if (!gi->alive) return NVML_ERROR_INVALID_ARGUMENT;
  const MigProfile& p = *gi->profile;
  if (size > p.gpu_slices) return NVML_ERROR_NOT_SUPPORTED;
  *info = {};
  info->id = profile;
  info->sliceCount = size;
  info->instanceCount = p.gpu_slices / size;
  info->multiprocessorCount = p.sm_count * size / p.gpu_slices;
  info->sharedCopyEngineCount = p.copy_engines;
  info->sharedDecoderCount = p.decoders;
  info->sharedEncoderCount = 0;
  info->sharedJpegCount = p.jpegs;
  info->sharedOfaCount = p.ofas;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpuInstanceGetComputeInstanceRemainingCapacity(nvmlGpuInstance_t gpuInstance, unsigned int profileId,
                                                                unsigned int* count) {
  GW_ENTER_GI(gpuInstance);
  if (!count || computeProfileSlices(profileId) == 0) return NVML_ERROR_INVALID_ARGUMENT;
  std::lock_guard lock(c.world->mig_mu);
  if (!gi->alive) return NVML_ERROR_INVALID_ARGUMENT;
  if (computeProfileSlices(profileId) > gi->profile->gpu_slices) return NVML_ERROR_NOT_SUPPORTED;
  *count = computeInstanceCapacity(*gi, profileId);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpuInstanceCreateComputeInstance(nvmlGpuInstance_t gpuInstance, unsigned int profileId,
                                                  nvmlComputeInstance_t* computeInstance) {
  GW_ENTER_GI(gpuInstance);
  if (!computeInstance || computeProfileSlices(profileId) == 0) return NVML_ERROR_INVALID_ARGUMENT;
  if (!mayChangeSettings(c)) return NVML_ERROR_NO_PERMISSION;
  ComputeInstance* ci = nullptr;
  {
    std::lock_guard lock(c.world->mig_mu);
    if (!gi->alive) return NVML_ERROR_INVALID_ARGUMENT;
    if (nvmlReturn_t rc = createComputeInstance(*gi, profileId, std::nullopt, std::nullopt, &ci); rc != NVML_SUCCESS)
      return rc;
  }
  *computeInstance = reinterpret_cast<nvmlComputeInstance_t>(ci);
  return saved(c);
}

nvmlReturn_t nvmlGpuInstanceGetComputeInstances(nvmlGpuInstance_t gpuInstance, unsigned int profileId,
                                                nvmlComputeInstance_t* computeInstances, unsigned int* count) {
  GW_ENTER_GI(gpuInstance);
  if (!computeInstances || !count || computeProfileSlices(profileId) == 0) return NVML_ERROR_INVALID_ARGUMENT;
  std::lock_guard lock(c.world->mig_mu);
  if (!gi->alive) return NVML_ERROR_INVALID_ARGUMENT;
  const unsigned size = computeProfileSlices(profileId);
  if (size > gi->profile->gpu_slices) return NVML_ERROR_NOT_SUPPORTED;
  const unsigned room = std::min(kMaxInstances, gi->profile->gpu_slices / size);
  unsigned n = 0;
  for (ComputeInstance* ci : gi->cis)
    if (ci->profile == profileId && n < room) computeInstances[n++] = reinterpret_cast<nvmlComputeInstance_t>(ci);
  *count = n;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpuInstanceGetComputeInstanceById(nvmlGpuInstance_t gpuInstance, unsigned int id,
                                                   nvmlComputeInstance_t* computeInstance) {
  GW_ENTER_GI(gpuInstance);
  if (!computeInstance) return NVML_ERROR_INVALID_ARGUMENT;
  std::lock_guard lock(c.world->mig_mu);
  if (!gi->alive) return NVML_ERROR_INVALID_ARGUMENT;
  for (ComputeInstance* ci : gi->cis) {
    if (ci->id != id) continue;
    *computeInstance = reinterpret_cast<nvmlComputeInstance_t>(ci);
    return NVML_SUCCESS;
  }
  return NVML_ERROR_NOT_FOUND;
}

nvmlReturn_t nvmlComputeInstanceGetInfo_v2(nvmlComputeInstance_t computeInstance, nvmlComputeInstanceInfo_t* info) {
  GW_ENTER_CI(computeInstance);
  if (!info) return NVML_ERROR_INVALID_ARGUMENT;
  std::lock_guard lock(c.world->mig_mu);
  if (!ci->alive) return NVML_ERROR_INVALID_ARGUMENT;
  info->device = reinterpret_cast<nvmlDevice_t>(ci->gi->gpu);
  info->gpuInstance = reinterpret_cast<nvmlGpuInstance_t>(ci->gi);
  info->id = ci->id;
  info->profileId = ci->profile;
  info->placement = {ci->start, ci->size};
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlComputeInstanceGetInfo(nvmlComputeInstance_t computeInstance, nvmlComputeInstanceInfo_t* info) {
  return nvmlComputeInstanceGetInfo_v2(computeInstance, info);
}

nvmlReturn_t nvmlComputeInstanceDestroy(nvmlComputeInstance_t computeInstance) {
  GW_ENTER_CI(computeInstance);
  if (!mayChangeSettings(c)) return NVML_ERROR_NO_PERMISSION;
  {
    std::lock_guard lock(c.world->mig_mu);
    if (!ci->alive) return NVML_ERROR_INVALID_ARGUMENT;
    if (processesRunning(c, *ci->gi->gpu, ci)) return NVML_ERROR_IN_USE;
    destroyComputeInstance(*ci);
  }
  return saved(c);
}

}  // extern "C"
