// Kernel driver layer: the nvidia module (loaded, built for this kernel, same version as the
// userspace library), device nodes, nouveau, X server, persistence mode, and WSL2.
#include <algorithm>
#include <cctype>
#include <regex>
#include <set>

#include "doctor/doctor_internal.h"

namespace gw::doctor::detail {
namespace {

constexpr Layer kL = Layer::kKernelDriver;

// "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 ..." -> "550.54.15"
std::string moduleVersion(const platform::FsRoot& root) {
  auto data = root.readFile("/proc/driver/nvidia/version");
  if (!data) return "";
  static const std::regex kVer(R"((\d+\.\d+(?:\.\d+)?))");
  for (const auto& l : lines(*data)) {
    if (!contains(l, "NVRM version")) continue;
    auto pos = l.find("Kernel Module");
    std::string rest = pos == std::string::npos ? l : l.substr(pos);
    std::smatch m;
    if (std::regex_search(rest, m, kVer)) return m[1];
  }
  return "";
}

// Version of the userspace driver from libnvidia-ml.so.<version> file names.
std::string userspaceLibraryVersion(const platform::FsRoot& root) {
  for (const char* dir : {"/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib", "/usr/lib/aarch64-linux-gnu"}) {
    auto names = root.listDir(dir);
    if (!names) continue;
    for (const auto& n : *names) {
      if (!startsWith(n, "libnvidia-ml.so.")) continue;
      std::string v = n.substr(std::string("libnvidia-ml.so.").size());
      if (parseVersion(v).size() >= 2) return v;
    }
  }
  return "";
}

bool hasNvidiaKo(const platform::FsRoot& root, const std::string& dir) {
  auto names = root.listDir(dir);
  if (!names) return false;
  return std::any_of(names->begin(), names->end(), [](const std::string& n) { return startsWith(n, "nvidia.ko"); });
}

// Where a distribution or DKMS puts nvidia.ko for kernel `release`; "" when none.
std::string moduleFileFor(const platform::FsRoot& root, const std::string& release) {
  const std::string base = "/lib/modules/" + release;
  for (const std::string sub :
       {"/updates/dkms", "/kernel/drivers/video", "/extra", "/updates", "/kernel/drivers/char"}) {
    if (hasNvidiaKo(root, base + sub)) return base + sub;
  }
  // Ubuntu's precompiled linux-modules-nvidia-*: /lib/modules/<rel>/kernel/nvidia-550/nvidia.ko
  if (auto names = root.listDir(base + "/kernel")) {
    for (const auto& n : *names)
      if (startsWith(n, "nvidia") && hasNvidiaKo(root, base + "/kernel/" + n)) return base + "/kernel/" + n;
  }
  // DKMS tree: /var/lib/dkms/nvidia/<version>/<release>/
  if (auto versions = root.listDir("/var/lib/dkms/nvidia")) {
    for (const auto& v : *versions) {
      const std::string d = "/var/lib/dkms/nvidia/" + v + "/" + release;
      if (root.isDirectory(d)) return d;
    }
  }
  return "";
}

std::vector<std::string> dkmsVersions(const platform::FsRoot& root) {
  std::vector<std::string> out;
  if (auto versions = root.listDir("/var/lib/dkms/nvidia")) {
    for (const auto& v : *versions)
      if (!parseVersion(v).empty() && !startsWith(v, "kernel-")) out.push_back(v);
  }
  return out;
}

// Kernel releases, other than `running`, that have an nvidia module.
std::vector<std::string> otherKernelsWithModule(const platform::FsRoot& root, const std::string& running) {
  std::vector<std::string> out;
  if (auto releases = root.listDir("/lib/modules")) {
    for (const auto& r : *releases)
      if (r != running && !moduleFileFor(root, r).empty()) out.push_back(r);
  }
  for (const auto& v : dkmsVersions(root)) {
    if (auto kernels = root.listDir("/var/lib/dkms/nvidia/" + v)) {
      for (const auto& k : *kernels) {
        if (k == running || k == "source" || k == "build" || parseVersion(k).empty()) continue;
        if (std::find(out.begin(), out.end(), k) == out.end()) out.push_back(k);
      }
    }
  }
  return out;
}

struct ModprobeConfig {
  std::vector<std::string> blacklist_lines;  // "file: line"
  std::vector<std::string> modeset_lines;
  std::vector<std::string> cmdline_blacklist;  // the kernel command line words that blacklist it
  std::vector<std::string> cmdline_modeset;    // "nouveau.modeset=0"
};

// Where kmod's modprobe reads its configuration, highest precedence first (modprobe.d(5), kmod
// 33+): a file in an earlier directory hides a file of the same name in a later one (a link to
// /dev/null in /etc masks a vendor's file), whatever the two contain.
constexpr const char* kModprobeDirs[] = {"/etc/modprobe.d", "/run/modprobe.d", "/usr/local/lib/modprobe.d",
                                         "/usr/lib/modprobe.d", "/lib/modprobe.d"};

// "modprobe.blacklist=a,nouveau,b" names nouveau; "nouveau_x" or "nouveaux" do not.
bool listsModule(std::string_view csv, std::string_view module) {
  for (const auto& m : split(csv, ','))
    if (trim(m) == module) return true;
  return false;
}

ModprobeConfig readModprobe(const platform::FsRoot& root) {
  ModprobeConfig cfg;
  std::set<std::string> taken;  // file names already read from a directory of higher precedence
  for (const char* dir : kModprobeDirs) {
    auto names = root.listDir(dir);
    if (!names) continue;
    std::vector<std::string> sorted(names->begin(), names->end());
    std::sort(sorted.begin(), sorted.end());
    for (const auto& n : sorted) {
      // kmod's rule: hidden files are skipped, and a name needs something before ".conf".
      if (n.size() < 6 || n[0] == '.' || n.substr(n.size() - 5) != ".conf") continue;
      if (!taken.insert(n).second) continue;  // hidden by the file of that name above
      const std::string file = std::string(dir) + "/" + n;
      auto data = root.readFile(file);
      if (!data) continue;
      // A '\' at the end of a line continues it on the next one.
      std::vector<std::string> joined;
      bool continued = false;
      for (const auto& raw : lines(*data)) {
        std::string part = raw;
        const bool more = !part.empty() && part.back() == '\\';
        if (more) part.pop_back();
        if (continued && !joined.empty())
          joined.back() += " " + part;
        else
          joined.push_back(part);
        continued = more;
      }
      for (const auto& raw : joined) {
        std::string l = trim(raw);
        if (l.empty() || l[0] == '#') continue;
        auto f = split(l, ' ');
        std::vector<std::string> words;
        for (auto& w : f)
          if (!trim(w).empty()) words.push_back(trim(w));
        if (words.size() >= 2 && words[0] == "blacklist" && words[1] == "nouveau") {
          cfg.blacklist_lines.push_back(file + ": " + l);
        }
        if (words.size() >= 3 && words[0] == "options" && words[1] == "nouveau") {
          for (std::size_t i = 2; i < words.size(); ++i)
            if (words[i] == "modeset=0") cfg.modeset_lines.push_back(file + ": " + l);
        }
        // "install nouveau /bin/false" also keeps it from loading.
        if (words.size() >= 3 && words[0] == "install" && words[1] == "nouveau" &&
            (contains(words[2], "false") || contains(words[2], "true"))) {
          cfg.blacklist_lines.push_back(file + ": " + l);
        }
      }
    }
  }
  // The kernel command line: modprobe reads modprobe.blacklist= from /proc/cmdline, the kernel
  // itself refuses every module in module_blacklist=, and nouveau.modeset=0 is the option's
  // command-line form.
  std::string cmdline = root.readLine("/proc/cmdline").value_or("");
  for (const auto& raw : split(cmdline, ' ')) {
    const std::string w = trim(raw);
    for (const char* key : {"modprobe.blacklist=", "module_blacklist="}) {
      if (startsWith(w, key) && listsModule(std::string_view(w).substr(std::string_view(key).size()), "nouveau"))
        cfg.cmdline_blacklist.push_back(w);
    }
    if (w == "nouveau.modeset=0") cfg.cmdline_modeset.push_back(w);
  }
  return cfg;
}

int expectedGpuCount(const Context& ctx) {
  int n = static_cast<int>(ctx.pci.size());
  if (ctx.nvmlOk()) n = std::max(n, static_cast<int>(ctx.in.nvml.gpus.size()));
  return n;
}

void wslChecks(Context& ctx) {
  const auto& root = ctx.in.root;
  std::vector<std::string> linux_driver;
  if (moduleLoaded(ctx.modules, "nvidia")) linux_driver.push_back("nvidia kernel module loaded (/proc/modules)");
  if (root.exists("/proc/driver/nvidia/version")) linux_driver.push_back("/proc/driver/nvidia/version exists");
  if (!ctx.kernel_release.empty()) {
    std::string f = moduleFileFor(root, ctx.kernel_release);
    if (!f.empty()) linux_driver.push_back("nvidia.ko in " + f);
  }
  for (const char* lib : {"/usr/lib/x86_64-linux-gnu/libcuda.so.1", "/usr/lib64/libcuda.so.1"}) {
    if (root.exists(lib)) {
      std::string target = resolveLink(root, lib);
      if (!startsWith(target, "/usr/lib/wsl/"))
        linux_driver.push_back(std::string(lib) + " (a Linux driver's libcuda)");
    }
  }
  if (!linux_driver.empty()) {
    ctx.add("kernel.wsl", kL, Verdict::kFail, "WSL2: no Linux NVIDIA driver inside WSL",
            "WSL2 (" + ctx.wsl_evidence + ") with a Linux driver installed: " + join(linux_driver, "; "),
            "Never install a Linux driver inside WSL. Remove it, e.g. `sudo apt-get purge 'nvidia-driver-*' "
            "'libnvidia-*' 'nvidia-dkms-*'`\n(or `sudo sh NVIDIA-Linux-*.run --uninstall`), then `wsl --shutdown` "
            "from Windows and start WSL again.\nInside WSL install only the CUDA toolkit (the WSL-Ubuntu "
            "`cuda-toolkit-X-Y` package, which carries no driver) or PyTorch wheels.",
            "Under WSL2 the Windows NVIDIA driver serves the GPU through /dev/dxg and /usr/lib/wsl/lib/libcuda.so; "
            "a Linux driver inside WSL shadows or breaks it.");
  } else {
    ctx.add("kernel.wsl", kL, Verdict::kPass, "WSL2: no Linux NVIDIA driver inside WSL",
            "WSL2 (" + ctx.wsl_evidence + "), the Windows driver serves the GPU", "",
            "Under WSL2 the Windows NVIDIA driver serves the GPU; the Linux kernel-module checks do not apply.");
  }
  const bool libcuda = root.exists("/usr/lib/wsl/lib/libcuda.so") || root.exists("/usr/lib/wsl/lib/libcuda.so.1");
  const bool dxg = root.exists("/dev/dxg");
  if (libcuda && dxg) {
    ctx.add("kernel.wsl_libcuda", kL, Verdict::kPass, "WSL2: Windows driver's libcuda and /dev/dxg",
            "/usr/lib/wsl/lib/libcuda.so and /dev/dxg present");
  } else {
    std::vector<std::string> missing;
    if (!libcuda) missing.push_back("/usr/lib/wsl/lib/libcuda.so");
    if (!dxg) missing.push_back("/dev/dxg");
    ctx.add("kernel.wsl_libcuda", kL, Verdict::kFail, "WSL2: Windows driver's libcuda and /dev/dxg",
            "missing: " + join(missing, ", "),
            "Install or update the NVIDIA driver on the Windows side (a WSL-capable Game Ready/Studio/Data Center "
            "driver),\nrun `wsl --update` and `wsl --shutdown` from Windows, then reopen WSL.",
            "The Windows driver maps its CUDA libraries into /usr/lib/wsl/lib and the GPU into /dev/dxg.");
  }
  for (const char* id : {"kernel.module", "kernel.module_build", "kernel.version_match", "kernel.device_nodes",
                         "kernel.nouveau", "kernel.persistence"}) {
    ctx.add(id, kL, Verdict::kSkip, std::string("Linux kernel-module check ") + id, "not applicable under WSL2");
  }
}

}  // namespace

void driverChecks(Context& ctx) {
  if (ctx.wsl) {
    wslChecks(ctx);
    // An X server check is meaningless too: the Windows desktop owns the display.
    return;
  }
  const auto& root = ctx.in.root;
  const auto& nvml = ctx.in.nvml;
  const bool loaded = moduleLoaded(ctx.modules, "nvidia");
  const bool modules_readable = root.exists("/proc/modules");

  // --- kernel.module: loaded? ---
  if (!modules_readable) {
    ctx.add("kernel.module", kL, Verdict::kSkip, "nvidia kernel module loaded", "/proc/modules not readable");
  } else if (loaded) {
    std::vector<std::string> extra;
    for (const char* m : {"nvidia_uvm", "nvidia_modeset", "nvidia_drm", "nvidia_peermem"})
      if (moduleLoaded(ctx.modules, m)) extra.push_back(m);
    ctx.add("kernel.module", kL, Verdict::kPass, "nvidia kernel module loaded",
            "nvidia" + (extra.empty() ? std::string() : " (+ " + join(extra, ", ") + ")"));
  } else if (ctx.container) {
    ctx.add("kernel.module", kL, Verdict::kFail, "nvidia kernel module loaded",
            "nvidia is not in /proc/modules (the host kernel's module list)",
            "Load the driver on the host (`sudo modprobe nvidia` there); a container cannot load kernel modules.",
            "Containers share the host kernel: the module must be loaded on the host.");
  } else {
    ctx.add("kernel.module", kL, Verdict::kFail, "nvidia kernel module loaded", "nvidia is not in /proc/modules",
            "sudo modprobe nvidia   # then: dmesg | grep -iE 'nvrm|nvidia'\n"
            "If modprobe says the module is not found, it is not built for this kernel (see kernel.module_build).",
            "Without the kernel module nvidia-smi prints \"No devices were found\" or \"NVIDIA-SMI has failed because "
            "it couldn't communicate with the NVIDIA driver\".");
  }

  // --- kernel.version_match: module vs userspace library (R12) ---
  const std::string kmod = moduleVersion(root);
  std::string userspace = nvml.driver_version;
  std::string userspace_src = "NVML";
  if (userspace.empty()) {
    userspace = userspaceLibraryVersion(root);
    userspace_src = "libnvidia-ml.so file name";
  }
  const std::string mismatch_fix =
      "Reboot (simplest), or reload the module without rebooting: stop every GPU user (nvidia-persistenced, "
      "dcgm, Xorg,\ncontainers), then `sudo rmmod nvidia_uvm nvidia_drm nvidia_modeset nvidia && sudo modprobe "
      "nvidia`.\nContainers started before the upgrade must be restarted too.";
  const std::string mismatch_explain =
      "\"Failed to initialize NVML: Driver/library version mismatch\": the kernel module was upgraded (or "
      "downgraded) under running userspace, so the loaded module and the libraries disagree.";
  if (nvml.init_return == 18) {
    ctx.add("kernel.version_match", kL, Verdict::kFail, "Kernel module and userspace driver versions match",
            "NVML init returned LIB_RM_VERSION_MISMATCH (18); kernel module " + (kmod.empty() ? "?" : kmod) +
                ", userspace " + (userspace.empty() ? "?" : userspace + " (" + userspace_src + ")"),
            mismatch_fix, mismatch_explain);
  } else if (!kmod.empty() && !userspace.empty() && kmod != userspace) {
    ctx.add("kernel.version_match", kL, Verdict::kFail, "Kernel module and userspace driver versions match",
            "kernel module " + kmod + " != userspace " + userspace + " (" + userspace_src + ")", mismatch_fix,
            mismatch_explain);
  } else if (!kmod.empty() && !userspace.empty()) {
    ctx.add("kernel.version_match", kL, Verdict::kPass, "Kernel module and userspace driver versions match",
            "kernel module " + kmod + " = " + userspace_src + " " + userspace);
  } else if (loaded && kmod.empty()) {
    ctx.add("kernel.version_match", kL, Verdict::kWarn, "Kernel module and userspace driver versions match",
            "module loaded but /proc/driver/nvidia/version is unreadable", "dmesg | grep -i nvrm",
            "The module normally publishes its version there once it has initialised.");
  } else {
    ctx.add("kernel.version_match", kL, Verdict::kSkip, "Kernel module and userspace driver versions match",
            kmod.empty() ? "no module version (/proc/driver/nvidia/version)" : "no userspace driver version known");
  }

  // --- kernel.module_build: built for the running kernel (DKMS) ---
  if (ctx.container) {
    ctx.add("kernel.module_build", kL, Verdict::kSkip, "nvidia module built for the running kernel",
            "in a container: the host builds and loads the module");
  } else if (ctx.kernel_release.empty()) {
    ctx.add("kernel.module_build", kL, Verdict::kSkip, "nvidia module built for the running kernel",
            "/proc/sys/kernel/osrelease not readable");
  } else {
    const std::string rel = ctx.kernel_release;
    const std::string here = moduleFileFor(root, rel);
    const auto others = otherKernelsWithModule(root, rel);
    const auto dkms = dkmsVersions(root);
    const std::string dkms_fix = "sudo apt-get install linux-headers-" + rel +
                                 "   # or: sudo dnf install kernel-devel-" + rel + "\n" +
                                 (dkms.empty() ? std::string("sudo dkms autoinstall -k ") + rel
                                               : "sudo dkms install nvidia/" + dkms.back() + " -k " + rel) +
                                 "\nsudo modprobe nvidia && nvidia-smi";
    if (!here.empty()) {
      ctx.add("kernel.module_build", kL, Verdict::kPass, "nvidia module built for the running kernel",
              "kernel " + rel + ": " + here);
    } else if (!others.empty()) {
      ctx.add("kernel.module_build", kL, Verdict::kFail, "nvidia module built for the running kernel",
              "running kernel " + rel + " has no nvidia module; built only for: " + join(others, ", "), dkms_fix,
              "The kernel was upgraded and DKMS did not rebuild the driver for it (missing headers, or a build "
              "error in /var/lib/dkms/nvidia/*/build/make.log): after the reboot the GPUs vanish.");
    } else if (loaded) {
      ctx.add("kernel.module_build", kL, Verdict::kWarn, "nvidia module built for the running kernel",
              "module loaded, but no nvidia.ko found under /lib/modules/" + rel + " or /var/lib/dkms",
              "If the driver came from the .run installer without DKMS, reinstall it with --dkms so kernel upgrades "
              "rebuild it:\nsudo sh NVIDIA-Linux-x86_64-<version>.run --dkms",
              "The next kernel upgrade may leave the node without a driver.");
    } else {
      ctx.add("kernel.module_build", kL, Verdict::kFail, "nvidia module built for the running kernel",
              "no nvidia kernel module installed for kernel " + rel,
              "Install the driver, e.g. `sudo apt-get install nvidia-driver-550-server` (Ubuntu: `sudo "
              "ubuntu-drivers install --gpgpu`),\nor the NVIDIA .run installer with --dkms; then reboot.",
              "No driver is installed for this kernel.");
    }
  }

  // --- kernel.device_nodes ---
  if (!loaded && !ctx.container) {
    ctx.add("kernel.device_nodes", kL, Verdict::kSkip, "/dev/nvidia* device nodes", "module not loaded");
  } else {
    std::vector<std::string> missing, present;
    if (root.exists("/dev/nvidiactl"))
      present.push_back("nvidiactl");
    else
      missing.push_back("/dev/nvidiactl");
    int numbered = 0;
    if (auto names = root.listDir("/dev")) {
      for (const auto& n : *names) {
        if (startsWith(n, "nvidia") && n.size() > 6 &&
            std::all_of(n.begin() + 6, n.end(), [](unsigned char c) { return std::isdigit(c); }))
          ++numbered;
      }
    }
    const int expected = expectedGpuCount(ctx);
    if (numbered > 0) present.push_back(std::to_string(numbered) + " x nvidiaN");
    // Each GPU's own node is /dev/nvidia<minor>; the driver numbers them in probe order, which need
    // not be NVML's index order, so a count of nodes can pass while a GPU's node is missing.
    const bool minors_known =
        ctx.nvmlOk() && !nvml.gpus.empty() &&
        std::all_of(nvml.gpus.begin(), nvml.gpus.end(), [](const NvmlFacts::Gpu& g) { return g.minor >= 0; });
    if (minors_known) {
      std::vector<std::string> nodes;
      for (const auto& g : nvml.gpus) {
        const std::string node = "/dev/nvidia" + std::to_string(g.minor);
        if (!root.exists(node)) nodes.push_back(node + " (GPU " + std::to_string(g.index) + ")");
      }
      if (!nodes.empty())
        missing.push_back(join(nodes, ", ") + " (" + std::to_string(nvml.gpus.size() - nodes.size()) + " of " +
                          std::to_string(nvml.gpus.size()) + " GPUs have their node)");
      if (numbered < expected && nodes.empty())
        missing.push_back("/dev/nvidiaN (" + std::to_string(numbered) + " of " + std::to_string(expected) + ")");
    } else if (numbered < std::max(1, expected)) {
      missing.push_back("/dev/nvidiaN (" + std::to_string(numbered) + " of " + std::to_string(std::max(1, expected)) +
                        ")");
    }
    bool uvm = root.exists("/dev/nvidia-uvm");
    if (uvm)
      present.push_back("nvidia-uvm");
    else
      missing.push_back("/dev/nvidia-uvm");
    if (missing.empty()) {
      ctx.add("kernel.device_nodes", kL, Verdict::kPass, "/dev/nvidia* device nodes", join(present, ", "));
    } else if (ctx.container) {
      ctx.add("kernel.device_nodes", kL, Verdict::kFail, "/dev/nvidia* device nodes", "missing " + join(missing, ", "),
              "Start the container with the NVIDIA runtime: `docker run --gpus all ...` (Kubernetes: request "
              "nvidia.com/gpu),\nso the device nodes are passed in.",
              "The container runtime injects the device nodes; without them CUDA sees no device.");
    } else {
      ctx.add("kernel.device_nodes", kL, Verdict::kFail, "/dev/nvidia* device nodes", "missing " + join(missing, ", "),
              "sudo nvidia-modprobe -u -c=0   # creates nvidiactl, nvidia0 and nvidia-uvm (or run nvidia-smi once as "
              "root)\n"
              "sudo modprobe nvidia-uvm\n"
              "To keep them across reboots enable nvidia-persistenced: sudo systemctl enable --now nvidia-persistenced",
              "CUDA opens /dev/nvidiactl, /dev/nvidiaN and /dev/nvidia-uvm; without nvidia-uvm CUDA fails with "
              "\"unknown error\" / cudaErrorUnknown.");
    }
  }

  // --- kernel.nouveau ---
  const ModprobeConfig mp = readModprobe(root);
  const std::string blacklist_fix =
      "printf 'blacklist nouveau\\noptions nouveau modeset=0\\n' | sudo tee /etc/modprobe.d/blacklist-nouveau.conf\n"
      "sudo update-initramfs -u   # RHEL/Fedora: sudo dracut --force\n"
      "sudo reboot";
  if (moduleLoaded(ctx.modules, "nouveau")) {
    ctx.add("kernel.nouveau", kL, Verdict::kFail, "nouveau not loaded and blacklisted",
            "nouveau is loaded" + std::string(mp.blacklist_lines.empty() && mp.cmdline_blacklist.empty()
                                                  ? " and not blacklisted"
                                                  : " although blacklisted (initramfs not updated?)"),
            blacklist_fix, "The open-source nouveau driver claims the GPU, so the nvidia module cannot bind to it.");
  } else if (ctx.container) {
    ctx.add("kernel.nouveau", kL, Verdict::kPass, "nouveau not loaded and blacklisted",
            "not loaded (blacklisting is the host's configuration)");
  } else if ((mp.blacklist_lines.empty() && mp.cmdline_blacklist.empty()) ||
             (mp.modeset_lines.empty() && mp.cmdline_modeset.empty())) {
    std::vector<std::string> missing;
    if (mp.blacklist_lines.empty() && mp.cmdline_blacklist.empty()) missing.push_back("blacklist nouveau");
    if (mp.modeset_lines.empty() && mp.cmdline_modeset.empty()) missing.push_back("options nouveau modeset=0");
    ctx.add("kernel.nouveau", kL, Verdict::kWarn, "nouveau not loaded and blacklisted",
            "not loaded, but no modprobe.d file (/etc, /run, /usr/local/lib, /usr/lib, /lib) nor the kernel command "
            "line has: " +
                join(missing, ", "),
            blacklist_fix,
            "Without the blacklist, nouveau may load first after a driver or kernel update and take the GPU.");
  } else {
    std::vector<std::string> where = mp.blacklist_lines;
    for (const auto& w : mp.cmdline_blacklist) where.push_back("kernel command line: " + w);
    std::vector<std::string> modeset = mp.modeset_lines;
    for (const auto& w : mp.cmdline_modeset) modeset.push_back("kernel command line: " + w);
    ctx.add("kernel.nouveau", kL, Verdict::kPass, "nouveau not loaded and blacklisted",
            "not loaded; blacklisted in " + join(where, "; ") + "; modeset=0 in " + join(modeset, "; "));
  }

  // --- kernel.xserver: no X server on a compute node ---
  std::vector<std::string> xprocs;
  for (const auto& p : processNames(root))
    if (p == "Xorg" || p == "X" || p == "Xwayland" || p == "gnome-shell")
      if (std::find(xprocs.begin(), xprocs.end(), p) == xprocs.end()) xprocs.push_back(p);
  std::vector<std::string> display_gpus;
  for (const auto& g : nvml.gpus)
    if (g.display_active) display_gpus.push_back("GPU " + std::to_string(g.index));
  if (!xprocs.empty() || !display_gpus.empty()) {
    std::vector<std::string> what;
    if (!xprocs.empty()) what.push_back("running: " + join(xprocs, ", "));
    if (!display_gpus.empty()) what.push_back("display active on " + join(display_gpus, ", "));
    ctx.add("kernel.xserver", kL, Verdict::kWarn, "No X server / display on the compute GPUs", join(what, "; "),
            "sudo systemctl set-default multi-user.target && sudo systemctl isolate multi-user.target\n"
            "(or stop the display manager: sudo systemctl disable --now gdm3 / lightdm / sddm)",
            "An X server holds GPU memory, enables the kernel watchdog (long kernels get killed) and blocks module "
            "reloads and GPU resets.");
  } else {
    ctx.add("kernel.xserver", kL, Verdict::kPass, "No X server / display on the compute GPUs", "none");
  }

  // --- kernel.persistence ---
  if (!ctx.nvmlOk() || nvml.gpus.empty()) {
    ctx.add("kernel.persistence", kL, Verdict::kSkip, "Persistence mode on", "no GPU reported by NVML");
  } else {
    std::vector<std::string> off;
    for (const auto& g : nvml.gpus)
      if (!g.persistence_mode) off.push_back(std::to_string(g.index));
    if (off.empty()) {
      ctx.add("kernel.persistence", kL, Verdict::kPass, "Persistence mode on", "on for all GPUs");
    } else {
      bool daemon = false;
      for (const auto& p : processNames(root)) daemon = daemon || p == "nvidia-persiste";  // comm is 15 chars
      ctx.add("kernel.persistence", kL, Verdict::kWarn, "Persistence mode on",
              "off on GPU " + join(off, ", ") + (daemon ? " (nvidia-persistenced is running)" : ""),
              "sudo systemctl enable --now nvidia-persistenced   # preferred\n"
              "or: sudo nvidia-smi -pm 1",
              "Without persistence the driver tears the GPU state down when the last client exits: every CUDA start "
              "pays seconds of initialisation, and settings such as clocks and ECC checks are re-applied.");
    }
  }
}

}  // namespace gw::doctor::detail
