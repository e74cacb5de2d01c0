// The one JSON shape of the inventory. `gpuwarden discovery --json` prints these objects and the
// agent's /api/v1/gpus nests the same object under each GPU's "inventory", so a script reads a
// GPU's hardware the same way from either.
#pragma once

#include <nlohmann/json.hpp>

#include "nvml/inventory.h"

namespace gw::nvml {

// Every key is present whatever the GPU answered (null, "" or 0 for what could not be read), so
// that every GPU object has the same keys; "mig_devices" holds migJson() of its MIG devices.
nlohmann::json gpuJson(const GpuInfo& g);
nlohmann::json migJson(const MigInfo& m, const GpuInfo& parent);

}  // namespace gw::nvml
