// Hardware layer: NVIDIA GPUs on the PCI bus, whatever the driver says.
#include <set>

#include "doctor/doctor_internal.h"

namespace gw::doctor::detail {
namespace {

// Display controllers: class 0x03xxxx (0x0300 VGA, 0x0302 3D controller). NVIDIA also exposes
// audio (0x0403), USB (0x0c03) and NVSwitch bridges (0x0680) functions, which are not GPUs.
bool isGpuClass(const std::string& klass) {
  std::string k = toLower(trim(klass));
  if (startsWith(k, "0x")) k = k.substr(2);
  return k.size() >= 2 && k.substr(0, 2) == "03";
}

std::vector<PciGpu> scanPci(const platform::FsRoot& root, bool* readable) {
  std::vector<PciGpu> gpus;
  auto devices = root.listDir("/sys/bus/pci/devices");
  *readable = devices.ok();
  if (!devices) return gpus;
  for (const auto& dev : *devices) {
    const std::string dir = "/sys/bus/pci/devices/" + dev;
    auto vendor = root.readLine(dir + "/vendor");
    if (!vendor || toLower(*vendor) != "0x10de") continue;
    auto klass = root.readLine(dir + "/class");
    if (!klass || !isGpuClass(*klass)) continue;
    PciGpu g;
    g.address = toLower(dev);
    g.device_id = root.readLine(dir + "/device").value_or("?");
    g.klass = *klass;
    if (auto drv = root.readLink(dir + "/driver")) g.driver = basename(*drv);
    gpus.push_back(std::move(g));
  }
  return gpus;
}

}  // namespace

void hardwareChecks(Context& ctx) {
  const auto& nvml = ctx.in.nvml;
  ctx.pci = scanPci(ctx.in.root, &ctx.pci_readable);

  if (ctx.wsl) {
    ctx.add("hw.pci_devices", Layer::kHardware, Verdict::kSkip, "NVIDIA GPUs on the PCI bus",
            "WSL2 (" + ctx.wsl_evidence + "): the GPU is paravirtualised through /dev/dxg, not on a PCI bus here", "",
            "Under WSL2 the Windows driver owns the GPU; Linux sees it only through /dev/dxg.");
    return;
  }
  if (!ctx.pci_readable) {
    ctx.add("hw.pci_devices", Layer::kHardware, Verdict::kSkip, "NVIDIA GPUs on the PCI bus",
            "/sys/bus/pci/devices is not readable");
    return;
  }

  std::vector<std::string> listed;
  for (const auto& g : ctx.pci) listed.push_back(g.address + " [" + g.device_id + "]");
  const int on_bus = static_cast<int>(ctx.pci.size());
  if (on_bus == 0) {
    if (ctx.container) {
      ctx.add("hw.pci_devices", Layer::kHardware, Verdict::kSkip, "NVIDIA GPUs on the PCI bus",
              "none visible in /sys from inside this container (" + ctx.container_evidence + ")", "",
              "Containers often see a filtered /sys; the container checks below tell whether GPUs were passed in.");
      return;
    }
    ctx.add(
        "hw.pci_devices", Layer::kHardware, Verdict::kFail, "NVIDIA GPUs on the PCI bus",
        "no PCI device with vendor 0x10de and a display class (0x03xxxx)",
        "Check that the card is seated and powered (auxiliary power cables), that the slot is enabled in the BIOS,\n"
        "and `lspci -nn | grep -i nvidia`. On a VM, check that the GPU is passed through.",
        "Without the device on the bus no driver can help: this is the hardware layer.");
    return;
  }

  std::string found = std::to_string(on_bus) + " (" + join(listed, ", ") + ")";
  if (nvml.library_loaded && nvml.init_return == 0 && static_cast<int>(nvml.gpus.size()) < on_bus) {
    std::set<std::string> seen;
    for (const auto& g : nvml.gpus) seen.insert(normalizeBusId(g.pci_bus_id));
    std::vector<std::string> missing;
    for (const auto& g : ctx.pci)
      if (!seen.count(g.address)) missing.push_back(g.address);
    ctx.add("hw.pci_devices", Layer::kHardware, Verdict::kFail, "NVIDIA GPUs on the PCI bus",
            found + "; NVML sees only " + std::to_string(nvml.gpus.size()) +
                (missing.empty() ? "" : " (missing: " + join(missing, ", ") + ")"),
            "Look for Xid 79 (\"GPU has fallen off the bus\") and other NVRM errors: `dmesg | grep -iE 'NVRM|Xid'`.\n"
            "Check the missing device's driver binding below; a GPU that fell off the bus needs a reset or reboot,\n"
            "and if it recurs the card, riser or slot must be replaced.",
            "The driver does not manage every NVIDIA GPU the bus shows.");
  } else {
    ctx.add("hw.pci_devices", Layer::kHardware, Verdict::kPass, "NVIDIA GPUs on the PCI bus",
            found + (nvml.library_loaded && nvml.init_return == 0 ? "; NVML sees " + std::to_string(nvml.gpus.size())
                                                                  : ""));
  }

  // Which kernel driver each device is bound to (sysfs `driver` link).
  std::vector<std::string> unbound, other, vfio;
  for (const auto& g : ctx.pci) {
    if (g.driver.empty()) {
      unbound.push_back(g.address);
    } else if (g.driver == "vfio-pci" || g.driver == "pci-stub") {
      vfio.push_back(g.address + " -> " + g.driver);
    } else if (g.driver != "nvidia") {
      other.push_back(g.address + " -> " + g.driver);
    }
  }
  // The binding is the kernel driver's job: a GPU on the bus without the nvidia driver is a
  // kernel-driver-layer failure, not a hardware one.
  constexpr Layer kBindLayer = Layer::kKernelDriver;
  const std::string title = "GPU PCI devices bound to the nvidia driver";
  if (!unbound.empty() || !other.empty()) {
    std::vector<std::string> parts;
    if (!unbound.empty()) parts.push_back("not bound to any driver: " + join(unbound, ", "));
    if (!other.empty()) parts.push_back("bound to another driver: " + join(other, ", "));
    const bool module = moduleLoaded(ctx.modules, "nvidia");
    std::string fix;
    if (moduleLoaded(ctx.modules, "nouveau") || join(other, ",").find("nouveau") != std::string::npos) {
      fix = "nouveau holds the GPU: blacklist it (see kernel.nouveau), `sudo update-initramfs -u`, reboot.\n";
    }
    if (!module) {
      fix +=
          "The nvidia kernel module is not loaded: `sudo modprobe nvidia`, then check `dmesg | grep -i nvrm`.\n"
          "If modprobe fails, the module is missing for this kernel (see kernel.module_build).";
    } else {
      fix +=
          "The module is loaded but did not take the device: `dmesg | grep -i nvrm` tells why (unsupported GPU\n"
          "for this driver branch, open vs proprietary module, RmInitAdapter failed); then reload the module or "
          "reboot.";
    }
    ctx.add("kernel.pci_binding", kBindLayer, Verdict::kFail, title, join(parts, "; "), fix,
            "This is what \"No devices were found\" from nvidia-smi means: the GPUs are on the bus, but the nvidia "
            "driver does not manage them.");
  } else if (!vfio.empty()) {
    ctx.add(
        "kernel.pci_binding", kBindLayer, Verdict::kWarn, title, "reserved for VM passthrough: " + join(vfio, ", "),
        "If these GPUs should serve this host, unbind them from vfio-pci (remove their ids from vfio-pci.ids=... on\n"
        "the kernel command line / /etc/modprobe.d) and reboot.",
        "A GPU bound to vfio-pci is invisible to the host driver and to nvidia-smi.");
  } else {
    ctx.add("kernel.pci_binding", kBindLayer, Verdict::kPass, title,
            "all " + std::to_string(on_bus) + " bound to nvidia");
  }
}

}  // namespace gw::doctor::detail
