// The doctor: stack layer checks that tell which layer of a GPU node is wrong (R1, R6-R13).
//
//   hardware -> kernel driver -> CUDA driver -> toolkit -> libraries -> framework -> application
//   (+ container/system checks that sit beside the stack)
//
// Every read of the machine goes through platform::FsRoot (so tests point it at a fixture tree)
// and every program run goes through platform::ProcessRunner. The doctor never calls NVML: the
// caller passes what NVML said in NvmlFacts, which keeps this layer testable without a driver.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "platform/fs_root.h"
#include "platform/process_runner.h"

namespace gw::doctor {

// In stack order, bottom up; renderText groups by this order.
enum class Layer {
  kHardware,
  kKernelDriver,
  kCudaDriver,
  kToolkit,
  kLibraries,
  kFramework,
  kApplication,  // --binary: the application's own GPU code
  kContainer,    // container runtime, /dev/shm, clock: beside the stack
};

enum class Verdict { kPass, kWarn, kFail, kSkip };

std::string_view layerName(Layer layer);        // "hardware", "kernel-driver", ...
std::string_view layerTitle(Layer layer);       // "Hardware", "Kernel driver", ...
std::string_view verdictName(Verdict verdict);  // "pass", "warn", "fail", "skip"

struct Check {
  std::string id;  // stable, e.g. "kernel.nouveau"
  Layer layer = Layer::kHardware;
  Verdict verdict = Verdict::kSkip;
  std::string title;    // what is checked, one line
  std::string found;    // what was found, one line
  std::string fix;      // commands or steps; may hold several lines
  std::string explain;  // why it matters / what the symptom looks like
};

// What NVML said, gathered by the caller (the doctor does not call NVML itself).
struct NvmlFacts {
  bool library_loaded = false;
  std::string load_error;
  int init_return = -1;  // nvmlReturn_t from nvmlInit_v2, 0 = success, -1 = not attempted
  std::string init_error;
  std::string driver_version;   // "550.54.15"
  int cuda_driver_version = 0;  // 12040 = CUDA 12.4
  std::string nvml_version;     // "12.550.54.15"
  struct Gpu {
    int index = 0;
    std::string name, pci_bus_id;  // "00000000:3B:00.0"
    int cc_major = 0, cc_minor = 0;
    bool persistence_mode = false;
    bool display_active = false;
    int minor = -1;  // its device node is /dev/nvidia<minor> (not <index>); -1: NVML did not say
  };
  std::vector<Gpu> gpus;
};

struct DoctorInput {
  const platform::FsRoot& root;
  platform::ProcessRunner& runner;
  NvmlFacts nvml;
  // PATH, LD_LIBRARY_PATH, CUDA_HOME, CUDA_VISIBLE_DEVICES, NVIDIA_VISIBLE_DEVICES,
  // KUBERNETES_SERVICE_HOST, ... read from the process environment by the caller. Programs the
  // doctor runs (nvcc, python3) get these variables too.
  std::map<std::string, std::string> env;
  // --binary PATH: a host path (not resolved under root), checked for GPU code (fatbin).
  std::string binary;
};

// Runs every check; never throws for machine state (a missing file is a finding, not an error).
std::vector<Check> runDoctor(const DoctorInput& input);

// Text report grouped by layer. utf8=false prints PASS/WARN/FAIL/SKIP instead of the symbols.
std::string renderText(const std::vector<Check>& checks, bool color, bool utf8 = true);
// True when LC_ALL / LC_CTYPE / LANG (first set, in that order) names a UTF-8 locale.
bool localeIsUtf8(const std::map<std::string, std::string>& env);
// {"checks":[{id,layer,verdict,title,found,fix,explain}], "summary":{pass,warn,fail,skip,
//  exit_code,first_failing_layer}}
nlohmann::json toJson(const std::vector<Check>& checks);
// CLI policy: 0 everything passed or was skipped, 1 at least one warning, 2 at least one failure.
int exitCodeFor(const std::vector<Check>& checks);

}  // namespace gw::doctor
