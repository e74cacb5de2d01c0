// The settings NVML's setters changed, kept in a file so that they outlive the process: every
// `gpuwarden smi -pl …` is a process of its own, and the next `smi --query-gpu=power.limit` (another
// process) must read back what the first one set, as on a real driver. Off unless
// $GPUWARDEN_SIM_STATE names the file (docs/scenarios.md, "Settings state").
//
// A simulated reboot is a new $GPUWARDEN_SIM_BOOT: the file remembers the boot it was written in,
// and a process of another boot keeps only what survives a reboot (ECC mode, its pending value
// becoming current) and forgets the rest (power limit, persistence, locked and application
// clocks, compute mode), as a real node does.
#pragma once

#include <string>

namespace gw::sim {

struct World;

// Applies the state file to a new world. False (with *error) when the file exists but is not one
// this simulator wrote; a missing file is an empty state.
bool loadSimState(World& world, std::string* error);
// Writes the settings of every GPU (temp file, fsync, rename). No-op without $GPUWARDEN_SIM_STATE.
bool saveSimState(const World& world, double t, std::string* error);

}  // namespace gw::sim
