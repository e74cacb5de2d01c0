// The doctor on fixture trees for the places a machine says "keep nouveau out": every modprobe.d
// directory kmod reads, the kernel command line, and kmod's rule that a file hides the file of the
// same name in a directory of lower precedence. Also the device-node and PCI-address checks where
// the driver's numbering and NVML's differ (minor numbers, PCI domains).
#include <gtest/gtest.h>

#include <cctype>
#include <memory>
#include <string>
#include <vector>

#include "doctor/doctor.h"
#include "fixture.h"

namespace gw::doctor {
namespace {

using testing::findCheck;
using testing::Machine;

#define EXPECT_HAS(haystack, needle)                                                                                \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos) << "expected to find [" << (needle) << "] in:\n" \
                                                                   << (haystack)

// The kernel.nouveau check (a copy: the checks are often a temporary) with its verdict asserted.
Check nouveau(const std::vector<Check>& checks, Verdict want) {
  const Check* c = findCheck(checks, "kernel.nouveau");
  EXPECT_NE(c, nullptr) << renderText(checks, false);
  if (!c) return Check{"missing", Layer::kHardware, Verdict::kSkip, "", "", "", ""};
  EXPECT_EQ(verdictName(c->verdict), verdictName(want)) << c->found << "\n" << renderText(checks, false);
  return *c;
}

// A healthy host with its nouveau blacklist taken out of /etc/modprobe.d: nothing keeps nouveau
// out until a test puts it somewhere.
std::unique_ptr<Machine> withoutBlacklist() {
  auto m = Machine::healthy();
  m->fx.remove("/etc/modprobe.d/blacklist-nouveau.conf");
  return m;
}

constexpr const char* kBothLines = "# nouveau must not take the GPU\nblacklist nouveau\noptions nouveau modeset=0\n";

// Every directory kmod's modprobe reads (modprobe.d(5) of kmod 33+: /etc, /run, /usr/local/lib,
// /usr/lib, /lib), one test each: a blacklist there counts.
class BlacklistDirectory : public ::testing::TestWithParam<const char*> {};

TEST_P(BlacklistDirectory, BlacklistThereCounts) {
  auto m = withoutBlacklist();
  const std::string file = std::string(GetParam()) + "/nvidia-installer-disable-nouveau.conf";
  m->fx.write(file, kBothLines);
  const Check c = nouveau(m->run(), Verdict::kPass);
  EXPECT_HAS(c.found, file + ": blacklist nouveau");
  EXPECT_HAS(c.found, file + ": options nouveau modeset=0");
}

TEST_P(BlacklistDirectory, BlacklistThereWhileNouveauIsLoadedMeansTheInitramfsIsStale) {
  auto m = withoutBlacklist();
  m->fx.write(std::string(GetParam()) + "/blacklist-nouveau.conf", kBothLines);
  m->modules("nouveau drm_kms_helper drm");
  const Check c = nouveau(m->run(), Verdict::kFail);
  EXPECT_HAS(c.found, "nouveau is loaded although blacklisted");
  EXPECT_HAS(c.fix, "update-initramfs -u");
}

INSTANTIATE_TEST_SUITE_P(Modprobe, BlacklistDirectory,
                         ::testing::Values("/etc/modprobe.d", "/run/modprobe.d", "/usr/local/lib/modprobe.d",
                                           "/usr/lib/modprobe.d", "/lib/modprobe.d"),
                         [](const auto& param_info) {
                           std::string name;
                           for (char c : std::string(param_info.param))
                             if (std::isalnum(static_cast<unsigned char>(c))) name += c;
                           return name;
                         });

TEST(Nouveau, LoadedAndNotBlacklistedAnywhereFails) {
  auto m = withoutBlacklist();
  m->modules("nouveau drm_kms_helper drm");
  m->pciGpu("0000:3b:00.0", "nouveau");
  m->pciGpu("0000:86:00.0", "nouveau");
  // Other modprobe.d files exist, none about nouveau.
  m->fx.write("/usr/lib/modprobe.d/systemd.conf", "options bonding max_bonds=0\n");
  m->fx.write("/lib/modprobe.d/aliases.conf", "alias char-major-10-175 agpgart\n");
  const auto checks = m->run();
  const Check c = nouveau(checks, Verdict::kFail);
  EXPECT_HAS(c.found, "nouveau is loaded and not blacklisted");
  EXPECT_HAS(c.fix, "blacklist nouveau");
  EXPECT_EQ(exitCodeFor(checks), 2);
}

TEST(Nouveau, NotLoadedAndNotBlacklistedAnywhereWarns) {
  auto m = withoutBlacklist();
  m->fx.write("/usr/local/lib/modprobe.d/other.conf", "blacklist nouveau_fb\noptions nouveaux modeset=0\n");
  const Check c = nouveau(m->run(), Verdict::kWarn);
  EXPECT_HAS(c.found, "blacklist nouveau, options nouveau modeset=0");
}

// kmod reads only names of at least 6 characters that end in ".conf" and skips hidden files (its
// conf_files_filter_out): a blacklist in ".conf" or ".blacklist-nouveau.conf" keeps nothing out,
// while one in "a.conf" does.
TEST(Nouveau, HiddenAndBareDotConfFilesAreNotRead) {
  for (const char* name : {".conf", ".blacklist-nouveau.conf"}) {
    auto m = withoutBlacklist();
    m->fx.write(std::string("/etc/modprobe.d/") + name, kBothLines);
    const Check c = nouveau(m->run(), Verdict::kWarn);
    EXPECT_HAS(c.found, "blacklist nouveau, options nouveau modeset=0");
  }
  auto m = withoutBlacklist();
  m->fx.write("/etc/modprobe.d/a.conf", kBothLines);
  const Check c = nouveau(m->run(), Verdict::kPass);
  EXPECT_HAS(c.found, "/etc/modprobe.d/a.conf: blacklist nouveau");
}

// "install nouveau /bin/true" (or /bin/false) keeps nouveau from loading as a blacklist does; the
// same trick for another module says nothing about nouveau.
TEST(Nouveau, InstallCommandThatDoesNothingCountsAsBlacklist) {
  auto m = withoutBlacklist();
  const std::string file = "/etc/modprobe.d/nouveau-install.conf";
  m->fx.write(file, "install nvidiafb /bin/false\ninstall nouveau /bin/true\noptions nouveau modeset=0\n");
  const Check c = nouveau(m->run(), Verdict::kPass);
  EXPECT_HAS(c.found, file + ": install nouveau /bin/true");
  EXPECT_EQ(c.found.find("nvidiafb"), std::string::npos) << c.found;
}

// The kernel command line: modprobe.blacklist= (read by modprobe), module_blacklist= (enforced by
// the kernel), and nouveau.modeset=0 (the option's command-line form).
TEST(Nouveau, KernelCommandLineModprobeBlacklist) {
  auto m = withoutBlacklist();
  m->fx.write("/proc/cmdline", "BOOT_IMAGE=/vmlinuz root=UUID=x ro quiet modprobe.blacklist=nouveau\n");
  m->fx.write("/etc/modprobe.d/nouveau-options.conf", "options nouveau modeset=0\n");
  const Check c = nouveau(m->run(), Verdict::kPass);
  EXPECT_HAS(c.found, "kernel command line: modprobe.blacklist=nouveau");
}

TEST(Nouveau, KernelCommandLineModuleBlacklistInAList) {
  auto m = withoutBlacklist();
  m->fx.write("/proc/cmdline", "BOOT_IMAGE=/vmlinuz ro module_blacklist=radeon,nouveau,amdgpu nouveau.modeset=0\n");
  const Check c = nouveau(m->run(), Verdict::kPass);
  EXPECT_HAS(c.found, "kernel command line: module_blacklist=radeon,nouveau,amdgpu");
  EXPECT_HAS(c.found, "kernel command line: nouveau.modeset=0");
}

TEST(Nouveau, KernelCommandLineWithoutModesetStillWarns) {
  auto m = withoutBlacklist();
  m->fx.write("/proc/cmdline", "BOOT_IMAGE=/vmlinuz ro module_blacklist=nouveau\n");
  const Check c = nouveau(m->run(), Verdict::kWarn);
  EXPECT_HAS(c.found, "options nouveau modeset=0");
  EXPECT_EQ(c.found.find("blacklist nouveau,"), std::string::npos) << c.found;
}

TEST(Nouveau, KernelCommandLineModesetFormWithAFileBlacklist) {
  auto m = withoutBlacklist();
  m->fx.write("/proc/cmdline", "BOOT_IMAGE=/vmlinuz ro nouveau.modeset=0\n");
  m->fx.write("/usr/lib/modprobe.d/nvidia-graphics-drivers.conf", "blacklist nouveau\n");
  nouveau(m->run(), Verdict::kPass);
}

TEST(Nouveau, SimilarNamesOnTheCommandLineDoNotCount) {
  auto m = withoutBlacklist();
  m->fx.write("/proc/cmdline", "ro modprobe.blacklist=nouveau_fb,xnouveau nouveau.modeset=1\n");
  const Check c = nouveau(m->run(), Verdict::kWarn);
  EXPECT_HAS(c.found, "blacklist nouveau, options nouveau modeset=0");
}

// kmod reads a file name once, from the directory of highest precedence: an /etc file of the same
// name replaces the vendor's, and a link to /dev/null masks it.
TEST(Nouveau, SameNameInAHigherDirectoryHidesTheVendorFile) {
  auto m = withoutBlacklist();
  m->fx.write("/usr/lib/modprobe.d/nvidia.conf", kBothLines);
  nouveau(m->run(), Verdict::kPass);
  m->fx.write("/etc/modprobe.d/nvidia.conf", "options nvidia NVreg_PreserveVideoMemoryAllocations=1\n");
  auto c = nouveau(m->run(), Verdict::kWarn);
  EXPECT_HAS(c.found, "blacklist nouveau, options nouveau modeset=0");
  m->fx.remove("/etc/modprobe.d/nvidia.conf");
  m->fx.symlink("/dev/null", "/run/modprobe.d/nvidia.conf");
  c = nouveau(m->run(), Verdict::kWarn);
  EXPECT_HAS(c.found, "blacklist nouveau, options nouveau modeset=0");
}

TEST(Nouveau, ContinuedLinesAreOneCommand) {
  auto m = withoutBlacklist();
  m->fx.write("/etc/modprobe.d/nouveau.conf", "blacklist nouveau\noptions nouveau \\\n  modeset=0\n");
  const Check c = nouveau(m->run(), Verdict::kPass);
  EXPECT_HAS(c.found, "options nouveau");
}

// Each GPU's node is /dev/nvidia<minor>, numbered in the driver's probe order. Two nodes for two
// GPUs is not enough when they are not those GPUs' nodes.
TEST(DeviceNodes, EachGpuNeedsTheNodeOfItsMinorNumber) {
  auto m = Machine::healthy();
  m->nvml.gpus[0].minor = 2;
  m->nvml.gpus[1].minor = 3;
  auto checks = m->run();
  const Check* c = findCheck(checks, "kernel.device_nodes");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(verdictName(c->verdict), verdictName(Verdict::kFail)) << c->found;
  EXPECT_HAS(c->found, "/dev/nvidia2 (GPU 0), /dev/nvidia3 (GPU 1)");
  EXPECT_HAS(c->found, "0 of 2 GPUs have their node");

  m->fx.remove("/dev/nvidia0");
  m->fx.remove("/dev/nvidia1");
  m->fx.write("/dev/nvidia2", "");
  m->fx.write("/dev/nvidia3", "");
  checks = m->run();
  c = findCheck(checks, "kernel.device_nodes");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(verdictName(c->verdict), verdictName(Verdict::kPass)) << c->found;
}

// Minor 0 is a minor NVML told (the first GPU's node, /dev/nvidia0), not "unknown": with it the
// nodes are checked GPU by GPU, and two nodes for two GPUs do not hide GPU 1's missing one.
TEST(DeviceNodes, MinorZeroIsAKnownMinor) {
  auto m = Machine::healthy();
  m->nvml.gpus[0].minor = 0;
  m->nvml.gpus[1].minor = 2;
  auto checks = m->run();
  const Check* c = findCheck(checks, "kernel.device_nodes");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(verdictName(c->verdict), verdictName(Verdict::kFail)) << c->found;
  EXPECT_HAS(c->found, "/dev/nvidia2 (GPU 1) (1 of 2 GPUs have their node)");
  EXPECT_EQ(c->found.find("GPU 0"), std::string::npos) << c->found;
}

// sysfs names a PCI domain with at least 4 hex digits, NVML with 8: domain 1 is "0001:" and
// "00000001:", and a domain past 0xFFFF (Intel VMD) keeps all its digits.
TEST(PciDomains, GpusOfOtherDomainsAreToldApart) {
  auto m = Machine::healthy();
  m->pciGpu("0001:3b:00.0");
  m->pciGpu("10000:3b:00.0");
  m->fx.write("/dev/nvidia2", "");
  m->fx.write("/dev/nvidia3", "");
  m->nvml.gpus.push_back({2, "NVIDIA A100-SXM4-80GB", "00000001:3B:00.0", 8, 0, true, false});
  m->nvml.gpus.push_back({3, "NVIDIA A100-SXM4-80GB", "00010000:3B:00.0", 8, 0, true, false});
  auto checks = m->run();
  const Check* c = findCheck(checks, "hw.pci_devices");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(verdictName(c->verdict), verdictName(Verdict::kPass)) << c->found;

  // NVML lost the domain-1 GPU: that one is missing, not its domain-0 namesake on bus 3b.
  m->nvml.gpus.erase(m->nvml.gpus.begin() + 2);
  checks = m->run();
  c = findCheck(checks, "hw.pci_devices");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(verdictName(c->verdict), verdictName(Verdict::kFail)) << c->found;
  EXPECT_HAS(c->found, "(missing: 0001:3b:00.0)");
}

}  // namespace
}  // namespace gw::doctor
