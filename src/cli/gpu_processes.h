// The processes on each GPU (NVML's compute and graphics lists, their utilisation since a moment,
// their command and user read under the filesystem root): one reading for `pmon` and `top`.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "nvml/nvml.h"
#include "platform/fs_root.h"

namespace gw::cli {

struct GpuProcess {
  unsigned gpu = 0;
  unsigned pid = 0;
  bool graphics = false;
  std::optional<unsigned> sm, mem, enc, dec;  // % since the last look; none when NVML has no sample
  std::uint64_t used_bytes = 0;
  std::string command;  // /proc/PID/comm under the root, else NVML's name, else "-"
  std::string user;     // owner of /proc/PID under the root (name, or uid when unnamed), else "-"
};

struct GpuProcessRead {
  bool stalled = false;  // no answer within the deadline
  bool matched = false;  // the GPU is one the caller asked for
  std::string lost;      // why the GPU is lost, when it is
  std::vector<GpuProcess> procs;
};

// Whether GPU `index` (with its UUID and PCI bus id, asked for only when `needs_ids`) is wanted.
using GpuMatch = std::function<bool(unsigned index, const std::string& uuid, const std::string& bus_id)>;

// One read of GPUs 0..count-1, each on its own thread under `deadline` (a hung GPU is reported
// stalled, not waited for). Utilisation is NVML's since `since_us` (microseconds since the epoch).
std::vector<GpuProcessRead> readGpuProcesses(const nvml::Session& s, unsigned count, const platform::FsRoot& root,
                                             std::uint64_t since_us, const GpuMatch& match, bool needs_ids,
                                             std::chrono::milliseconds deadline);

// The command name as the kernel knows it, read under the root; NVML's name (its last path
// element) when the process is not visible there (another PID namespace, a container); else "-".
std::string processCommand(const platform::FsRoot& root, const nvml::Session& s, unsigned pid);

// The owner of the process: /proc/PID/status's real uid, named by the root's /etc/passwd.
std::string processUser(const platform::FsRoot& root, unsigned pid);

}  // namespace gw::cli
