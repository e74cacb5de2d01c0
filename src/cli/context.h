// What every command shares: the global options, the NVML session (opened on first use, from the
// real driver or, only when asked, the simulator) and the filesystem root.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "common/result.h"
#include "nvml/nvml.h"
#include "platform/fs_root.h"

namespace gw::cli {

// Exit codes shared by the inventory commands (documented in docs/cli.md).
enum Exit : int {
  kExitOk = 0,
  kExitPartial = 1,   // ran, but at least one GPU did not answer (lost, error)
  kExitUsage = 2,     // bad arguments or input
  kExitNoDriver = 3,  // NVML could not be loaded or initialised: no data at all
  // The agent could not be asked: none owns the data folder (where the command needs one), its
  // socket is not trusted, or its answer broke a bound or had the wrong shape. Same value: no data.
  kExitNoAgent = 3,
};

// The --help footer of the commands that read the GPUs through NVML and nothing else (discovery,
// query, dmon, pmon, topo, slurm gres): their codes are the enum's, said once.
inline constexpr const char* kInventoryExitCodes =
    "Exit codes: 0 every GPU answered, 1 some GPU did not answer (lost, stalled, an error) or the output\n"
    "could not be written, 2 bad arguments (an unknown GPU, field or scenario), 3 no NVIDIA driver/NVML.";

struct GlobalOptions {
  std::string simulate;  // scenario name or path
  std::string nvml_lib;  // explicit library path
  std::string root = "/";
  bool json = false;
};

class Context {
 public:
  GlobalOptions options;

  // Opens NVML on first use. On failure prints one sentence to stderr and returns nullptr.
  nvml::Session* nvml();
  // Like nvml(), but prints nothing on failure (the caller explains it; see nvmlStatus()).
  nvml::Session* tryNvml();
  const platform::FsRoot& root();
  // The reason the last nvml() failed, for JSON error output.
  const Status& nvmlStatus() const { return nvml_status_; }
  // Exit code after nvml() failed: usage for a bad --simulate, else "no driver".
  int failureExit() const { return usage_error_ ? kExitUsage : kExitNoDriver; }
  // NVML and how many GPUs it sees: how the inventory commands (query, dmon, pmon, top) start. On
  // failure one sentence is printed, *exit_code set (usage, or no driver) and nullopt returned.
  struct Devices {
    nvml::Session* session;
    unsigned count;
  };
  std::optional<Devices> devices(int* exit_code);

 private:
  std::unique_ptr<nvml::Session> session_;
  std::unique_ptr<platform::FsRoot> root_;
  Status nvml_status_;
  bool tried_ = false;
  bool usage_error_ = false;
  bool quiet_ = false;
};

// Library and scenario lookup, exposed for tests and `gpuwarden sim list`.
struct NvmlTarget {
  std::string library;
  std::string scenario;  // resolved scenario path when simulating, else empty
};
// On failure, *usage_error (when given) says whether the user's --simulate argument is at fault
// (exit kExitUsage) rather than a missing library (kExitNoDriver).
Result<NvmlTarget> resolveNvmlTarget(const GlobalOptions& options, bool* usage_error = nullptr);
std::vector<std::string> scenarioDirectories();
std::vector<std::string> listScenarios();
std::string executableDirectory();

// Prints "gpuwarden: <message>" to stderr.
void printError(const std::string& message);

}  // namespace gw::cli
