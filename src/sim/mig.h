// The MIG layout of a simulated GPU, which changes after load as on a real driver: GPU instances
// placed on memory slices, compute instances on a GPU instance's compute slices, and the MIG
// device (the handle nvmlDeviceGetMigDeviceHandleByIndex gives) of each compute instance.
//
// Every function here expects World::mig_mu held by the caller: readers on other threads (the
// agent's sampler) walk the same lists.
#pragma once

#include <optional>
#include <vector>

#include "nvml/nvml_abi.h"
#include "sim/world.h"

namespace gw::sim {

// Compute slices of NVML_COMPUTE_INSTANCE_PROFILE_*; 0 for a profile that does not exist.
unsigned computeProfileSlices(unsigned profile);
// The GPU instance profile of `gpu` with this profile id (-cgi's number) or NVML index.
const MigProfile* migProfileById(const Device& gpu, unsigned id);
const MigProfile* migProfileByIndex(const Device& gpu, unsigned nvml_index);

// The starts (memory slices) where an instance of `p` may be placed.
std::vector<unsigned> migPlacements(const MigProfile& p);

// The scenario's instances, at load (and at a reboot that keeps the scenario's MIG mode).
void loadScenarioMigLayout(Device& gpu);
// Destroys every instance of `gpu` (MIG mode changed, or the state file brings another layout).
void clearMigLayout(Device& gpu);

// How many more instances of `p` fit beside the live ones.
unsigned gpuInstanceCapacity(const Device& gpu, const MigProfile& p);
// At `start` when given (it must be a free placement of `p`), else at the first free one.
// INSUFFICIENT_RESOURCES when none is left.
nvmlReturn_t createGpuInstance(Device& gpu, const MigProfile& p, std::optional<unsigned> start, GpuInstance** out);
void destroyGpuInstance(GpuInstance& gi);  // the caller checked that it holds no compute instance

unsigned computeInstanceCapacity(const GpuInstance& gi, unsigned profile);
// `id` and `start` from the state file; else the lowest free id and the first free placement.
nvmlReturn_t createComputeInstance(GpuInstance& gi, unsigned profile, std::optional<unsigned> id,
                                   std::optional<unsigned> start, ComputeInstance** out);
void destroyComputeInstance(ComputeInstance& ci);

// The live GPU instance of `gpu` with this id, or nullptr.
GpuInstance* findGpuInstance(const Device& gpu, unsigned id);

}  // namespace gw::sim
