// CUDA toolkits installed side by side (R9): `gpuwarden cuda list` and `gpuwarden cuda env X.Y`.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "doctor/doctor.h"

namespace gw::doctor {

struct Toolkit {
  std::string path;               // host path, e.g. "/usr/local/cuda-12.1"
  std::string version;            // "12.1" (major.minor)
  std::string full_version;       // "12.1.105" when known
  std::string version_source;     // "version.json", "version.txt", "nvcc --version", "directory name"
  bool has_nvcc = false;          // bin/nvcc exists
  bool is_default = false;        // /usr/local/cuda points here
  bool selected_by_path = false;  // the nvcc that PATH selects lives here
  bool selected_by_ld = false;    // the libcudart that LD_LIBRARY_PATH selects lives here
};

// What the environment selects, besides the list.
struct ToolkitSelection {
  std::string default_link;       // where /usr/local/cuda points (resolved), "" if absent
  std::string path_nvcc;          // host path of the nvcc PATH selects, "" if none
  std::string path_nvcc_version;  // "12.1" from its --version, "" if unknown
  std::string path_nvcc_output;   // the release line of its --version output
  std::string ld_cudart;          // host path of the libcudart LD_LIBRARY_PATH selects, "" if none
  std::string ld_cudart_version;  // "12.1" or "12" (from the file name / its toolkit)
};

struct ToolkitReport {
  std::vector<Toolkit> toolkits;  // sorted by version
  ToolkitSelection selection;
};

// Lists /usr/local/cuda-* (and /usr/local/cuda when it is a real directory), sorted by version.
std::vector<Toolkit> listToolkits(const DoctorInput& input);
// The list plus what /usr/local/cuda, PATH and LD_LIBRARY_PATH select.
ToolkitReport inspectToolkits(const DoctorInput& input);
// Text for `gpuwarden cuda list`.
std::string renderToolkitList(const ToolkitReport& report, int cuda_driver_version);

// Shell lines that switch this shell to toolkit `version` ("12.1" or "12.1.105"):
//   export PATH=/usr/local/cuda-12.1/bin:$PATH
//   export LD_LIBRARY_PATH=/usr/local/cuda-12.1/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
//   export CUDA_HOME=/usr/local/cuda-12.1
//   # system-wide alternative ...: sudo ln -sfn /usr/local/cuda-12.1 /usr/local/cuda
// Error (listing the installed versions) when that version is not installed.
Result<std::vector<std::string>> envLinesFor(std::string_view version, const DoctorInput& input);

}  // namespace gw::doctor
