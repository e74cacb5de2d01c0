// Builds fixture machine trees for the doctor tests: /proc, /sys, /dev, /etc, /usr/local ... in a
// temporary directory, plus the NVML facts and environment a caller would pass.
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>

#include "../support/temp_dir.h"
#include "doctor/doctor.h"
#include "platform/fs_root.h"
#include "platform/process_runner.h"

namespace gw::doctor::testing {

class Fixture {
 public:
  Fixture() : tmp_("gw-doctor"), dir_(tmp_.path()), root_(std::make_unique<platform::FsRoot>(dir_)) {}
  Fixture(const Fixture&) = delete;
  Fixture& operator=(const Fixture&) = delete;

  const std::string& dir() const { return dir_; }
  std::string host(const std::string& abs) const { return dir_ + abs; }
  const platform::FsRoot& root() const { return *root_; }

  void write(const std::string& abs, const std::string& content) {
    std::filesystem::create_directories(std::filesystem::path(host(abs)).parent_path());
    std::ofstream out(host(abs), std::ios::binary | std::ios::trunc);
    out << content;
  }
  void mkdir(const std::string& abs) { std::filesystem::create_directories(host(abs)); }
  void symlink(const std::string& target, const std::string& abs) {
    std::filesystem::create_directories(std::filesystem::path(host(abs)).parent_path());
    std::error_code ec;
    std::filesystem::remove(host(abs), ec);
    std::filesystem::create_symlink(target, host(abs));
  }
  void remove(const std::string& abs) {
    std::error_code ec;
    std::filesystem::remove_all(host(abs), ec);
  }
  // An executable shell script that prints canned output.
  void script(const std::string& abs, const std::string& body) {
    write(abs, "#!/bin/sh\n" + body);
    ::chmod(host(abs).c_str(), 0755);
  }

 private:
  testsupport::TempDir tmp_;  // first: removed last, after the root that reads it
  std::string dir_;
  std::unique_ptr<platform::FsRoot> root_;
};

// A machine: fixture tree + NVML facts + environment.
struct Machine {
  Fixture fx;
  NvmlFacts nvml;
  std::map<std::string, std::string> env;
  std::string binary;

  DoctorInput input() { return DoctorInput{fx.root(), platform::defaultProcessRunner(), nvml, env, binary}; }
  std::vector<Check> run() { return runDoctor(input()); }

  static std::string nvccScript(const std::string& full) {
    std::string mm = full.substr(0, full.find('.', full.find('.') + 1));
    return "echo 'nvcc: NVIDIA (R) Cuda compiler driver'\n"
           "echo 'Copyright (c) 2005-2024 NVIDIA Corporation'\n"
           "echo 'Cuda compilation tools, release " +
           mm + ", V" + full +
           "'\n"
           "echo 'Build cuda_" +
           mm + ".r" + mm + "/compiler.0_0'\n";
  }

  void addToolkit(const std::string& full, const std::string& how = "version.json") {
    std::string mm = full.substr(0, full.find('.', full.find('.') + 1));
    const std::string dir = "/usr/local/cuda-" + mm;
    if (how == "version.json") {
      fx.write(dir + "/version.json", "{\n  \"cuda\" : {\n    \"name\" : \"CUDA SDK\",\n    \"version\" : \"" + full +
                                          "\"\n  },\n  \"cuda_nvcc\" : {\"version\": \"" + full + "\"}\n}\n");
    } else if (how == "version.txt") {
      fx.write(dir + "/version.txt", "CUDA Version " + full + "\n");
    }
    fx.script(dir + "/bin/nvcc", nvccScript(full));
    fx.write(dir + "/lib64/libcudart.so." + full, "");
    fx.symlink("libcudart.so." + full, dir + "/lib64/libcudart.so." + mm.substr(0, mm.find('.')));
    fx.mkdir(dir + "/include");
  }

  void torch(const std::string& json) {
    fx.script("/usr/bin/python3",
              "case \"$2\" in\n"
              "  *torch*) echo '" +
                  json +
                  "' ;;\n"
                  "  *paddle*) echo \"ModuleNotFoundError: No module named 'paddle'\" >&2; exit 1 ;;\n"
                  "esac\n");
  }

  void pciGpu(const std::string& addr, const std::string& driver = "nvidia") {
    const std::string d = "/sys/bus/pci/devices/" + addr;
    fx.write(d + "/vendor", "0x10de\n");
    fx.write(d + "/device", "0x20b0\n");
    fx.write(d + "/class", "0x030200\n");
    if (driver.empty()) {
      fx.remove(d + "/driver");
    } else {
      fx.symlink("../../../bus/pci/drivers/" + driver, d + "/driver");
    }
  }

  void modules(const std::string& names) {  // space separated
    std::string content;
    std::string n;
    for (char c : names + " ") {
      if (c == ' ') {
        if (!n.empty()) content += n + " 56713216 26 - Live 0x0000000000000000 (POE)\n";
        n.clear();
      } else {
        n += c;
      }
    }
    fx.write("/proc/modules", content);
  }

  // A healthy bare-metal node: 2 x A100, driver 550.54.15 (CUDA 12.4), toolkit 12.1, cuDNN 8.9 for
  // CUDA 12, PyTorch cu121, docker with the NVIDIA toolkit, chrony.
  static std::unique_ptr<Machine> healthy() {
    auto m = std::make_unique<Machine>();
    auto& fx = m->fx;
    fx.write("/proc/sys/kernel/osrelease", "6.5.0-27-generic\n");
    fx.write("/proc/version",
             "Linux version 6.5.0-27-generic (buildd@lcy02-amd64-053) (gcc 12) #28~22.04.1-Ubuntu SMP\n");
    fx.write("/proc/cmdline", "BOOT_IMAGE=/vmlinuz-6.5.0-27-generic root=UUID=x ro quiet\n");
    m->modules("nvidia_uvm nvidia_drm nvidia_modeset nvidia drm");
    fx.write("/proc/driver/nvidia/version",
             "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024\n"
             "GCC version:  gcc version 12.3.0 (Ubuntu 12.3.0-1ubuntu1~22.04)\n");
    fx.write("/lib/modules/6.5.0-27-generic/updates/dkms/nvidia.ko.zst", "");
    fx.mkdir("/var/lib/dkms/nvidia/550.54.15/6.5.0-27-generic/x86_64/module");
    fx.mkdir("/var/lib/dkms/nvidia/550.54.15/source");
    m->pciGpu("0000:3b:00.0");
    m->pciGpu("0000:86:00.0");
    // Not GPUs: the card's audio function and an Intel device.
    fx.write("/sys/bus/pci/devices/0000:3b:00.1/vendor", "0x10de\n");
    fx.write("/sys/bus/pci/devices/0000:3b:00.1/class", "0x040300\n");
    fx.write("/sys/bus/pci/devices/0000:00:00.0/vendor", "0x8086\n");
    fx.write("/sys/bus/pci/devices/0000:00:00.0/class", "0x060000\n");
    for (const char* d : {"/dev/nvidiactl", "/dev/nvidia0", "/dev/nvidia1", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools"})
      fx.write(d, "");
    fx.mkdir("/dev/shm");
    fx.write("/proc/mounts",
             "sysfs /sys sysfs rw,nosuid,nodev,noexec,relatime 0 0\n"
             "tmpfs /dev/shm tmpfs rw,nosuid,nodev,size=65970112k,inode64 0 0\n");
    fx.write("/etc/modprobe.d/blacklist-nouveau.conf",
             "# added by the installer\nblacklist nouveau\noptions nouveau modeset=0\n");
    fx.write("/etc/modprobe.d/alsa-base.conf", "options snd-usb-audio index=-2\n");
    fx.write("/proc/1/comm", "systemd\n");
    fx.write("/proc/812/comm", "chronyd\n");
    fx.write("/proc/901/comm", "nvidia-persiste\n");
    fx.write("/proc/self/comm", "gpuwarden\n");
    m->addToolkit("12.1.105");
    fx.symlink("cuda-12.1", "/usr/local/cuda");
    fx.write("/usr/include/cudnn_version.h",
             "#ifndef CUDNN_VERSION_H_\n#define CUDNN_MAJOR 8\n#define CUDNN_MINOR 9\n#define CUDNN_PATCHLEVEL 7\n"
             "#define CUDNN_VERSION (CUDNN_MAJOR * 1000 + CUDNN_MINOR * 100 + CUDNN_PATCHLEVEL)\n#endif\n");
    fx.write("/var/lib/dpkg/status",
             "Package: libc6\nStatus: install ok installed\nVersion: 2.35-0ubuntu3.6\n\n"
             "Package: libcudnn8\nStatus: install ok installed\nArchitecture: amd64\nVersion: 8.9.7.29-1+cuda12.2\n\n");
    fx.write("/usr/lib/x86_64-linux-gnu/libcudnn.so.8.9.7", "");
    fx.write("/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.550.54.15", "");
    m->torch(R"({"version": "2.3.1+cu121", "cuda": "12.1", "available": true, "count": 2})");
    fx.write("/usr/bin/docker", "");
    fx.write("/usr/bin/nvidia-container-runtime", "");
    fx.write("/etc/nvidia-container-runtime/config.toml", "[nvidia-container-cli]\n");

    m->nvml.library_loaded = true;
    m->nvml.init_return = 0;
    m->nvml.driver_version = "550.54.15";
    m->nvml.cuda_driver_version = 12040;
    m->nvml.nvml_version = "12.550.54.15";
    m->nvml.gpus = {{0, "NVIDIA A100-SXM4-80GB", "00000000:3B:00.0", 8, 0, true, false},
                    {1, "NVIDIA A100-SXM4-80GB", "00000000:86:00.0", 8, 0, true, false}};
    m->env = {{"PATH", "/usr/local/cuda-12.1/bin:/usr/local/bin:/usr/bin:/bin"},
              {"LD_LIBRARY_PATH", "/usr/local/cuda-12.1/lib64"},
              {"LANG", "C.UTF-8"}};
    return m;
  }
};

inline const Check* findCheck(const std::vector<Check>& checks, const std::string& id) {
  for (const auto& c : checks)
    if (c.id == id) return &c;
  return nullptr;
}

}  // namespace gw::doctor::testing
