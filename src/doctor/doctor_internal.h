// Shared helpers of the doctor's check files; not part of the public API.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "doctor/cuda_toolkits.h"
#include "doctor/doctor.h"

namespace gw::doctor::detail {

// ---- strings and versions ----
std::string trim(std::string_view s);
std::vector<std::string> split(std::string_view s, char sep, bool keep_empty = false);
std::vector<std::string> lines(std::string_view s);
bool startsWith(std::string_view s, std::string_view prefix);
bool contains(std::string_view s, std::string_view needle);
bool icontains(std::string_view s, std::string_view needle);
std::string toLower(std::string_view s);
std::string join(const std::vector<std::string>& parts, std::string_view sep);
std::string basename(std::string_view path);
std::string dirname(std::string_view path);
// "12.1.105" -> {12,1,105}; stops at the first non-numeric component.
std::vector<int> parseVersion(std::string_view v);
// Compares dotted versions numerically; missing components count as 0.
int compareVersions(std::string_view a, std::string_view b);
// "12.1.105" -> "12.1"
std::string majorMinor(std::string_view v);
int majorOf(std::string_view v);
// 12040 -> "12.4"
std::string cudaVersionString(int cuda_driver_version);
// "release 12.1, V12.1.105" in nvcc --version output -> "12.1"; full -> "12.1.105".
std::string nvccRelease(std::string_view output, std::string* full = nullptr, std::string* line = nullptr);
// Oldest Linux driver that supports a CUDA release ("12.4" -> "550.54.14"); "" when not in the table.
std::string minimumDriverFor(std::string_view cuda);
// NVML return code name ("LIB_RM_VERSION_MISMATCH").
std::string nvmlReturnName(int code);
// "00000000:3B:00.0" / "0000:3b:00.0" -> "0000:3b:00.0"
std::string normalizeBusId(std::string_view bus_id);

// ---- the machine, through FsRoot ----
// Follows symbolic links of the last component, inside the root; returns a host path.
std::string resolveLink(const platform::FsRoot& root, const std::string& path);
// First PATH entry holding `program` (host path), "" if none.
std::string findOnPath(const platform::FsRoot& root, const std::map<std::string, std::string>& env,
                       const std::string& program);
// Names from /proc/*/comm.
std::vector<std::string> processNames(const platform::FsRoot& root);
// Loaded module names (first field of each /proc/modules line).
std::vector<std::string> loadedModules(const platform::FsRoot& root);
bool moduleLoaded(const std::vector<std::string>& modules, std::string_view name);

struct PciGpu {
  std::string address;    // "0000:3b:00.0"
  std::string device_id;  // "0x20b0"
  std::string klass;      // "0x030200"
  std::string driver;     // bound driver ("nvidia", "nouveau", "vfio-pci"), "" when unbound
};

// Everything the check files share while a doctor run is in progress.
struct Context {
  const DoctorInput& in;
  std::vector<Check> checks;

  bool wsl = false;
  std::string wsl_evidence;
  bool container = false;
  std::string container_evidence;
  std::string kernel_release;
  std::vector<std::string> modules;
  std::vector<PciGpu> pci;
  bool pci_readable = false;
  std::optional<ToolkitReport> toolkit_cache;

  explicit Context(const DoctorInput& input) : in(input) {}
  // inspectToolkits(in), computed once per run (it runs nvcc --version).
  const ToolkitReport& toolkits();
  std::string env(const std::string& name) const;
  bool hasEnv(const std::string& name) const;
  bool nvmlOk() const { return in.nvml.library_loaded && in.nvml.init_return == 0; }
  Check& add(std::string id, Layer layer, Verdict verdict, std::string title, std::string found, std::string fix = {},
             std::string explain = {});
  const Check* find(std::string_view id) const;
  // The lowest failing check at or below `layer` (nullptr if none).
  const Check* firstFailureBelow(Layer layer) const;
};

void detectEnvironment(Context& ctx);  // WSL, container, kernel release, modules

void hardwareChecks(Context& ctx);
void driverChecks(Context& ctx);
void cudaDriverChecks(Context& ctx);
void toolkitChecks(Context& ctx);
void libraryChecks(Context& ctx);
void frameworkChecks(Context& ctx);
void containerChecks(Context& ctx);

}  // namespace gw::doctor::detail
