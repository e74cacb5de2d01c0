// CUDA driver layer (what the driver supports), toolkit layer (what is installed and what PATH,
// LD_LIBRARY_PATH and /usr/local/cuda select, R6/R9) and libraries layer (cuDNN, R7).
#include <algorithm>
#include <regex>
#include <set>

#include <nlohmann/json.hpp>

#include "doctor/cuda_toolkits.h"
#include "doctor/doctor_internal.h"
#include "platform/bounded_json.h"

namespace gw::doctor {

using namespace detail;

namespace {

platform::RunOptions runOptions(const DoctorInput& in) {
  platform::RunOptions o;
  o.env = in.env;
  o.timeout = std::chrono::milliseconds(15000);
  return o;
}

std::string nvccVersionOf(const DoctorInput& in, const std::string& nvcc_host_path, std::string* full,
                          std::string* line) {
  auto r = in.runner.run({in.root.path(nvcc_host_path), "--version"}, runOptions(in));
  if (r.exit_code != 0) return "";
  return nvccRelease(r.out, full, line);
}

Toolkit inspectToolkitDir(const DoctorInput& in, const std::string& dir) {
  Toolkit t;
  t.path = dir;
  t.has_nvcc = in.root.exists(dir + "/bin/nvcc");
  if (auto data = in.root.readFile(dir + "/version.json")) {
    const auto parsed = platform::parseBounded(*data);
    const nlohmann::json j = parsed ? *parsed : nlohmann::json();
    if (j.is_object() && j.contains("cuda") && j["cuda"].is_object() && j["cuda"].contains("version") &&
        j["cuda"]["version"].is_string()) {
      t.full_version = j["cuda"]["version"].get<std::string>();
      t.version_source = "version.json";
    }
  }
  if (t.full_version.empty()) {
    if (auto line = in.root.readLine(dir + "/version.txt")) {  // "CUDA Version 11.0.228"
      static const std::regex kVer(R"((\d+\.\d+(?:\.\d+)?))");
      std::smatch m;
      if (std::regex_search(*line, m, kVer)) {
        t.full_version = m[1];
        t.version_source = "version.txt";
      }
    }
  }
  if (t.full_version.empty() && t.has_nvcc) {
    std::string full;
    if (!nvccVersionOf(in, dir + "/bin/nvcc", &full, nullptr).empty()) {
      t.full_version = full;
      t.version_source = "nvcc --version";
    }
  }
  if (t.full_version.empty()) {
    std::string name = basename(dir);
    if (startsWith(name, "cuda-") && !parseVersion(name.substr(5)).empty()) {
      t.full_version = name.substr(5);
      t.version_source = "directory name";
    }
  }
  t.version = t.full_version.empty() ? "" : majorMinor(t.full_version);
  return t;
}

Toolkit* toolkitAt(std::vector<Toolkit>& toolkits, const std::string& path) {
  for (auto& t : toolkits)
    if (t.path == path) return &t;
  return nullptr;
}

}  // namespace

std::vector<Toolkit> listToolkits(const DoctorInput& input) { return inspectToolkits(input).toolkits; }

ToolkitReport inspectToolkits(const DoctorInput& input) {
  ToolkitReport rep;
  const auto& root = input.root;
  if (auto names = root.listDir("/usr/local")) {
    for (const auto& n : *names) {
      const std::string p = "/usr/local/" + n;
      if (!startsWith(n, "cuda-") || !root.isDirectory(p)) continue;
      if (resolveLink(root, p) != p) continue;  // an alias of another directory
      rep.toolkits.push_back(inspectToolkitDir(input, p));
    }
  }
  auto& sel = rep.selection;
  if (root.exists("/usr/local/cuda")) {
    sel.default_link = resolveLink(root, "/usr/local/cuda");
    if (sel.default_link == "/usr/local/cuda" && root.isDirectory("/usr/local/cuda"))
      rep.toolkits.push_back(inspectToolkitDir(input, "/usr/local/cuda"));
    if (Toolkit* t = toolkitAt(rep.toolkits, sel.default_link)) t->is_default = true;
  }

  sel.path_nvcc = findOnPath(root, input.env, "nvcc");
  if (!sel.path_nvcc.empty()) {
    sel.path_nvcc_version = nvccVersionOf(input, sel.path_nvcc, nullptr, &sel.path_nvcc_output);
    const std::string real = resolveLink(root, sel.path_nvcc);
    const std::string dir = resolveLink(root, dirname(dirname(real)));
    if (Toolkit* t = toolkitAt(rep.toolkits, dir)) {
      t->selected_by_path = true;
      if (sel.path_nvcc_version.empty()) sel.path_nvcc_version = t->version;
    }
  }

  if (auto it = input.env.find("LD_LIBRARY_PATH"); it != input.env.end()) {
    for (const auto& entry : split(it->second, ':')) {
      if (entry.empty() || entry.front() != '/') continue;
      auto names = root.listDir(entry);
      if (!names) continue;
      std::string best;
      for (const auto& n : *names)
        if (startsWith(n, "libcudart.so") && (best.empty() || n.size() > best.size())) best = n;
      if (best.empty()) continue;
      sel.ld_cudart = entry + (entry.back() == '/' ? "" : "/") + best;
      const std::string suffix = best.size() > 13 ? best.substr(13) : "";  // after "libcudart.so."
      const std::string dir = resolveLink(root, dirname(resolveLink(root, entry)));
      Toolkit* t = toolkitAt(rep.toolkits, dir);
      if (t) t->selected_by_ld = true;
      if (parseVersion(suffix).size() >= 2) {
        sel.ld_cudart_version = majorMinor(suffix);
      } else if (t && !t->version.empty()) {
        sel.ld_cudart_version = t->version;
      } else {
        sel.ld_cudart_version = suffix;
      }
      break;
    }
  }
  std::sort(rep.toolkits.begin(), rep.toolkits.end(), [](const Toolkit& a, const Toolkit& b) {
    int c = compareVersions(a.full_version, b.full_version);
    return c != 0 ? c < 0 : a.path < b.path;
  });
  return rep;
}

std::string renderToolkitList(const ToolkitReport& report, int cuda_driver_version) {
  std::string out;
  const std::string drv = cudaVersionString(cuda_driver_version);
  if (report.toolkits.empty()) out += "No CUDA toolkit under /usr/local (cuda-*).\n";
  for (const auto& t : report.toolkits) {
    out += (t.is_default ? "* " : "  ") + t.path + "  " + (t.full_version.empty() ? "?" : t.full_version);
    std::vector<std::string> tags;
    if (t.is_default) tags.push_back("/usr/local/cuda");
    if (t.selected_by_path) tags.push_back("PATH");
    if (t.selected_by_ld) tags.push_back("LD_LIBRARY_PATH");
    if (!t.has_nvcc) tags.push_back("no nvcc");
    if (!drv.empty() && !t.version.empty() && compareVersions(t.version, drv) > 0)
      tags.push_back("newer than the driver supports (" + drv + ")");
    if (!tags.empty()) out += "  [" + join(tags, ", ") + "]";
    out += "\n";
  }
  const auto& s = report.selection;
  out += "\n/usr/local/cuda -> " + (s.default_link.empty() ? std::string("(absent)") : s.default_link) + "\n";
  out += "PATH nvcc        -> " +
         (s.path_nvcc.empty() ? std::string("(none)") : s.path_nvcc + " (" + s.path_nvcc_version + ")") + "\n";
  out += "LD_LIBRARY_PATH  -> " +
         (s.ld_cudart.empty() ? std::string("(no libcudart)") : s.ld_cudart + " (" + s.ld_cudart_version + ")") + "\n";
  if (!drv.empty())
    out += "Driver supports CUDA up to " + drv + " (the highest runtime it can run, not an installed toolkit)\n";
  return out;
}

Result<std::vector<std::string>> envLinesFor(std::string_view version, const DoctorInput& input) {
  auto toolkits = listToolkits(input);
  const Toolkit* match = nullptr;
  for (const auto& t : toolkits) {
    if (t.full_version == version || basename(t.path) == "cuda-" + std::string(version)) {
      match = &t;
      break;
    }
  }
  if (!match) {
    for (const auto& t : toolkits)
      if (t.version == version) match = &t;  // the newest patch release of that version
  }
  if (!match) {
    std::vector<std::string> have;
    for (const auto& t : toolkits) have.push_back(t.version + " (" + t.path + ")");
    return Status::Error("CUDA " + std::string(version) + " is not installed; installed: " +
                         (have.empty() ? std::string("none under /usr/local/cuda-*") : join(have, ", ")));
  }
  const std::string& p = match->path;
  std::vector<std::string> out = {
      "export PATH=" + p + "/bin:$PATH",
      "export LD_LIBRARY_PATH=" + p + "/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}",
      "export CUDA_HOME=" + p,
      "# or system-wide (every user and build that uses /usr/local/cuda):",
      "# sudo ln -sfn " + p + " /usr/local/cuda",
  };
  const std::string drv = cudaVersionString(input.nvml.cuda_driver_version);
  if (!drv.empty() && !match->version.empty() && majorOf(match->version) > majorOf(drv)) {
    out.push_back("# warning: the driver supports CUDA up to " + drv + "; CUDA " + match->version +
                  " programs will fail with \"CUDA driver version is insufficient for CUDA runtime version\"");
  }
  return out;
}

namespace detail {

const ToolkitReport& Context::toolkits() {
  if (!toolkit_cache) toolkit_cache = inspectToolkits(in);
  return *toolkit_cache;
}

void cudaDriverChecks(Context& ctx) {
  constexpr Layer kL = Layer::kCudaDriver;
  const auto& nvml = ctx.in.nvml;
  const std::string title = "NVIDIA driver answers (NVML)";
  if (!nvml.library_loaded) {
    ctx.add("cuda_driver.nvml", kL, Verdict::kFail, title,
            "libnvidia-ml.so.1 not loaded" + (nvml.load_error.empty() ? std::string() : ": " + nvml.load_error),
            ctx.wsl
                ? "Update the Windows NVIDIA driver; WSL maps its libraries into /usr/lib/wsl/lib."
                : "Install the NVIDIA driver's userspace (e.g. nvidia-utils-550-server / nvidia-driver-550) or, in a "
                  "container,\nstart it with the NVIDIA runtime (`docker run --gpus all`), which mounts the "
                  "driver libraries.",
            "nvidia-smi and every CUDA program need the driver's userspace libraries.");
  } else if (nvml.init_return != 0) {
    std::string fix;
    switch (nvml.init_return) {
      case 18:
        fix = "See kernel.version_match: reboot, or reload the nvidia kernel module.";
        break;
      case 9:
        fix = "Load the kernel module: sudo modprobe nvidia (see the kernel driver checks).";
        break;
      case 4:
        fix = "Run as root or check the permissions of /dev/nvidiactl and /dev/nvidia*.";
        break;
      default:
        fix = "dmesg | grep -iE 'nvrm|xid'   # the kernel log tells why the driver did not initialise";
    }
    ctx.add("cuda_driver.nvml", kL, Verdict::kFail, title,
            "nvmlInit failed: " + nvmlReturnName(nvml.init_return) +
                (nvml.init_error.empty() ? std::string() : " (" + nvml.init_error + ")"),
            fix,
            nvml.init_return == 18 ? "\"Failed to initialize NVML: Driver/library version mismatch\"."
                                   : "The driver library is present but the driver does not answer.");
  } else if (nvml.gpus.empty()) {
    ctx.add("cuda_driver.nvml", kL, Verdict::kFail, title,
            "driver " + nvml.driver_version + " answers but reports no GPU (\"No devices were found\")",
            ctx.container ? "Start the container with GPUs: docker run --gpus all (Kubernetes: request nvidia.com/gpu)."
                          : "See the hardware checks: are the GPUs on the PCI bus and bound to the nvidia driver?",
            "\"No devices were found\": the driver runs but manages no GPU.");
  } else {
    ctx.add("cuda_driver.nvml", kL, Verdict::kPass, title,
            "driver " + nvml.driver_version + (nvml.nvml_version.empty() ? "" : ", NVML " + nvml.nvml_version) + ", " +
                std::to_string(nvml.gpus.size()) + " GPU" + (nvml.gpus.size() == 1 ? "" : "s"));
  }

  const std::string drv = cudaVersionString(nvml.cuda_driver_version);
  if (drv.empty()) {
    ctx.add("cuda_driver.version", kL, Verdict::kSkip, "Highest CUDA version the driver supports",
            "unknown (NVML did not answer)");
    return;
  }
  const auto& rep = ctx.toolkits();
  std::vector<std::string> installed;
  for (const auto& t : rep.toolkits) installed.push_back(t.version);
  ctx.add("cuda_driver.version", kL, Verdict::kPass, "Highest CUDA version the driver supports",
          "CUDA " + drv + " (driver " + nvml.driver_version +
              "); installed toolkits: " + (installed.empty() ? std::string("none") : join(installed, ", ")),
          "",
          "The \"CUDA Version: " + drv +
              "\" that nvidia-smi prints is the newest CUDA runtime this driver can run, not "
              "an installed toolkit;\nthe toolkit (nvcc, libcudart) is separate, see the toolkit checks and `gpuwarden "
              "cuda "
              "list`.");
}

void toolkitChecks(Context& ctx) {
  constexpr Layer kL = Layer::kToolkit;
  const auto& rep = ctx.toolkits();
  const auto& sel = rep.selection;
  const std::string drv = cudaVersionString(ctx.in.nvml.cuda_driver_version);

  // --- toolkit.installed ---
  std::vector<std::string> list;
  for (const auto& t : rep.toolkits) list.push_back((t.version.empty() ? "?" : t.version) + " (" + t.path + ")");
  if (!rep.toolkits.empty()) {
    ctx.add("toolkit.installed", kL, Verdict::kPass, "CUDA toolkits installed",
            join(list, ", ") + "; /usr/local/cuda -> " + (sel.default_link.empty() ? "(absent)" : sel.default_link));
  } else if (!sel.path_nvcc.empty()) {
    ctx.add("toolkit.installed", kL, Verdict::kPass, "CUDA toolkits installed",
            "none under /usr/local; PATH has " + sel.path_nvcc + " (" + sel.path_nvcc_version + ")");
  } else {
    ctx.add("toolkit.installed", kL, Verdict::kWarn, "CUDA toolkits installed",
            "none (no /usr/local/cuda-*, no nvcc on PATH)",
            "Only needed to compile CUDA code: install a toolkit the driver supports (CUDA <= " +
                (drv.empty() ? std::string("the driver's version") : drv) +
                ") with the runfile and --toolkit --toolkitpath=/usr/local/cuda-X.Y,\nor the cuda-toolkit-X-Y package.",
            "PyTorch/Paddle wheels bundle their own CUDA runtime and do not need a system toolkit.");
  }

  // --- toolkit.nvcc: what PATH selects ---
  if (!sel.path_nvcc.empty()) {
    ctx.add("toolkit.nvcc", kL, Verdict::kPass, "nvcc selected by PATH",
            sel.path_nvcc + ": " + (sel.path_nvcc_output.empty() ? "version unknown" : sel.path_nvcc_output));
  } else if (!rep.toolkits.empty()) {
    const Toolkit& pick = [&]() -> const Toolkit& {
      for (const auto& t : rep.toolkits)
        if (t.is_default) return t;
      return rep.toolkits.back();
    }();
    ctx.add("toolkit.nvcc", kL, Verdict::kWarn, "nvcc selected by PATH",
            "no nvcc on PATH although toolkits are installed",
            "export PATH=" + pick.path + "/bin:$PATH   # or: eval \"$(gpuwarden cuda env " + pick.version + ")\"",
            "\"nvcc: command not found\" with CUDA installed: the toolkit's bin directory is not on PATH.");
  } else {
    ctx.add("toolkit.nvcc", kL, Verdict::kSkip, "nvcc selected by PATH", "no nvcc on PATH and no toolkit installed");
  }

  // --- toolkit.ld_library_path ---
  if (!sel.ld_cudart.empty()) {
    ctx.add("toolkit.ld_library_path", kL, Verdict::kPass, "libcudart selected by LD_LIBRARY_PATH",
            sel.ld_cudart + " (CUDA " + sel.ld_cudart_version + ")");
  } else {
    ctx.add("toolkit.ld_library_path", kL, Verdict::kSkip, "libcudart selected by LD_LIBRARY_PATH",
            ctx.env("LD_LIBRARY_PATH").empty() ? "LD_LIBRARY_PATH not set (the loader uses /etc/ld.so.conf.d)"
                                               : "no libcudart in LD_LIBRARY_PATH");
  }

  // --- toolkit.consistency: PATH, /usr/local/cuda, LD_LIBRARY_PATH, CUDA_HOME agree ---
  struct Sel {
    std::string what, version;
  };
  std::vector<Sel> sels;
  auto versionOfDir = [&](const std::string& dir) -> std::string {
    for (const auto& t : rep.toolkits)
      if (t.path == dir) return t.version;
    return "";
  };
  if (!sel.path_nvcc_version.empty()) sels.push_back({"PATH nvcc", sel.path_nvcc_version});
  if (!sel.default_link.empty()) {
    std::string v = versionOfDir(sel.default_link);
    if (!v.empty()) sels.push_back({"/usr/local/cuda", v});
  }
  if (!sel.ld_cudart_version.empty()) sels.push_back({"LD_LIBRARY_PATH libcudart", sel.ld_cudart_version});
  if (std::string home = ctx.env("CUDA_HOME"); !home.empty()) {
    std::string v = versionOfDir(resolveLink(ctx.in.root, home));
    if (!v.empty()) sels.push_back({"CUDA_HOME", v});
  }
  std::vector<std::string> desc;
  std::set<std::string> distinct;
  for (const auto& s : sels) {
    desc.push_back(s.what + " " + s.version);
    distinct.insert(parseVersion(s.version).size() >= 2 ? majorMinor(s.version) : s.version);
  }
  // A bare major from libcudart.so.12 agrees with any 12.x.
  bool disagree = false;
  for (const auto& a : sels)
    for (const auto& b : sels) {
      auto va = parseVersion(a.version), vb = parseVersion(b.version);
      if (va.empty() || vb.empty()) continue;
      if (va[0] != vb[0] || (va.size() >= 2 && vb.size() >= 2 && va[1] != vb[1])) disagree = true;
    }
  if (sels.size() < 2) {
    ctx.add("toolkit.consistency", kL, Verdict::kSkip, "PATH, /usr/local/cuda, LD_LIBRARY_PATH and CUDA_HOME agree",
            sels.empty() ? "nothing selected" : "only " + desc[0]);
  } else if (disagree) {
    const std::string want = !sel.path_nvcc_version.empty() ? sel.path_nvcc_version : sels.front().version;
    std::string fix = "Pick one toolkit for this shell: eval \"$(gpuwarden cuda env " + want + ")\"";
    for (const auto& t : rep.toolkits)
      if (t.version == want) {
        fix += "\nor make it the default: sudo ln -sfn " + t.path + " /usr/local/cuda";
        break;
      }
    ctx.add("toolkit.consistency", kL, Verdict::kWarn, "PATH, /usr/local/cuda, LD_LIBRARY_PATH and CUDA_HOME agree",
            join(desc, ", "), fix,
            "Builds that use /usr/local/cuda or CUDA_HOME (CMake, setup.py extensions) then compile against another "
            "toolkit than the nvcc you run, and link errors or \"undefined symbol\" follow.");
  } else {
    ctx.add("toolkit.consistency", kL, Verdict::kPass, "PATH, /usr/local/cuda, LD_LIBRARY_PATH and CUDA_HOME agree",
            join(desc, ", "));
  }

  // --- toolkit.driver_compat: the selected toolkit is not newer than the driver ---
  const std::string title = "Selected toolkit supported by the driver";
  if (drv.empty()) {
    ctx.add("toolkit.driver_compat", kL, Verdict::kSkip, title, "driver's CUDA version unknown");
    return;
  }
  if (sels.empty()) {
    ctx.add("toolkit.driver_compat", kL, Verdict::kSkip, title, "no toolkit selected");
    return;
  }
  std::vector<std::string> too_new_major, too_new_minor;
  std::string newest;
  for (const auto& s : sels) {
    auto v = parseVersion(s.version);
    if (v.empty()) continue;
    if (v[0] > majorOf(drv))
      too_new_major.push_back(s.what + " " + s.version);
    else if (v.size() >= 2 && compareVersions(majorMinor(s.version), drv) > 0)
      too_new_minor.push_back(s.what + " " + s.version);
    if (newest.empty() || compareVersions(s.version, newest) > 0) newest = s.version;
  }
  std::vector<std::string> usable;
  for (const auto& t : rep.toolkits)
    if (!t.version.empty() && compareVersions(t.version, drv) <= 0) usable.push_back(t.version);
  std::string fix;
  const std::string need = minimumDriverFor(newest);
  fix = "Upgrade the driver to one that supports CUDA " + majorMinor(newest) +
        (need.empty() ? std::string() : " (driver >= " + need + ")");
  if (!usable.empty()) {
    fix += ",\nor use a toolkit the driver supports: eval \"$(gpuwarden cuda env " + usable.back() + ")\"";
  } else {
    fix += ",\nor install a toolkit <= " + drv + " (runfile --toolkit --toolkitpath=/usr/local/cuda-X.Y)";
  }
  if (!too_new_major.empty()) {
    ctx.add("toolkit.driver_compat", kL, Verdict::kFail, title, join(too_new_major, ", ") + " > driver's CUDA " + drv,
            fix,
            "Programs built with it fail with \"CUDA driver version is insufficient for CUDA runtime version\" "
            "(cudaErrorInsufficientDriver): the driver is older than the runtime.");
  } else if (!too_new_minor.empty()) {
    ctx.add("toolkit.driver_compat", kL, Verdict::kWarn, title,
            join(too_new_minor, ", ") + " > driver's CUDA " + drv + " (same major)", fix,
            "Within a major release CUDA's minor-version compatibility lets most programs run on this driver, but PTX "
            "built by the newer toolkit cannot be JIT-compiled (\"the provided PTX was compiled with an unsupported "
            "toolchain\") and features of the newer minor release are unavailable.");
  } else {
    ctx.add("toolkit.driver_compat", kL, Verdict::kPass, title, join(desc, ", ") + " <= driver's CUDA " + drv);
  }
}

namespace {

struct CudnnHeader {
  std::string path;
  std::string version;  // "8.9.7"
  int major = 0;
  int cuda_major = -1;
  std::string cuda_source;
};

int cudaMajorInPath(const std::string& path) {
  static const std::regex kCuda(R"(cuda[-_]?(\d+))");
  std::smatch m;
  if (std::regex_search(path, m, kCuda)) return std::stoi(m[1]);
  return -1;
}

bool endsWithInstalled(const std::string& status_line) {
  const std::string s = trim(status_line);
  return s.size() >= 10 && s.substr(s.size() - 10) == " installed";
}

// From /var/lib/dpkg/status: libcudnn8 "8.9.7.29-1+cuda12.2", or libcudnn9-cuda-12.
int cudaMajorFromDpkg(const platform::FsRoot& root, int cudnn_major, std::string* source) {
  auto data = root.readFile("/var/lib/dpkg/status", 64 << 20);
  if (!data) return -1;
  std::string pkg;
  bool installed = true;
  for (const auto& l : lines(*data)) {
    if (startsWith(l, "Package: ")) {
      pkg = trim(l.substr(9));
      installed = true;
    }
    // "Status: install ok installed"; removed packages keep "deinstall ok config-files".
    if (startsWith(l, "Status: ")) installed = endsWithInstalled(l);
    if (!installed || !startsWith(pkg, "libcudnn" + std::to_string(cudnn_major))) continue;
    if (auto from_name = cudaMajorInPath(pkg); from_name >= 0) {
      *source = "dpkg package " + pkg;
      return from_name;
    }
    if (startsWith(l, "Version: ")) {
      static const std::regex kPlus(R"(\+cuda(\d+))");
      std::smatch m;
      if (std::regex_search(l, m, kPlus)) {
        *source = "dpkg " + pkg + " " + trim(l.substr(9));
        return std::stoi(m[1]);
      }
    }
  }
  return -1;
}

int cudaMajorFromLibraries(const platform::FsRoot& root, std::string* source) {
  std::vector<std::string> dirs = {"/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/local/lib"};
  for (const auto& d : std::vector<std::string>(dirs)) {
    if (auto names = root.listDir(d)) {
      for (const auto& n : *names) {
        // cuDNN 9 debs: /usr/lib/x86_64-linux-gnu/libcudnn/cuda-12/ ...
        if (n == "libcudnn" || startsWith(n, "cudnn")) {
          if (auto sub = root.listDir(d + "/" + n))
            for (const auto& s : *sub) dirs.push_back(d + "/" + n + "/" + s);
        }
      }
    }
  }
  for (const auto& d : dirs) {
    auto names = root.listDir(d);
    if (!names) continue;
    for (const auto& n : *names) {
      if (!startsWith(n, "libcudnn")) continue;
      int m = cudaMajorInPath(d + "/" + n);
      if (m >= 0) {
        *source = d + "/" + n;
        return m;
      }
    }
  }
  return -1;
}

}  // namespace

void libraryChecks(Context& ctx) {
  constexpr Layer kL = Layer::kLibraries;
  const auto& root = ctx.in.root;
  const auto& rep = ctx.toolkits();
  const auto& sel = rep.selection;

  // The toolkit cuDNN must match: PATH's nvcc, else /usr/local/cuda, else the only one installed.
  std::string tk_version = sel.path_nvcc_version;
  std::string tk_dir;
  for (const auto& t : rep.toolkits)
    if (t.selected_by_path) tk_dir = t.path;
  if (tk_version.empty())
    for (const auto& t : rep.toolkits)
      if (t.is_default) {
        tk_version = t.version;
        tk_dir = t.path;
      }
  if (tk_version.empty() && rep.toolkits.size() == 1) {
    tk_version = rep.toolkits[0].version;
    tk_dir = rep.toolkits[0].path;
  }

  std::vector<std::string> include_dirs;
  if (!tk_dir.empty()) include_dirs.push_back(tk_dir + "/include");
  include_dirs.push_back("/usr/include");
  include_dirs.push_back("/usr/include/x86_64-linux-gnu");
  include_dirs.push_back("/usr/include/aarch64-linux-gnu");
  for (const auto& t : rep.toolkits)
    if (t.path != tk_dir) include_dirs.push_back(t.path + "/include");

  std::vector<CudnnHeader> found;
  std::set<std::string> seen;
  static const std::regex kDefine(R"(#define\s+CUDNN_(MAJOR|MINOR|PATCHLEVEL)\s+(\d+))");
  for (const auto& dir : include_dirs) {
    for (const char* name : {"cudnn_version.h", "cudnn_version_v9.h", "cudnn_version_v8.h", "cudnn.h"}) {
      const std::string p = dir + "/" + name;
      auto data = root.readFile(p);
      if (!data) continue;
      int major = -1, minor = 0, patch = 0;
      for (std::sregex_iterator it(data->begin(), data->end(), kDefine), end; it != end; ++it) {
        const std::string key = (*it)[1];
        const int v = std::stoi((*it)[2]);
        if (key == "MAJOR")
          major = v;
        else if (key == "MINOR")
          minor = v;
        else
          patch = v;
      }
      if (major < 0) continue;
      const std::string real = resolveLink(root, dir);
      if (!seen.insert(real + "/" + std::to_string(major)).second) break;
      CudnnHeader h;
      h.path = p;
      h.major = major;
      h.version = std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
      h.cuda_major = cudaMajorInPath(real);
      if (h.cuda_major >= 0) {
        h.cuda_source = "installed in " + real;
        for (const auto& t : rep.toolkits)
          if (t.path == real + "/.." || real == t.path + "/include") {
            h.cuda_major = majorOf(t.version);
            h.cuda_source = "installed in toolkit " + t.path;
          }
      }
      if (h.cuda_major < 0) h.cuda_major = cudaMajorFromDpkg(root, major, &h.cuda_source);
      if (h.cuda_major < 0) h.cuda_major = cudaMajorFromLibraries(root, &h.cuda_source);
      found.push_back(std::move(h));
      break;  // one header per directory
    }
  }

  const std::string title = "cuDNN present and built for the selected CUDA";
  if (found.empty()) {
    ctx.add("lib.cudnn", kL, Verdict::kSkip, title, "no cudnn_version.h found (PyTorch wheels bundle their own cuDNN)");
    return;
  }
  std::vector<std::string> desc;
  for (const auto& h : found)
    desc.push_back("cuDNN " + h.version + " (" + h.path +
                   (h.cuda_major >= 0 ? ", for CUDA " + std::to_string(h.cuda_major) + " from " + h.cuda_source : "") +
                   ")");
  const CudnnHeader& primary = found.front();
  const int tk_major = majorOf(tk_version);
  const bool primary_in_other_toolkit =
      !tk_dir.empty() && startsWith(primary.path, "/usr/local/cuda") && !startsWith(primary.path, tk_dir + "/");
  if (tk_major >= 0 && primary.cuda_major >= 0 && primary.cuda_major != tk_major) {
    ctx.add("lib.cudnn", kL, Verdict::kFail, title,
            join(desc, "; ") + " but the selected toolkit is CUDA " + tk_version,
            (primary.major >= 9
                 ? "sudo apt-get install libcudnn9-cuda-" + std::to_string(tk_major) +
                       "   # cuDNN 9 packages are per CUDA major"
                 : "Install the libcudnn" + std::to_string(primary.major) + " build for CUDA " +
                       std::to_string(tk_major) + " (package version ending in +cuda" + std::to_string(tk_major) +
                       ".x: `apt-cache policy libcudnn" + std::to_string(primary.major) + "`)") +
                "\nor, for Python: pip install nvidia-cudnn-cu" + std::to_string(tk_major) + "; or switch to a CUDA " +
                std::to_string(primary.cuda_major) + " toolkit.",
            "cuDNN is built for one CUDA major release; with another the library fails to load or reports "
            "CUDNN_STATUS_NOT_INITIALIZED / \"cuDNN version incompatibility\".");
  } else if (primary_in_other_toolkit) {
    ctx.add("lib.cudnn", kL, Verdict::kWarn, title, join(desc, "; ") + "; none in the selected toolkit " + tk_dir,
            "Copy or install cuDNN for CUDA " + tk_version + " into " + tk_dir +
                " (include/ and lib64/), or install the "
                "system package for CUDA " +
                std::to_string(tk_major) + ".",
            "Builds against the selected toolkit will not find cuDNN.");
  } else {
    ctx.add("lib.cudnn", kL, Verdict::kPass, title,
            join(desc, "; ") + (tk_version.empty() ? "" : "; toolkit CUDA " + tk_version));
  }
}

}  // namespace detail
}  // namespace gw::doctor
