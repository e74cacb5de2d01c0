// The kernel driver's own list of its GPUs, /proc/driver/nvidia/gpus/<bus>/information: it still
// names a GPU's device minor (/dev/nvidiaN) when NVML answers nothing for it (fallen off the bus,
// hung). Slurm numbers GPUs by device minor, so a minor NVML cannot give is taken from here.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "platform/fs_root.h"

namespace gw::nvml {

struct DriverGpu {
  std::string bus_id;  // normalised: "0000:18:00.0"
  std::string uuid;    // "GPU-…", empty when the file does not say
  long minor = -1;
};

// At most kMaxDriverGpus entries, each file at most 4 KiB; an entry whose file does not name a
// minor is left out. No driver folder: an empty list (not an error: a node without the driver).
inline constexpr std::size_t kMaxDriverGpus = 64;
Result<std::vector<DriverGpu>> readDriverGpus(const platform::FsRoot& root);

// "00000000:18:00.0" (NVML) and "0000:18:00.0" (the driver) → "0000:18:00.0"; lower case.
// Empty when `bus` is not a PCI address.
std::string normalBusId(std::string_view bus);

// A board as the caller knows it: minor -1 when NVML did not give one.
struct BoardMinor {
  std::string bus_id;
  std::string uuid;
  long minor = -1;
};

// Fills the unknown minors of `boards` from the driver's list: by bus id or UUID, then by
// elimination when exactly one board and exactly one of the driver's minors are left unmatched
// (a lost GPU answers NVML nothing, not even its bus id). What cannot be told stays -1.
void completeMinors(std::vector<BoardMinor>& boards, const std::vector<DriverGpu>& driver);

}  // namespace gw::nvml
