#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "doctor/cuda_toolkits.h"
#include "doctor/doctor.h"
#include "doctor/doctor_internal.h"
#include "fixture.h"

namespace gw::doctor {
namespace {

using testing::findCheck;
using testing::Machine;

// Asserts a check's layer and verdict, and returns it (reporting the whole text report on failure).
const Check& expectCheck(const std::vector<Check>& checks, const std::string& id, Layer layer, Verdict verdict) {
  static const Check kMissing{"missing", Layer::kHardware, Verdict::kSkip, "", "", "", ""};
  const Check* c = findCheck(checks, id);
  EXPECT_NE(c, nullptr) << "no check " << id << "\n" << renderText(checks, false);
  if (!c) return kMissing;
  EXPECT_EQ(layerName(c->layer), layerName(layer)) << id;
  EXPECT_EQ(verdictName(c->verdict), verdictName(verdict)) << id << ": " << c->found << "\n"
                                                           << renderText(checks, false);
  return *c;
}

#define EXPECT_HAS(haystack, needle)                                                                                \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos) << "expected to find [" << (needle) << "] in:\n" \
                                                                   << (haystack)

TEST(Doctor, HealthyHostPassesEverything) {
  auto m = Machine::healthy();
  auto checks = m->run();
  for (const auto& c : checks) {
    EXPECT_TRUE(c.verdict == Verdict::kPass || c.verdict == Verdict::kSkip)
        << c.id << " " << verdictName(c.verdict) << ": " << c.found << "\n"
        << renderText(checks, false);
  }
  EXPECT_EQ(exitCodeFor(checks), 0);
  expectCheck(checks, "hw.pci_devices", Layer::kHardware, Verdict::kPass);
  EXPECT_HAS(findCheck(checks, "hw.pci_devices")->found, "2 (0000:3b:00.0");
  expectCheck(checks, "kernel.pci_binding", Layer::kKernelDriver, Verdict::kPass);
  expectCheck(checks, "kernel.module", Layer::kKernelDriver, Verdict::kPass);
  expectCheck(checks, "kernel.version_match", Layer::kKernelDriver, Verdict::kPass);
  expectCheck(checks, "kernel.module_build", Layer::kKernelDriver, Verdict::kPass);
  expectCheck(checks, "kernel.device_nodes", Layer::kKernelDriver, Verdict::kPass);
  expectCheck(checks, "kernel.nouveau", Layer::kKernelDriver, Verdict::kPass);
  expectCheck(checks, "kernel.xserver", Layer::kKernelDriver, Verdict::kPass);
  expectCheck(checks, "kernel.persistence", Layer::kKernelDriver, Verdict::kPass);
  expectCheck(checks, "cuda_driver.nvml", Layer::kCudaDriver, Verdict::kPass);
  const auto& ver = expectCheck(checks, "cuda_driver.version", Layer::kCudaDriver, Verdict::kPass);
  EXPECT_HAS(ver.found, "CUDA 12.4");
  EXPECT_HAS(ver.explain, "not an installed toolkit");
  const auto& nvcc = expectCheck(checks, "toolkit.nvcc", Layer::kToolkit, Verdict::kPass);
  EXPECT_HAS(nvcc.found, "release 12.1, V12.1.105");
  expectCheck(checks, "toolkit.driver_compat", Layer::kToolkit, Verdict::kPass);
  expectCheck(checks, "toolkit.consistency", Layer::kToolkit, Verdict::kPass);
  const auto& ld = expectCheck(checks, "toolkit.ld_library_path", Layer::kToolkit, Verdict::kPass);
  EXPECT_HAS(ld.found, "libcudart.so.12.1.105");
  const auto& cudnn = expectCheck(checks, "lib.cudnn", Layer::kLibraries, Verdict::kPass);
  EXPECT_HAS(cudnn.found, "cuDNN 8.9.7");
  expectCheck(checks, "framework.pytorch", Layer::kFramework, Verdict::kPass);
  expectCheck(checks, "framework.paddle", Layer::kFramework, Verdict::kSkip);
  expectCheck(checks, "container.runtime", Layer::kContainer, Verdict::kPass);
  expectCheck(checks, "container.shm", Layer::kContainer, Verdict::kPass);
  expectCheck(checks, "container.clock", Layer::kContainer, Verdict::kPass);
  const auto& tz = expectCheck(checks, "container.timezone", Layer::kContainer, Verdict::kPass);
  EXPECT_EQ(tz.found, "/etc/localtime absent (the system uses UTC)");
  // Stack order in the result.
  for (std::size_t i = 1; i < checks.size(); ++i) EXPECT_LE(checks[i - 1].layer, checks[i].layer);
  // Within a layer, the order the checks ran in (the sort is stable): the report reads like the
  // path a driver takes (module loaded, right version, built for this kernel, nodes, rivals).
  const std::vector<std::string> order = {"kernel.pci_binding",  "kernel.module",         "kernel.version_match",
                                          "kernel.module_build", "kernel.device_nodes",   "kernel.nouveau",
                                          "kernel.xserver",      "kernel.persistence",    "toolkit.nvcc",
                                          "toolkit.consistency", "toolkit.driver_compat", "container.runtime",
                                          "container.shm",       "container.clock",       "container.timezone"};
  std::vector<std::string> seen;
  for (const auto& c : checks)
    if (std::find(order.begin(), order.end(), c.id) != order.end()) seen.push_back(c.id);
  EXPECT_EQ(seen, order);
}

TEST(Doctor, NouveauLoaded) {
  auto m = Machine::healthy();
  m->modules("nouveau drm_kms_helper drm");
  m->fx.remove("/etc/modprobe.d/blacklist-nouveau.conf");
  m->fx.remove("/proc/driver/nvidia");
  m->pciGpu("0000:3b:00.0", "nouveau");
  m->pciGpu("0000:86:00.0", "nouveau");
  m->nvml.init_return = 9;
  m->nvml.gpus.clear();
  auto checks = m->run();
  const auto& c = expectCheck(checks, "kernel.nouveau", Layer::kKernelDriver, Verdict::kFail);
  EXPECT_HAS(c.fix, "blacklist nouveau");
  EXPECT_HAS(c.fix, "options nouveau modeset=0");
  EXPECT_HAS(c.fix, "update-initramfs -u");
  const auto& b = expectCheck(checks, "kernel.pci_binding", Layer::kKernelDriver, Verdict::kFail);
  EXPECT_HAS(b.found, "nouveau");
  EXPECT_EQ(exitCodeFor(checks), 2);
}

TEST(Doctor, NouveauNotBlacklisted) {
  auto m = Machine::healthy();
  m->fx.write("/etc/modprobe.d/blacklist-nouveau.conf", "blacklist nouveau\n");
  auto checks = m->run();
  const auto& c = expectCheck(checks, "kernel.nouveau", Layer::kKernelDriver, Verdict::kWarn);
  EXPECT_HAS(c.found, "options nouveau modeset=0");
  EXPECT_EQ(c.found.find("blacklist nouveau"), std::string::npos) << c.found;
  EXPECT_HAS(c.fix, "update-initramfs -u");
  EXPECT_EQ(exitCodeFor(checks), 1);

  m->fx.remove("/etc/modprobe.d/blacklist-nouveau.conf");
  checks = m->run();
  const auto& c2 = expectCheck(checks, "kernel.nouveau", Layer::kKernelDriver, Verdict::kWarn);
  EXPECT_HAS(c2.found, "blacklist nouveau, options nouveau modeset=0");
}

TEST(Doctor, ModuleBuiltForAnotherKernel) {
  auto m = Machine::healthy();
  m->fx.write("/proc/sys/kernel/osrelease", "6.8.0-40-generic\n");
  m->modules("drm");
  m->fx.remove("/proc/driver/nvidia");
  m->pciGpu("0000:3b:00.0", "");
  m->pciGpu("0000:86:00.0", "");
  m->nvml.init_return = 9;
  m->nvml.init_error = "Driver Not Loaded";
  m->nvml.gpus.clear();
  auto checks = m->run();
  const auto& c = expectCheck(checks, "kernel.module_build", Layer::kKernelDriver, Verdict::kFail);
  EXPECT_HAS(c.found, "6.5.0-27-generic");
  EXPECT_HAS(c.fix, "sudo dkms install nvidia/550.54.15 -k 6.8.0-40-generic");
  EXPECT_HAS(c.fix, "linux-headers-6.8.0-40-generic");
  expectCheck(checks, "kernel.module", Layer::kKernelDriver, Verdict::kFail);
}

TEST(Doctor, DriverLibraryVersionMismatch) {
  auto m = Machine::healthy();
  m->nvml.driver_version = "550.90.07";
  auto checks = m->run();
  const auto& c = expectCheck(checks, "kernel.version_match", Layer::kKernelDriver, Verdict::kFail);
  EXPECT_HAS(c.found, "550.54.15 != userspace 550.90.07");
  EXPECT_HAS(c.fix, "Reboot");
  EXPECT_HAS(c.fix, "rmmod");
  EXPECT_HAS(c.explain, "Driver/library version mismatch");
}

TEST(Doctor, NvmlInitReturnsLibRmVersionMismatch) {
  auto m = Machine::healthy();
  m->nvml.init_return = 18;
  m->nvml.init_error = "Driver/library version mismatch";
  m->nvml.driver_version.clear();
  m->nvml.cuda_driver_version = 0;
  m->nvml.gpus.clear();
  m->fx.remove("/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.550.54.15");
  m->fx.write("/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.550.90.07", "");
  auto checks = m->run();
  const auto& c = expectCheck(checks, "kernel.version_match", Layer::kKernelDriver, Verdict::kFail);
  EXPECT_HAS(c.found, "LIB_RM_VERSION_MISMATCH (18)");
  EXPECT_HAS(c.found, "userspace 550.90.07");
  EXPECT_HAS(c.fix, "Reboot");
  const auto& n = expectCheck(checks, "cuda_driver.nvml", Layer::kCudaDriver, Verdict::kFail);
  EXPECT_HAS(n.fix, "kernel.version_match");
}

// What nvmlInit's failure code tells the operator to do: 9 (DRIVER_NOT_LOADED) load the module,
// 4 (NO_PERMISSION) fix the device permissions, 18 (LIB_RM_VERSION_MISMATCH) the version check;
// the codes beside them (3, 5, 8, 10, 17, 19) have no advice of their own and point at the kernel log.
TEST(Doctor, EachNvmlInitFailureCodeGetsItsOwnFix) {
  const std::string kLog = "dmesg | grep -iE 'nvrm|xid'   # the kernel log tells why the driver did not initialise";
  const std::vector<std::pair<int, std::string>> cases = {
      {9, "Load the kernel module: sudo modprobe nvidia (see the kernel driver checks)."},
      {4, "Run as root or check the permissions of /dev/nvidiactl and /dev/nvidia*."},
      {18, "See kernel.version_match: reboot, or reload the nvidia kernel module."},
      {3, kLog},
      {5, kLog},
      {8, kLog},
      {10, kLog},
      {17, kLog},
      {19, kLog},
  };
  for (const auto& [code, fix] : cases) {
    auto m = Machine::healthy();
    m->nvml.init_return = code;
    m->nvml.gpus.clear();
    auto checks = m->run();
    const auto& c = expectCheck(checks, "cuda_driver.nvml", Layer::kCudaDriver, Verdict::kFail);
    EXPECT_EQ(c.fix, fix) << code;
    EXPECT_EQ(c.explain, code == 18 ? "\"Failed to initialize NVML: Driver/library version mismatch\"."
                                    : "The driver library is present but the driver does not answer.")
        << code;
  }
}

// One GPU is "1 GPU", two are "2 GPUs".
TEST(Doctor, NvmlCountsOneGpuInTheSingular) {
  auto m = Machine::healthy();
  auto checks = m->run();
  EXPECT_EQ(expectCheck(checks, "cuda_driver.nvml", Layer::kCudaDriver, Verdict::kPass).found,
            "driver 550.54.15, NVML 12.550.54.15, 2 GPUs");
  m->nvml.gpus.resize(1);
  checks = m->run();
  EXPECT_EQ(expectCheck(checks, "cuda_driver.nvml", Layer::kCudaDriver, Verdict::kPass).found,
            "driver 550.54.15, NVML 12.550.54.15, 1 GPU");
}

// Older drivers have two-part versions (390.87); the soname link (libnvidia-ml.so.1) is no version.
TEST(Doctor, UserspaceVersionOfTwoPartsIsReadAndTheSonameLinkIsNot) {
  auto m = Machine::healthy();
  m->nvml.init_return = 18;
  m->nvml.init_error = "Driver/library version mismatch";
  m->nvml.driver_version.clear();
  m->nvml.cuda_driver_version = 0;
  m->nvml.gpus.clear();
  m->fx.remove("/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.550.54.15");
  m->fx.write("/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1", "");
  m->fx.write("/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.390.87", "");
  auto checks = m->run();
  const auto& c = expectCheck(checks, "kernel.version_match", Layer::kKernelDriver, Verdict::kFail);
  EXPECT_HAS(c.found, "userspace 390.87");
  EXPECT_EQ(c.found.find("userspace 1"), std::string::npos) << c.found;
}

TEST(Doctor, DevicesOnPciButNoModuleNoDevicesFound) {
  auto m = Machine::healthy();
  m->modules("drm");
  m->fx.remove("/proc/driver/nvidia");
  m->pciGpu("0000:3b:00.0", "");
  m->pciGpu("0000:86:00.0", "");
  m->nvml.init_return = 9;
  m->nvml.gpus.clear();
  m->nvml.cuda_driver_version = 0;
  m->torch(R"({"version": "2.3.1+cu121", "cuda": "12.1", "available": false, "count": 0})");
  auto checks = m->run();
  expectCheck(checks, "hw.pci_devices", Layer::kHardware, Verdict::kPass);
  const auto& b = expectCheck(checks, "kernel.pci_binding", Layer::kKernelDriver, Verdict::kFail);
  EXPECT_HAS(b.explain, "No devices were found");
  EXPECT_HAS(b.found, "not bound to any driver: 0000:3b:00.0, 0000:86:00.0");
  EXPECT_HAS(b.fix, "sudo modprobe nvidia");
  const auto& k = expectCheck(checks, "kernel.module", Layer::kKernelDriver, Verdict::kFail);
  EXPECT_HAS(k.fix, "sudo modprobe nvidia");
  expectCheck(checks, "kernel.device_nodes", Layer::kKernelDriver, Verdict::kSkip);
  // The framework names the lowest wrong layer.
  const auto& t = expectCheck(checks, "framework.pytorch", Layer::kFramework, Verdict::kFail);
  EXPECT_HAS(t.found, "the kernel-driver layer is wrong");
  auto j = toJson(checks);
  EXPECT_EQ(j["summary"]["first_failing_layer"], "kernel-driver");
}

TEST(Doctor, NvmlSeesFewerGpusThanPci) {
  auto m = Machine::healthy();
  m->nvml.gpus.pop_back();
  auto checks = m->run();
  const auto& c = expectCheck(checks, "hw.pci_devices", Layer::kHardware, Verdict::kFail);
  EXPECT_HAS(c.found, "missing: 0000:86:00.0");
  EXPECT_HAS(c.fix, "Xid 79");
}

std::unique_ptr<Machine> wslMachine() {
  auto m = std::make_unique<Machine>();
  auto& fx = m->fx;
  fx.write("/proc/sys/kernel/osrelease", "5.15.146.1-microsoft-standard-WSL2\n");
  fx.write("/proc/version", "Linux version 5.15.146.1-microsoft-standard-WSL2 (root@65c757a075e2) (gcc 11.2.0)\n");
  m->modules("");
  fx.write("/dev/dxg", "");
  fx.write("/usr/lib/wsl/lib/libcuda.so", "");
  fx.write("/usr/lib/wsl/lib/libcuda.so.1", "");
  fx.write("/usr/lib/wsl/lib/libnvidia-ml.so.1", "");
  fx.mkdir("/sys/bus/pci/devices");
  fx.write("/proc/mounts", "none /dev/shm tmpfs rw,nosuid,nodev,size=8g 0 0\n");
  fx.write("/run/systemd/timesync/synchronized", "");
  m->nvml.library_loaded = true;
  m->nvml.init_return = 0;
  m->nvml.driver_version = "552.22";
  m->nvml.cuda_driver_version = 12040;
  m->nvml.gpus = {{0, "NVIDIA GeForce RTX 4090", "00000000:01:00.0", 8, 9, false, true}};
  m->env = {{"PATH", "/usr/bin:/bin"}};
  return m;
}

TEST(Doctor, Wsl2WithoutLinuxDriver) {
  auto m = wslMachine();
  auto checks = m->run();
  const auto& w = expectCheck(checks, "kernel.wsl", Layer::kKernelDriver, Verdict::kPass);
  EXPECT_HAS(w.found, "WSL2");
  expectCheck(checks, "kernel.wsl_libcuda", Layer::kKernelDriver, Verdict::kPass);
  expectCheck(checks, "hw.pci_devices", Layer::kHardware, Verdict::kSkip);
  expectCheck(checks, "kernel.module", Layer::kKernelDriver, Verdict::kSkip);
  expectCheck(checks, "kernel.module_build", Layer::kKernelDriver, Verdict::kSkip);
  expectCheck(checks, "kernel.nouveau", Layer::kKernelDriver, Verdict::kSkip);
  expectCheck(checks, "kernel.persistence", Layer::kKernelDriver, Verdict::kSkip);
  expectCheck(checks, "cuda_driver.nvml", Layer::kCudaDriver, Verdict::kPass);
  for (const auto& c : checks) EXPECT_NE(c.verdict, Verdict::kFail) << c.id << ": " << c.found;
}

TEST(Doctor, Wsl2WithLinuxDriverInside) {
  auto m = wslMachine();
  m->modules("nvidia");
  m->fx.write("/lib/modules/5.15.146.1-microsoft-standard-WSL2/updates/dkms/nvidia.ko", "");
  m->fx.write("/usr/lib/x86_64-linux-gnu/libcuda.so.1", "");
  auto checks = m->run();
  const auto& w = expectCheck(checks, "kernel.wsl", Layer::kKernelDriver, Verdict::kFail);
  EXPECT_HAS(w.fix, "Never install a Linux driver inside WSL");
  EXPECT_HAS(w.found, "nvidia kernel module loaded");
  EXPECT_HAS(w.found, "libcuda.so.1");
}

TEST(Doctor, Wsl2WithoutWindowsDriverLibraries) {
  auto m = wslMachine();
  m->fx.remove("/usr/lib/wsl");
  auto checks = m->run();
  const auto& w = expectCheck(checks, "kernel.wsl_libcuda", Layer::kKernelDriver, Verdict::kFail);
  EXPECT_HAS(w.fix, "Windows");
}

TEST(Doctor, SmallShmInContainer) {
  auto m = Machine::healthy();
  m->fx.write("/.dockerenv", "");
  m->fx.write("/proc/mounts",
              "overlay / overlay rw 0 0\nshm /dev/shm tmpfs rw,nosuid,nodev,noexec,relatime,size=65536k 0 0\n");
  m->env["NVIDIA_VISIBLE_DEVICES"] = "all";
  auto checks = m->run();
  const auto& c = expectCheck(checks, "container.shm", Layer::kContainer, Verdict::kFail);
  EXPECT_HAS(c.found, "64 MiB");
  EXPECT_HAS(c.fix, "--shm-size=16g");
  EXPECT_HAS(c.fix, "--ipc=host");
  EXPECT_HAS(c.explain, "Bus error");
  expectCheck(checks, "container.gpu_access", Layer::kContainer, Verdict::kPass);
}

// The size is told in GiB of 2^30 bytes (what --shm-size and mount's size=g mean), and the 1 GiB
// floor is that same GiB: 1.5 GiB clears it.
TEST(Doctor, ShmSizeIsToldInGiBAndOneAndAHalfPasses) {
  auto m = Machine::healthy();  // size=65970112k: 62.91 GiB
  auto checks = m->run();
  EXPECT_EQ(expectCheck(checks, "container.shm", Layer::kContainer, Verdict::kPass).found, "62.9 GiB (/proc/mounts)");
  auto small = Machine::healthy();
  small->fx.write("/proc/mounts", "tmpfs /dev/shm tmpfs rw,nosuid,nodev,size=1536m 0 0\n");
  auto small_checks = small->run();
  EXPECT_EQ(expectCheck(small_checks, "container.shm", Layer::kContainer, Verdict::kPass).found,
            "1.5 GiB (/proc/mounts)");
}

// The floor is exactly 1 GiB: a mount of 1g passes and is told as "1.0 GiB", one MiB less fails
// and is told in MiB. Outside a container the same shortfall is a warning, not a failure.
TEST(Doctor, ShmOfExactlyOneGiBPassesAndOneMiBLessDoesNot) {
  auto exact = Machine::healthy();
  exact->fx.write("/proc/mounts", "tmpfs /dev/shm tmpfs rw,nosuid,nodev,size=1g 0 0\n");
  auto exact_checks = exact->run();
  EXPECT_EQ(expectCheck(exact_checks, "container.shm", Layer::kContainer, Verdict::kPass).found,
            "1.0 GiB (/proc/mounts)");

  auto below = Machine::healthy();
  below->fx.write("/proc/mounts", "tmpfs /dev/shm tmpfs rw,nosuid,nodev,size=1023m 0 0\n");
  auto below_checks = below->run();
  EXPECT_EQ(expectCheck(below_checks, "container.shm", Layer::kContainer, Verdict::kWarn).found,
            "1023 MiB (/proc/mounts) < 1 GiB");
}

// size= takes k, m, g and t suffixes of 2^10, 2^20, 2^30 and 2^40 bytes, or plain bytes. A number
// of more than 15 digits is not trusted (it could overflow once multiplied), so the size then comes
// from statvfs; 15 digits are still read.
TEST(Doctor, ShmSizeSuffixesAndTheFifteenDigitLimit) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"size=1t", "1024.0 GiB (/proc/mounts)"},
      {"size=1048576k", "1.0 GiB (/proc/mounts)"},
      {"size=1073741824", "1.0 GiB (/proc/mounts)"},
      {"size=999999999999999", "931322.6 GiB (/proc/mounts)"},
  };
  for (const auto& [option, found] : cases) {
    auto m = Machine::healthy();
    m->fx.write("/proc/mounts", "tmpfs /dev/shm tmpfs rw,nosuid,nodev," + option + " 0 0\n");
    auto checks = m->run();
    EXPECT_EQ(expectCheck(checks, "container.shm", Layer::kContainer, Verdict::kPass).found, found) << option;
  }
  auto m = Machine::healthy();
  m->fx.write("/proc/mounts", "tmpfs /dev/shm tmpfs rw,nosuid,nodev,size=1000000000000000 0 0\n");
  auto checks = m->run();
  const Check* c = findCheck(checks, "container.shm");
  ASSERT_NE(c, nullptr);
  EXPECT_HAS(c->found, "(statvfs)");
}

// A relative size ("50%" of RAM) says nothing in bytes, so the size comes from statvfs instead.
TEST(Doctor, RelativeShmSizeFallsBackToStatvfs) {
  auto m = Machine::healthy();
  m->fx.write("/proc/mounts", "tmpfs /dev/shm tmpfs rw,nosuid,nodev,size=50% 0 0\n");
  auto checks = m->run();
  const Check* c = findCheck(checks, "container.shm");
  ASSERT_NE(c, nullptr);
  EXPECT_HAS(c->found, "(statvfs)");
}

TEST(Doctor, ContainerWithGpusPassedIn) {
  auto m = Machine::healthy();
  m->fx.write("/proc/1/cgroup", "12:devices:/kubepods/burstable/pod1234/abcdef\n");
  m->env["NVIDIA_VISIBLE_DEVICES"] = "GPU-1234";
  m->fx.mkdir("/proc/driver/nvidia/gpus");
  auto checks = m->run();
  const auto& g = expectCheck(checks, "container.gpu_access", Layer::kContainer, Verdict::kPass);
  EXPECT_HAS(g.found, "kubepods");
  expectCheck(checks, "container.shm", Layer::kContainer, Verdict::kPass);
  expectCheck(checks, "kernel.module_build", Layer::kKernelDriver, Verdict::kSkip);
}

TEST(Doctor, ContainerWithoutGpus) {
  auto m = Machine::healthy();
  m->fx.write("/run/.containerenv", "");
  m->fx.remove("/proc/driver/nvidia");
  m->fx.remove("/dev/nvidiactl");
  auto checks = m->run();
  const auto& g = expectCheck(checks, "container.gpu_access", Layer::kContainer, Verdict::kFail);
  EXPECT_HAS(g.fix, "--gpus all");
}

TEST(Doctor, CpuOnlyPyTorch) {
  auto m = Machine::healthy();
  m->torch(R"({"version": "2.3.1+cpu", "cuda": null, "available": false, "count": 0})");
  auto checks = m->run();
  const auto& c = expectCheck(checks, "framework.pytorch", Layer::kFramework, Verdict::kFail);
  EXPECT_HAS(c.found, "CPU-only");
  EXPECT_HAS(c.fix, "pip install torch torchvision torchaudio --index-url https://download.pytorch.org/whl/cu124");
}

// conda's CPU build has no "+cpu" in its version: no CUDA version alone says CPU-only.
TEST(Doctor, CpuOnlyPyTorchWithoutTheCpuSuffix) {
  auto m = Machine::healthy();
  m->torch(R"({"version": "2.3.1", "cuda": null, "available": false, "count": 0})");
  auto checks = m->run();
  const auto& c = expectCheck(checks, "framework.pytorch", Layer::kFramework, Verdict::kFail);
  EXPECT_EQ(c.found, "torch 2.3.1, built for CUDA none, is_available()=False, 0 devices (a CPU-only build)");
}

// The real runner, asked for what the doctor asks and held to a short leash: each program's
// requested timeout is kept, and none is allowed more than `cap`, so a hanging fixture times out
// in a test's time while the doctor still believes it waited its full timeout.
class TimeoutRecordingRunner final : public platform::ProcessRunner {
 public:
  explicit TimeoutRecordingRunner(std::chrono::milliseconds cap) : cap_(cap) {}
  platform::RunResult run(const std::vector<std::string>& argv, const platform::RunOptions& options) override {
    requested[std::filesystem::path(argv.at(0)).filename().string()] = options.timeout;
    platform::RunOptions capped = options;
    capped.timeout = std::min(options.timeout, cap_);
    return platform::defaultProcessRunner().run(argv, capped);
  }
  std::map<std::string, std::chrono::milliseconds> requested;

 private:
  std::chrono::milliseconds cap_;
};

// nvcc gets 15 s to say its version; python 60 s to import a framework (torch's first import on a
// cold cache is slow), and a hang past it is reported with that figure.
TEST(Doctor, ProgramsRunUnderTheirOwnTimeoutsAndAHungImportSaysSo) {
  auto m = Machine::healthy();
  TimeoutRecordingRunner runner(std::chrono::milliseconds(5000));
  auto checks = runDoctor(DoctorInput{m->fx.root(), runner, m->nvml, m->env, m->binary});
  EXPECT_EQ(runner.requested.at("nvcc"), std::chrono::milliseconds(15000));
  EXPECT_EQ(runner.requested.at("python3"), std::chrono::milliseconds(60000));

  auto hung = Machine::healthy();
  hung->fx.script("/usr/bin/python3", "exec sleep 30\n");
  TimeoutRecordingRunner leash(std::chrono::milliseconds(200));
  auto slow = runDoctor(DoctorInput{hung->fx.root(), leash, hung->nvml, hung->env, hung->binary});
  const auto& t = expectCheck(slow, "framework.pytorch", Layer::kFramework, Verdict::kFail);
  EXPECT_EQ(t.found, "import torch failed: timed out after 60 s");
}

TEST(Doctor, PyTorchNotInstalledIsSkipped) {
  auto m = Machine::healthy();
  m->fx.script("/usr/bin/python3",
               "case \"$2\" in\n"
               "  *torch*) echo \"ModuleNotFoundError: No module named 'torch'\" >&2; exit 1 ;;\n"
               "  *paddle*) echo \"ModuleNotFoundError: No module named 'paddle'\" >&2; exit 1 ;;\n"
               "esac\n");
  auto checks = m->run();
  expectCheck(checks, "framework.pytorch", Layer::kFramework, Verdict::kSkip);
}

// An import that fails on a shared library says which layer to look at: cuDNN's check for
// libcudnn, the toolkit's for the CUDA runtime or cuBLAS (either one alone), none for another error.
TEST(Doctor, ATorchImportThatCannotLoadALibraryNamesItsCheck) {
  struct Case {
    const char* error;
    bool cudnn, toolkit;
  };
  for (const Case& c : {Case{"ImportError: libcudnn.so.9: cannot open shared object file", true, false},
                        Case{"ImportError: libcudart.so.12: cannot open shared object file", false, true},
                        Case{"ImportError: libcublas.so.12: cannot open shared object file", false, true},
                        Case{"ImportError: undefined symbol: ncclCommInitRankConfig", false, false}}) {
    auto m = Machine::healthy();
    m->fx.script("/usr/bin/python3",
                 std::string("case \"$2\" in\n  *torch*) echo \"") + c.error +
                     "\" >&2; exit 1 ;;\n  *paddle*) echo \"No module named 'paddle'\" >&2; exit 1 ;;\n"
                     "esac\n");
    auto checks = m->run();
    const auto& t = expectCheck(checks, "framework.pytorch", Layer::kFramework, Verdict::kFail);
    EXPECT_EQ(t.found, std::string("import torch failed: ") + c.error);
    EXPECT_EQ(t.fix.find("cuDNN cannot be loaded: see lib.cudnn.") != std::string::npos, c.cudnn) << c.error;
    EXPECT_EQ(t.fix.find("A CUDA library cannot be loaded: see the toolkit checks") != std::string::npos, c.toolkit)
        << c.error;
  }
}

TEST(Doctor, PyTorchBuiltForNewerCudaThanDriver) {
  auto m = Machine::healthy();
  m->nvml.driver_version = "520.61.05";
  m->nvml.cuda_driver_version = 11080;
  m->fx.write("/proc/driver/nvidia/version",
              "NVRM version: NVIDIA UNIX x86_64 Kernel Module  520.61.05  Thu Sep 29 2022\n");
  m->fx.remove("/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.550.54.15");
  auto checks = m->run();
  const auto& c = expectCheck(checks, "framework.pytorch", Layer::kFramework, Verdict::kFail);
  EXPECT_HAS(c.found, "the driver supports only CUDA 11.8");
  EXPECT_HAS(c.fix, "https://download.pytorch.org/whl/cu118");
  EXPECT_HAS(c.explain, "CUDA driver version is insufficient");
}

// Built for exactly the CUDA the driver supports is the normal case and passes; only a newer minor
// (minor-version compatibility, no PTX JIT) warns.
TEST(Doctor, PyTorchBuiltForTheDriversOwnCudaPassesANewerMinorWarns) {
  auto m = Machine::healthy();  // the driver supports CUDA 12.4
  m->torch(R"({"version": "2.4.0+cu124", "cuda": "12.4", "available": true, "count": 2})");
  auto checks = m->run();
  const auto& same = expectCheck(checks, "framework.pytorch", Layer::kFramework, Verdict::kPass);
  EXPECT_EQ(same.found, "torch 2.4.0+cu124, built for CUDA 12.4, is_available()=True, 2 devices");

  m->torch(R"({"version": "2.4.0+cu125", "cuda": "12.5", "available": true, "count": 2})");
  checks = m->run();
  const auto& newer = expectCheck(checks, "framework.pytorch", Layer::kFramework, Verdict::kWarn);
  EXPECT_EQ(newer.found,
            "torch 2.4.0+cu125, built for CUDA 12.5, is_available()=True, 2 devices; the driver supports CUDA 12.4");
}

// The PyTorch wheel index offered is the newest whose CUDA the driver runs: a driver at exactly a
// wheel's CUDA gets that wheel, one minor below gets the one before, and a driver older than CUDA
// 11.8 gets no wheel at all but the advice to upgrade it.
TEST(Doctor, TheTorchWheelOfferedIsTheNewestTheDriverRuns) {
  const std::vector<std::pair<int, std::string>> cases = {
      {11080, "cu118"}, {12000, "cu118"}, {12010, "cu121"}, {12030, "cu121"}, {12040, "cu124"}, {12050, "cu124"},
      {12060, "cu126"}, {12070, "cu126"}, {12080, "cu128"}, {12090, "cu129"}, {13000, "cu130"}, {13010, "cu130"},
  };
  for (const auto& [driver, tag] : cases) {
    auto m = Machine::healthy();
    m->nvml.cuda_driver_version = driver;
    m->torch(R"({"version": "2.3.1+cpu", "cuda": null, "available": false, "count": 0})");
    auto checks = m->run();
    const auto& c = expectCheck(checks, "framework.pytorch", Layer::kFramework, Verdict::kFail);
    EXPECT_HAS(c.fix, "--index-url https://download.pytorch.org/whl/" + tag + "\n");
  }
  auto old = Machine::healthy();
  old->nvml.cuda_driver_version = 11070;
  old->torch(R"({"version": "2.3.1+cpu", "cuda": null, "available": false, "count": 0})");
  auto checks = old->run();
  EXPECT_EQ(expectCheck(checks, "framework.pytorch", Layer::kFramework, Verdict::kFail).fix,
            "The driver (CUDA 11.7) is older than any current PyTorch CUDA build: upgrade the driver first.");
}

// A torch that sees fewer devices than NVML warns; seeing all of them passes.
TEST(Doctor, PyTorchSeeingOneOfTwoGpusWarns) {
  auto m = Machine::healthy();  // NVML sees 2 GPUs
  m->torch(R"({"version": "2.3.1+cu121", "cuda": "12.1", "available": true, "count": 1})");
  auto checks = m->run();
  EXPECT_EQ(expectCheck(checks, "framework.pytorch", Layer::kFramework, Verdict::kWarn).found,
            "torch 2.3.1+cu121, built for CUDA 12.1, is_available()=True, 1 device; NVML sees 2");
}

// The probe's answer is another program's output: a device count that is not a whole number
// (a string, a fraction) or is missing counts as none, and the doctor says so rather than
// throwing or converting it.
TEST(Doctor, PyTorchsDeviceCountIsReadOnlyAsAWholeNumber) {
  for (const char* count : {R"("count": "2",)", R"("count": 2.0,)", "", R"("count": -1,)", R"("count": 4294967297,)",
                            R"("count": true,)"}) {
    auto m = Machine::healthy();
    m->torch(std::string(R"({"version": "2.3.1+cu121", "cuda": "12.1", )") + count + R"( "available": true})");
    auto checks = m->run();
    EXPECT_EQ(expectCheck(checks, "framework.pytorch", Layer::kFramework, Verdict::kWarn).found,
              "torch 2.3.1+cu121, built for CUDA 12.1, is_available()=True, 0 devices; NVML sees 2")
        << count;
  }
}

// A python whose paddle prints `paddle_json` and which has no torch.
void paddle(Machine& m, const std::string& paddle_json) {
  m.fx.script("/usr/bin/python3",
              "case \"$2\" in\n"
              "  *torch*) echo \"ModuleNotFoundError: No module named 'torch'\" >&2; exit 1 ;;\n"
              "  *paddle*) echo '" +
                  paddle_json +
                  "' ;;\n"
                  "esac\n");
}

// Paddle's device count is read as PyTorch's is: only a whole number in range is believed.
TEST(Doctor, PaddlesDeviceCountIsReadOnlyAsAWholeNumber) {
  for (const char* count : {R"("2")", "2.0", "-1", "4294967297", "true", "null"}) {
    auto m = Machine::healthy();
    paddle(*m,
           std::string(R"({"version": "2.6.1", "cuda": "12.3", "compiled_with_cuda": true, "count": )") + count + "}");
    auto checks = m->run();
    EXPECT_HAS(expectCheck(checks, "framework.paddle", Layer::kFramework, Verdict::kFail).found,
               "paddle 2.6.1, CUDA 12.3, 0 devices; ")
        << count;
  }
}

// A paddle built for the driver's own CUDA major passes even at a newer minor (12.6 on a 12.4
// driver); only a newer major fails. A CUDA build that sees no device on a machine with GPUs fails.
TEST(Doctor, PaddleOfTheDriversCudaMajorPassesANewerMajorFails) {
  auto m = Machine::healthy();  // the driver supports CUDA 12.4
  paddle(*m, R"({"version": "2.6.1", "cuda": "12.6", "compiled_with_cuda": true, "count": 1})");
  auto checks = m->run();
  EXPECT_EQ(expectCheck(checks, "framework.paddle", Layer::kFramework, Verdict::kPass).found,
            "paddle 2.6.1, CUDA 12.6, 1 device");

  paddle(*m, R"({"version": "3.0.0", "cuda": "13.0", "compiled_with_cuda": true, "count": 2})");
  checks = m->run();
  EXPECT_EQ(expectCheck(checks, "framework.paddle", Layer::kFramework, Verdict::kFail).found,
            "paddle 3.0.0, CUDA 13.0, 2 devices; the driver supports only CUDA 12.4");

  paddle(*m, R"({"version": "2.6.1", "cuda": "12.3", "compiled_with_cuda": true, "count": 0})");
  checks = m->run();
  EXPECT_HAS(expectCheck(checks, "framework.paddle", Layer::kFramework, Verdict::kFail).found,
             "paddle 2.6.1, CUDA 12.3, 0 devices; ");
}

TEST(Doctor, PaddleCpuBuild) {
  auto m = Machine::healthy();
  m->fx.script("/usr/bin/python3",
               "case \"$2\" in\n"
               "  *torch*) echo \"ModuleNotFoundError: No module named 'torch'\" >&2; exit 1 ;;\n"
               "  *paddle*) echo '{\"version\": \"2.6.1\", \"cuda\": \"False\", \"compiled_with_cuda\": false, "
               "\"count\": 0}' ;;\n"
               "esac\n");
  auto checks = m->run();
  expectCheck(checks, "framework.pytorch", Layer::kFramework, Verdict::kSkip);
  const auto& p = expectCheck(checks, "framework.paddle", Layer::kFramework, Verdict::kFail);
  EXPECT_HAS(p.fix, "paddlepaddle-gpu");
}

std::unique_ptr<Machine> severalToolkits() {
  auto m = Machine::healthy();
  m->addToolkit("11.8.89", "version.txt");
  m->addToolkit("12.4.131", "nvcc");  // no version file: the version comes from bin/nvcc --version
  m->fx.symlink("/etc/alternatives/cuda", "/usr/local/cuda");
  m->fx.symlink("/usr/local/cuda-12.4", "/etc/alternatives/cuda");
  return m;
}

TEST(Doctor, SeveralToolkitsLinkAndPathDisagree) {
  auto m = severalToolkits();
  auto input = m->input();
  auto tks = listToolkits(input);
  ASSERT_EQ(tks.size(), 3u);
  EXPECT_EQ(tks[0].version, "11.8");
  EXPECT_EQ(tks[0].version_source, "version.txt");
  EXPECT_EQ(tks[1].version, "12.1");
  EXPECT_EQ(tks[1].full_version, "12.1.105");
  EXPECT_TRUE(tks[1].selected_by_path);
  EXPECT_TRUE(tks[1].selected_by_ld);
  EXPECT_EQ(tks[2].version, "12.4");
  EXPECT_EQ(tks[2].version_source, "nvcc --version");
  EXPECT_TRUE(tks[2].is_default);
  auto rep = inspectToolkits(input);
  EXPECT_EQ(rep.selection.default_link, "/usr/local/cuda-12.4");
  EXPECT_EQ(rep.selection.path_nvcc, "/usr/local/cuda-12.1/bin/nvcc");
  std::string listing = renderToolkitList(rep, m->nvml.cuda_driver_version);
  EXPECT_HAS(listing, "* /usr/local/cuda-12.4  12.4.131  [/usr/local/cuda]");
  EXPECT_HAS(listing, "/usr/local/cuda-12.1  12.1.105  [PATH, LD_LIBRARY_PATH]");

  auto checks = m->run();
  const auto& c = expectCheck(checks, "toolkit.consistency", Layer::kToolkit, Verdict::kWarn);
  EXPECT_HAS(c.found, "PATH nvcc 12.1");
  EXPECT_HAS(c.found, "/usr/local/cuda 12.4");
  EXPECT_HAS(c.fix, "sudo ln -sfn /usr/local/cuda-12.1 /usr/local/cuda");
  const auto& inst = expectCheck(checks, "toolkit.installed", Layer::kToolkit, Verdict::kPass);
  EXPECT_HAS(inst.found, "11.8 (/usr/local/cuda-11.8), 12.1 (/usr/local/cuda-12.1), 12.4 (/usr/local/cuda-12.4)");
  expectCheck(checks, "toolkit.driver_compat", Layer::kToolkit, Verdict::kPass);  // 12.4 <= driver's 12.4
}

// Two places selecting the same toolkit are enough to agree; one alone has nothing to agree with.
TEST(Doctor, TwoSelectionsCanAgreeOneIsSkipped) {
  auto m = Machine::healthy();
  m->env.erase("LD_LIBRARY_PATH");
  auto checks = m->run();
  EXPECT_EQ(expectCheck(checks, "toolkit.consistency", Layer::kToolkit, Verdict::kPass).found,
            "PATH nvcc 12.1, /usr/local/cuda 12.1");
  m->fx.remove("/usr/local/cuda");
  checks = m->run();
  EXPECT_EQ(expectCheck(checks, "toolkit.consistency", Layer::kToolkit, Verdict::kSkip).found, "only PATH nvcc 12.1");
}

// A toolkit left without version.json, version.txt or bin/nvcc (a half-removed install) still
// has a version: the one its directory is named after.
TEST(Doctor, AToolkitWithoutVersionFilesOrNvccIsDatedByItsDirectoryName) {
  auto m = Machine::healthy();
  m->fx.write("/usr/local/cuda-11.7/lib64/libcudart.so.11.7.99", "");
  auto input = m->input();
  const auto tks = listToolkits(input);
  const auto it =
      std::find_if(tks.begin(), tks.end(), [](const Toolkit& t) { return t.path == "/usr/local/cuda-11.7"; });
  ASSERT_NE(it, tks.end());
  EXPECT_FALSE(it->has_nvcc);
  EXPECT_EQ(it->full_version, "11.7");
  EXPECT_EQ(it->version, "11.7");
  EXPECT_EQ(it->version_source, "directory name");
}

// A library directory holding only the unversioned libcudart.so (the development link) selects it,
// with no version to read from its name.
TEST(Doctor, AnUnversionedLibcudartOnLdLibraryPathHasNoVersion) {
  auto m = Machine::healthy();
  m->fx.write("/opt/rt/libcudart.so", "");
  m->env["LD_LIBRARY_PATH"] = "/opt/rt";
  const auto rep = inspectToolkits(m->input());
  EXPECT_EQ(rep.selection.ld_cudart, "/opt/rt/libcudart.so");
  EXPECT_EQ(rep.selection.ld_cudart_version, "");
}

TEST(Doctor, ToolkitNewerThanDriver) {
  auto m = severalToolkits();
  m->nvml.driver_version = "520.61.05";
  m->nvml.cuda_driver_version = 11080;
  m->fx.write("/proc/driver/nvidia/version",
              "NVRM version: NVIDIA UNIX x86_64 Kernel Module  520.61.05  Thu Sep 29 2022\n");
  m->torch(R"({"version": "2.1.0+cu118", "cuda": "11.8", "available": true, "count": 2})");
  auto checks = m->run();
  const auto& c = expectCheck(checks, "toolkit.driver_compat", Layer::kToolkit, Verdict::kFail);
  EXPECT_HAS(c.found, "PATH nvcc 12.1");
  EXPECT_HAS(c.found, "driver's CUDA 11.8");
  EXPECT_HAS(c.explain, "CUDA driver version is insufficient for CUDA runtime version");
  EXPECT_HAS(c.fix, "driver >= 550.54.14");  // the newest selected (12.4 via /usr/local/cuda)
  EXPECT_HAS(c.fix, "gpuwarden cuda env 11.8");
}

TEST(Doctor, ToolkitNewerMinorThanDriverWarns) {
  auto m = Machine::healthy();
  m->nvml.cuda_driver_version = 12000;
  auto checks = m->run();
  const auto& c = expectCheck(checks, "toolkit.driver_compat", Layer::kToolkit, Verdict::kWarn);
  EXPECT_HAS(c.explain, "minor-version compatibility");
  EXPECT_HAS(c.fix, "driver >= 530.30.02");
}

TEST(Doctor, NoNvccOnPath) {
  auto m = Machine::healthy();
  m->env["PATH"] = "/usr/bin:/bin";
  auto checks = m->run();
  const auto& c = expectCheck(checks, "toolkit.nvcc", Layer::kToolkit, Verdict::kWarn);
  EXPECT_HAS(c.fix, "export PATH=/usr/local/cuda-12.1/bin:$PATH");
}

TEST(Doctor, CudnnMajorMismatch) {
  auto m = Machine::healthy();
  m->fx.write("/var/lib/dpkg/status",
              "Package: libcudnn8\nStatus: install ok installed\nVersion: 8.9.7.29-1+cuda11.8\n\n");
  auto checks = m->run();
  const auto& c = expectCheck(checks, "lib.cudnn", Layer::kLibraries, Verdict::kFail);
  EXPECT_HAS(c.found, "for CUDA 11");
  EXPECT_HAS(c.found, "selected toolkit is CUDA 12.1");
  EXPECT_EQ(c.found,
            "cuDNN 8.9.7 (/usr/include/cudnn_version.h, for CUDA 11 from dpkg libcudnn8 8.9.7.29-1+cuda11.8) but the "
            "selected toolkit is CUDA 12.1");
  // cuDNN 8 has one package per cuDNN major, told apart by its version's +cudaN suffix; the
  // per-CUDA package names (libcudnn9-cuda-12) start with cuDNN 9.
  EXPECT_HAS(c.fix, "Install the libcudnn8 build for CUDA 12 (package version ending in +cuda12.x");
  EXPECT_EQ(c.fix.find("libcudnn9-cuda-"), std::string::npos) << c.fix;
  EXPECT_HAS(c.fix, "pip install nvidia-cudnn-cu12");
}

TEST(Doctor, CudnnInToolkitDirectoryOfAnotherMajor) {
  auto m = severalToolkits();
  m->fx.remove("/usr/include/cudnn_version.h");
  m->fx.write("/usr/local/cuda-11.8/include/cudnn_version.h",
              "#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 1\n#define CUDNN_PATCHLEVEL 0\n");
  m->fx.symlink("/usr/local/cuda-11.8", "/usr/local/cuda");  // default 11.8, PATH still 12.1
  auto checks = m->run();
  const auto& c = expectCheck(checks, "lib.cudnn", Layer::kLibraries, Verdict::kFail);
  EXPECT_HAS(c.found, "cuDNN 9.1.0");
  EXPECT_HAS(c.fix, "libcudnn9-cuda-12");
}

TEST(Doctor, XServerRunning) {
  auto m = Machine::healthy();
  m->fx.write("/proc/2345/comm", "Xorg\n");
  auto checks = m->run();
  const auto& c = expectCheck(checks, "kernel.xserver", Layer::kKernelDriver, Verdict::kWarn);
  EXPECT_HAS(c.found, "Xorg");
  EXPECT_HAS(c.fix, "multi-user.target");

  auto m2 = Machine::healthy();
  m2->nvml.gpus[1].display_active = true;
  checks = m2->run();
  const auto& d = expectCheck(checks, "kernel.xserver", Layer::kKernelDriver, Verdict::kWarn);
  EXPECT_HAS(d.found, "display active on GPU 1");
}

// A process that exits between the /proc listing and the read of its comm, and one whose comm is
// empty, are skipped: the checks that look for a process by name judge the rest.
TEST(Doctor, ProcessesThatVanishWhileListedAreSkipped) {
  auto m = Machine::healthy();
  m->fx.mkdir("/proc/4242");  // exited: no comm any more
  m->fx.write("/proc/4243/comm", "\n");
  m->fx.write("/proc/4244/comm", "Xorg\n");
  auto checks = m->run();
  const auto& c = expectCheck(checks, "kernel.xserver", Layer::kKernelDriver, Verdict::kWarn);
  EXPECT_EQ(c.found.find("4242"), std::string::npos) << c.found;
  EXPECT_HAS(c.found, "Xorg");
}

TEST(Doctor, PersistenceModeOff) {
  auto m = Machine::healthy();
  m->fx.remove("/proc/901");
  for (auto& g : m->nvml.gpus) g.persistence_mode = false;
  auto checks = m->run();
  const auto& c = expectCheck(checks, "kernel.persistence", Layer::kKernelDriver, Verdict::kWarn);
  EXPECT_HAS(c.found, "off on GPU 0, 1");
  EXPECT_HAS(c.fix, "nvidia-smi -pm 1");
  EXPECT_HAS(c.fix, "nvidia-persistenced");
}

TEST(Doctor, DeviceNodesMissing) {
  auto m = Machine::healthy();
  m->fx.remove("/dev/nvidia-uvm");
  m->fx.remove("/dev/nvidia1");
  auto checks = m->run();
  const auto& c = expectCheck(checks, "kernel.device_nodes", Layer::kKernelDriver, Verdict::kFail);
  EXPECT_HAS(c.found, "/dev/nvidia-uvm");
  EXPECT_HAS(c.found, "1 of 2");
  EXPECT_HAS(c.fix, "nvidia-modprobe");
}

// One GPU and its one /dev/nvidiaN (NVML names no minors here): nothing is missing.
TEST(Doctor, OneGpuWithItsOneDeviceNodePasses) {
  auto m = Machine::healthy();
  m->fx.remove("/sys/bus/pci/devices/0000:86:00.0");
  m->fx.remove("/dev/nvidia1");
  m->nvml.gpus.resize(1);
  auto checks = m->run();
  const auto& c = expectCheck(checks, "kernel.device_nodes", Layer::kKernelDriver, Verdict::kPass);
  EXPECT_HAS(c.found, "1 x nvidiaN");
}

// A container that sees no GPU count at all (no NVML, no PCI devices) still needs one
// /dev/nvidiaN: none is "0 of 1", not nothing missing.
TEST(Doctor, AContainerWithNoKnownGpuStillNeedsOneDeviceNode) {
  auto m = Machine::healthy();
  m->fx.write("/run/.containerenv", "");
  m->nvml.init_return = 9;  // NVML_ERROR_DRIVER_NOT_LOADED
  m->fx.remove("/sys/bus/pci/devices");
  m->fx.remove("/dev/nvidia0");
  m->fx.remove("/dev/nvidia1");
  auto checks = m->run();
  const auto& c = expectCheck(checks, "kernel.device_nodes", Layer::kKernelDriver, Verdict::kFail);
  EXPECT_HAS(c.found, "/dev/nvidiaN (0 of 1)");
}

TEST(Doctor, ClockNotSynchronised) {
  auto m = Machine::healthy();
  m->fx.remove("/proc/812");
  auto checks = m->run();
  const auto& c = expectCheck(checks, "container.clock", Layer::kContainer, Verdict::kWarn);
  EXPECT_HAS(c.explain, "distributed training");
}

// ---- the time zone (seed 001 §2.3: mount /etc/localtime into containers) ----

// A zone file as tzdata installs it: what matters to the check is the TZif header.
const std::string kZoneFile = std::string("TZif2") + std::string(40, '\0');

std::unique_ptr<Machine> container() {
  auto m = Machine::healthy();
  m->fx.write("/.dockerenv", "");
  m->env["NVIDIA_VISIBLE_DEVICES"] = "all";
  return m;
}

TEST(Timezone, LinkToAnInstalledZonePasses) {
  auto m = container();
  m->fx.write("/usr/share/zoneinfo/Asia/Shanghai", kZoneFile);
  m->fx.symlink("../usr/share/zoneinfo/Asia/Shanghai", "/etc/localtime");
  auto checks = m->run();
  const auto& c = expectCheck(checks, "container.timezone", Layer::kContainer, Verdict::kPass);
  EXPECT_EQ(c.found, "/etc/localtime -> /usr/share/zoneinfo/Asia/Shanghai (Asia/Shanghai)");
  // A copied file (docker -v /etc/localtime:/etc/localtime:ro shows as one) passes too.
  m->fx.remove("/etc/localtime");
  m->fx.write("/etc/localtime", kZoneFile);
  const auto copy = expectCheck(m->run(), "container.timezone", Layer::kContainer, Verdict::kPass);
  EXPECT_EQ(copy.found, "/etc/localtime");
}

TEST(Timezone, MissingInAContainerWarns) {
  auto m = container();
  auto checks = m->run();
  const auto& c = expectCheck(checks, "container.timezone", Layer::kContainer, Verdict::kWarn);
  EXPECT_EQ(c.found, "/etc/localtime is missing: the container runs in UTC, whatever the host's zone");
  EXPECT_HAS(c.fix, "-v /etc/localtime:/etc/localtime:ro");
  EXPECT_HAS(c.fix, "hostPath");
  EXPECT_HAS(c.explain, "Seed 001");
  EXPECT_EQ(exitCodeFor(checks), 1);
  // With TZ set to a rule that needs no file, the container has its zone.
  m->env["TZ"] = "CST-8";
  const auto rule = expectCheck(m->run(), "container.timezone", Layer::kContainer, Verdict::kPass);
  EXPECT_EQ(rule.found, "TZ=CST-8 (a POSIX rule); /etc/localtime absent (TZ decides)");
  // UTC is no zone file's name yet a zone all the same: it needs no /etc/localtime either.
  m->env["TZ"] = "UTC";
  const auto utc = expectCheck(m->run(), "container.timezone", Layer::kContainer, Verdict::kPass);
  EXPECT_EQ(utc.found, "TZ=UTC (UTC); /etc/localtime absent (TZ decides)");
}

// A POSIX rule's offset may carry a '+' or no sign at all ("EST5EDT,M3.2.0,M11.1.0", the form
// glibc's own examples use): either way it needs no zone file.
TEST(Timezone, PosixRulesWithAPlusOrNoSignNeedNoFile) {
  for (const std::string tz : {"EST5EDT,M3.2.0,M11.1.0", "EST+5", "<+08>-8"}) {
    SCOPED_TRACE(tz);
    auto m = container();
    m->env["TZ"] = tz;
    const auto c = expectCheck(m->run(), "container.timezone", Layer::kContainer, Verdict::kPass);
    EXPECT_EQ(c.found, "TZ=" + tz + " (a POSIX rule); /etc/localtime absent (TZ decides)");
  }
}

// POSIX wants a zone name of three letters or more: "AB-8" is no rule, so it names a zone file,
// which is not there.
TEST(Timezone, ARuleNeedsAThreeLetterName) {
  auto m = container();
  m->fx.write("/etc/localtime", kZoneFile);
  m->env["TZ"] = "ABC-8";
  EXPECT_EQ(expectCheck(m->run(), "container.timezone", Layer::kContainer, Verdict::kPass).found,
            "TZ=ABC-8 (a POSIX rule); /etc/localtime");
  m->env["TZ"] = "AB-8";
  const auto two = expectCheck(m->run(), "container.timezone", Layer::kContainer, Verdict::kWarn);
  EXPECT_HAS(two.found, "TZ=AB-8 but /usr/share/zoneinfo/AB-8 does not exist");
}

TEST(Timezone, DanglingLinkWarnsOnHostAndInContainer) {
  for (bool in_container : {false, true}) {
    SCOPED_TRACE(in_container ? "container" : "host");
    auto m = in_container ? container() : Machine::healthy();
    m->fx.symlink("/usr/share/zoneinfo/Europe/Berlin", "/etc/localtime");  // tzdata not installed
    auto checks = m->run();
    const auto& c = expectCheck(checks, "container.timezone", Layer::kContainer, Verdict::kWarn);
    EXPECT_EQ(c.found, "/etc/localtime -> /usr/share/zoneinfo/Europe/Berlin does not exist");
    EXPECT_HAS(c.fix, in_container ? "-v /etc/localtime:/etc/localtime:ro" : "timedatectl set-timezone");
    EXPECT_HAS(c.explain, "silently uses UTC");
  }
}

TEST(Timezone, DirectoryOrGarbageInsteadOfAZoneWarns) {
  auto m = container();
  m->fx.mkdir("/etc/localtime");  // what docker -v leaves when the host has no such file
  const auto dir = expectCheck(m->run(), "container.timezone", Layer::kContainer, Verdict::kWarn);
  EXPECT_HAS(dir.found, "/etc/localtime is a directory");
  m->fx.remove("/etc/localtime");
  m->fx.write("/etc/localtime", "Asia/Shanghai\n");
  const auto text = expectCheck(m->run(), "container.timezone", Layer::kContainer, Verdict::kWarn);
  EXPECT_EQ(text.found, "/etc/localtime is not a time-zone file (no TZif header)");
}

TEST(Timezone, TzNamingAZoneThatIsNotInstalledWarns) {
  auto m = container();
  m->fx.write("/etc/localtime", kZoneFile);
  m->env["TZ"] = "Asia/Tokyo";
  auto checks = m->run();
  const auto& c = expectCheck(checks, "container.timezone", Layer::kContainer, Verdict::kWarn);
  EXPECT_EQ(c.found, "TZ=Asia/Tokyo but /usr/share/zoneinfo/Asia/Tokyo does not exist; /etc/localtime");
  EXPECT_HAS(c.fix, "tzdata");
  m->fx.write("/usr/share/zoneinfo/Asia/Tokyo", kZoneFile);
  m->env["TZ"] = ":Asia/Tokyo";
  const auto ok = expectCheck(m->run(), "container.timezone", Layer::kContainer, Verdict::kPass);
  EXPECT_EQ(ok.found, "TZ=:Asia/Tokyo (/usr/share/zoneinfo/Asia/Tokyo); /etc/localtime");
}

TEST(Doctor, HostWithDockerButNoNvidiaToolkit) {
  auto m = Machine::healthy();
  m->fx.remove("/usr/bin/nvidia-container-runtime");
  m->fx.remove("/etc/nvidia-container-runtime");
  auto checks = m->run();
  const auto& c = expectCheck(checks, "container.runtime", Layer::kContainer, Verdict::kWarn);
  EXPECT_HAS(c.fix, "nvidia-ctk runtime configure");
}

TEST(CudaEnv, LinesForInstalledVersion) {
  auto m = severalToolkits();
  auto lines = envLinesFor("12.1", m->input());
  ASSERT_TRUE(lines.ok()) << lines.error();
  ASSERT_GE(lines->size(), 5u);
  EXPECT_EQ((*lines)[0], "export PATH=/usr/local/cuda-12.1/bin:$PATH");
  EXPECT_EQ((*lines)[1], "export LD_LIBRARY_PATH=/usr/local/cuda-12.1/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}");
  EXPECT_EQ((*lines)[2], "export CUDA_HOME=/usr/local/cuda-12.1");
  EXPECT_EQ((*lines)[4], "# sudo ln -sfn /usr/local/cuda-12.1 /usr/local/cuda");
  auto full = envLinesFor("12.4.131", m->input());
  ASSERT_TRUE(full.ok());
  EXPECT_EQ((*full)[0], "export PATH=/usr/local/cuda-12.4/bin:$PATH");
}

TEST(CudaEnv, VersionNotInstalledListsInstalled) {
  auto m = severalToolkits();
  auto lines = envLinesFor("12.3", m->input());
  ASSERT_FALSE(lines.ok());
  EXPECT_HAS(lines.error(), "CUDA 12.3 is not installed");
  EXPECT_HAS(lines.error(), "11.8 (/usr/local/cuda-11.8), 12.1 (/usr/local/cuda-12.1), 12.4 (/usr/local/cuda-12.4)");
}

// The env lines warn only when the toolkit's major is newer than the driver's: CUDA 12.4 on a
// 12.0 driver runs (minor-version compatibility), and so does 11.8 on an 11.8 driver.
TEST(CudaEnv, NoWarningForTheDriversOwnCudaMajor) {
  auto m = severalToolkits();
  m->nvml.cuda_driver_version = 12000;
  auto lines = envLinesFor("12.4", m->input());
  ASSERT_TRUE(lines.ok());
  EXPECT_EQ(lines->size(), 5u) << lines->back();
  m->nvml.cuda_driver_version = 11080;
  lines = envLinesFor("11.8", m->input());
  ASSERT_TRUE(lines.ok());
  EXPECT_EQ(lines->size(), 5u) << lines->back();
}

// `cuda list` tags a toolkit newer than the driver's CUDA, and not one at exactly that version.
TEST(CudaEnv, ListTagsOnlyToolkitsNewerThanTheDriver) {
  auto m = severalToolkits();
  auto rep = inspectToolkits(m->input());
  const std::string listing = renderToolkitList(rep, 12010);
  EXPECT_HAS(listing, "  /usr/local/cuda-12.1  12.1.105  [PATH, LD_LIBRARY_PATH]\n");
  EXPECT_HAS(listing, "* /usr/local/cuda-12.4  12.4.131  [/usr/local/cuda, newer than the driver supports (12.1)]\n");
  EXPECT_HAS(listing, "Driver supports CUDA up to 12.1 (");
}

TEST(CudaEnv, WarnsWhenDriverTooOld) {
  auto m = severalToolkits();
  m->nvml.cuda_driver_version = 11080;
  auto lines = envLinesFor("12.1", m->input());
  ASSERT_TRUE(lines.ok());
  EXPECT_HAS(lines->back(), "driver version is insufficient");
}

TEST(Render, TextJsonAndExitCode) {
  auto m = Machine::healthy();
  m->fx.write("/proc/2345/comm", "Xorg\n");
  m->nvml.driver_version = "550.90.07";
  auto checks = m->run();
  std::string text = renderText(checks, false, true);
  EXPECT_HAS(text, "Hardware (PCI)\n");
  EXPECT_HAS(text, "  \u2714 NVIDIA GPUs on the PCI bus: 2");
  EXPECT_HAS(text, "  \u2718 Kernel module and userspace driver versions match");
  EXPECT_HAS(text, "  ! No X server");
  EXPECT_HAS(text, "      fix:\n        Reboot");
  EXPECT_HAS(text, "Lowest failing layer: Kernel driver (kernel.version_match)");
  EXPECT_LT(text.find("Hardware (PCI)"), text.find("Kernel driver"));
  EXPECT_LT(text.find("Kernel driver"), text.find("Frameworks"));
  std::string ascii = renderText(checks, false, false);
  EXPECT_HAS(ascii, "  PASS NVIDIA GPUs on the PCI bus");
  EXPECT_HAS(ascii, "  FAIL Kernel module");
  EXPECT_HAS(ascii, "  WARN No X server");
  EXPECT_EQ(ascii.find("\u2714"), std::string::npos);
  std::string colored = renderText(checks, true, true);
  EXPECT_HAS(colored, "\033[31m\u2718\033[0m");

  auto j = toJson(checks);
  EXPECT_EQ(j["summary"]["exit_code"], 2);
  EXPECT_EQ(j["summary"]["first_failing_check"], "kernel.version_match");
  bool saw = false;
  for (const auto& c : j["checks"]) {
    if (c["id"] == "kernel.version_match") {
      saw = true;
      EXPECT_EQ(c["layer"], "kernel-driver");
      EXPECT_EQ(c["verdict"], "fail");
      EXPECT_FALSE(c["fix"].get<std::string>().empty());
    }
  }
  EXPECT_TRUE(saw);
  EXPECT_EQ(exitCodeFor(checks), 2);
  EXPECT_EQ(exitCodeFor({}), 0);
  EXPECT_EQ(exitCodeFor({Check{"a", Layer::kHardware, Verdict::kWarn, "", "", "", ""},
                         Check{"b", Layer::kHardware, Verdict::kSkip, "", "", "", ""}}),
            1);
  EXPECT_TRUE(localeIsUtf8({{"LANG", "en_US.UTF-8"}}));
  EXPECT_FALSE(localeIsUtf8({{"LC_ALL", "C"}, {"LANG", "en_US.UTF-8"}}));
  EXPECT_FALSE(localeIsUtf8({}));
}

TEST(Doctor, EmptyRootDoesNotCrash) {
  Machine m;  // nothing at all: no /proc, no /sys, NVML not loaded
  auto checks = m.run();
  EXPECT_FALSE(checks.empty());
  expectCheck(checks, "cuda_driver.nvml", Layer::kCudaDriver, Verdict::kFail);
  std::string text = renderText(checks, false);
  EXPECT_HAS(text, "Summary:");
}

// NVML's bus id (8-digit domain) in sysfs's spelling (at least 4 digits, more when needed): what
// the hardware checks match sysfs devices against NVML's GPUs with. A longer domain than NVML
// prints, or one that is not hex, is left as it was (lower case).
TEST(BusId, NvmlsSpellingBecomesSysfss) {
  using detail::normalizeBusId;
  EXPECT_EQ(normalizeBusId("00000000:3B:00.0"), "0000:3b:00.0");
  EXPECT_EQ(normalizeBusId("00000001:18:00.0"), "0001:18:00.0");
  EXPECT_EQ(normalizeBusId("00010000:18:00.0"), "10000:18:00.0");
  EXPECT_EQ(normalizeBusId(" 0000:3b:00.0 "), "0000:3b:00.0");
  EXPECT_EQ(normalizeBusId("100000000:18:00.0"), "100000000:18:00.0");
  EXPECT_EQ(normalizeBusId("000000001:18:00.0"), "000000001:18:00.0");  // 9 digits, even with leading zeros
  EXPECT_EQ(normalizeBusId("0000000G:18:00.0"), "0000000g:18:00.0");
  EXPECT_EQ(normalizeBusId(":18:00.0"), ":18:00.0");
  EXPECT_EQ(normalizeBusId("18.0"), "18.0");
}

// Symbolic links are followed for at most 16 hops (a loop must end): a chain of 16 links reaches
// its directory, a chain of 17 stops at the 17th link.
TEST(PathsAndVersions, LinksAreFollowedForSixteenHops) {
  for (int links : {16, 17}) {
    testing::Fixture fx;
    fx.mkdir("/target");
    for (int i = 1; i <= links; ++i)
      fx.symlink(i == links ? "/target" : "/link" + std::to_string(i + 1), "/link" + std::to_string(i));
    EXPECT_EQ(detail::resolveLink(fx.root(), "/link1"), links == 16 ? "/target" : "/link17") << links;
  }
}

// A toolkit's folder name is its version when nothing inside says one ("cuda-12.4", trailing
// slashes and all); a name that is no version ("source", a kernel's build folder) gives none.
TEST(PathsAndVersions, BasenameAndVersionNumbers) {
  using detail::basename;
  using detail::parseVersion;
  EXPECT_EQ(basename("/usr/local/cuda-12.4"), "cuda-12.4");
  EXPECT_EQ(basename("/usr/local/cuda-12.4/"), "cuda-12.4");
  EXPECT_EQ(basename("/usr/local/cuda-12.4//"), "cuda-12.4");
  EXPECT_EQ(basename("/usr/local/cuda-12.4///"), "cuda-12.4");
  EXPECT_EQ(basename("/"), "/");
  EXPECT_EQ(basename("nvidia"), "nvidia");
  EXPECT_EQ(parseVersion("12.4.131"), (std::vector<int>{12, 4, 131}));
  EXPECT_EQ(parseVersion("550.54.15-open"), (std::vector<int>{550, 54, 15}));
  EXPECT_EQ(parseVersion("12.x"), (std::vector<int>{12}));
  EXPECT_TRUE(parseVersion("source").empty());
  EXPECT_TRUE(parseVersion("").empty());
}

// A toolkit folder reached through a symlink may carry trailing slashes ("/usr/local/cuda-12.4/");
// its parent is the same as without them.
TEST(PathsAndVersions, DirnameIgnoresTrailingSlashes) {
  using detail::dirname;
  EXPECT_EQ(dirname("/usr/local/cuda-12.4/"), "/usr/local");
  EXPECT_EQ(dirname("/usr/local/cuda-12.4//"), "/usr/local");
  EXPECT_EQ(dirname("/usr/"), "/");
  EXPECT_EQ(dirname("cuda/"), ".");
  EXPECT_EQ(dirname("/"), "/");
}

// Versions of different lengths compare as if the shorter had zeros after it: 12.4 is 12.4.0, below
// 12.4.1 and above 12.3.9 (a missing part is never read past its end).
TEST(PathsAndVersions, CompareVersionsPadsTheShorterWithZeros) {
  using detail::compareVersions;
  EXPECT_EQ(compareVersions("12.4.0", "12.4"), 0);
  EXPECT_EQ(compareVersions("12.4", "12.4.0"), 0);
  EXPECT_EQ(compareVersions("12.4.1", "12.4"), 1);
  EXPECT_EQ(compareVersions("12.4", "12.4.1"), -1);
  EXPECT_EQ(compareVersions("12.4", "12.3.9"), 1);
  EXPECT_EQ(compareVersions("550.54.15", "550.54.15"), 0);
}

// A version of one number ("12", as libcudart.so.12 names its runtime) has no minor to add: it is
// its own major.minor, not "12.<something>".
TEST(PathsAndVersions, MajorMinorOfOneTwoAndThreeNumbers) {
  using detail::majorMinor;
  EXPECT_EQ(majorMinor("12"), "12");
  EXPECT_EQ(majorMinor("12.4"), "12.4");
  EXPECT_EQ(majorMinor("12.4.131"), "12.4");
  EXPECT_EQ(majorMinor("source"), "source");
}

// nvmlInit's failure is told by NVML's own name for the code (nvml.h's NVML_ERROR_*); a code
// without one in the doctor's list is told as a number.
TEST(NvmlReturnNames, NvmlsOwnNamesAndTheCodeOtherwise) {
  using detail::nvmlReturnName;
  const std::vector<std::pair<int, std::string>> names = {{0, "SUCCESS"},
                                                          {1, "UNINITIALIZED"},
                                                          {2, "INVALID_ARGUMENT"},
                                                          {3, "NOT_SUPPORTED"},
                                                          {4, "NO_PERMISSION"},
                                                          {5, "error 5"},
                                                          {6, "NOT_FOUND"},
                                                          {7, "error 7"},
                                                          {9, "DRIVER_NOT_LOADED"},
                                                          {10, "TIMEOUT"},
                                                          {12, "LIBRARY_NOT_FOUND"},
                                                          {13, "FUNCTION_NOT_FOUND"},
                                                          {14, "CORRUPTED_INFOROM"},
                                                          {15, "GPU_IS_LOST"},
                                                          {16, "RESET_REQUIRED"},
                                                          {17, "OPERATING_SYSTEM"},
                                                          {18, "LIB_RM_VERSION_MISMATCH"},
                                                          {20, "MEMORY"},
                                                          {999, "UNKNOWN"},
                                                          {-1, "error -1"}};
  for (const auto& [code, name] : names) EXPECT_EQ(nvmlReturnName(code), name) << code;
}

}  // namespace
}  // namespace gw::doctor
