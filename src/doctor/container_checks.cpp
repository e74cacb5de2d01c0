// Container and system layer (R13): NVIDIA container runtime, GPUs passed into the container,
// /dev/shm size for data loaders, and clock synchronisation.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdint>

#include "doctor/doctor_internal.h"

namespace gw::doctor::detail {
namespace {

constexpr Layer kL = Layer::kContainer;
constexpr std::uint64_t kGiB = 1ull << 30;

// "size=65536k" -> bytes; 0 when absent or relative ("50%").
std::uint64_t parseSizeOption(const std::string& options) {
  for (const auto& opt : split(options, ',')) {
    if (!startsWith(opt, "size=")) continue;
    std::string v = opt.substr(5);
    if (v.empty() || v.back() == '%') return 0;
    std::uint64_t mult = 1;
    switch (std::tolower(static_cast<unsigned char>(v.back()))) {
      case 'k':
        mult = 1ull << 10;
        v.pop_back();
        break;
      case 'm':
        mult = 1ull << 20;
        v.pop_back();
        break;
      case 'g':
        mult = 1ull << 30;
        v.pop_back();
        break;
      case 't':
        mult = 1ull << 40;
        v.pop_back();
        break;
      default:
        break;
    }
    if (v.empty() || !std::all_of(v.begin(), v.end(), [](unsigned char c) { return std::isdigit(c); })) return 0;
    if (v.size() > 15) return 0;
    return std::stoull(v) * mult;
  }
  return 0;
}

std::string human(std::uint64_t bytes) {
  char buf[32];
  if (bytes >= kGiB) {
    std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(bytes) / static_cast<double>(kGiB));
  } else {
    std::snprintf(buf, sizeof buf, "%llu MiB", static_cast<unsigned long long>(bytes >> 20));
  }
  return buf;
}

void runtimeChecks(Context& ctx) {
  const auto& root = ctx.in.root;
  if (ctx.container) {
    // Inside: were the GPUs passed in?
    const bool proc = root.exists("/proc/driver/nvidia");
    const bool ctl = root.exists("/dev/nvidiactl");
    const bool visible_set = ctx.hasEnv("NVIDIA_VISIBLE_DEVICES");
    const std::string visible = ctx.env("NVIDIA_VISIBLE_DEVICES");
    std::string found = "in a container (" + ctx.container_evidence + "); /proc/driver/nvidia " +
                        (proc ? "visible" : "absent") + ", /dev/nvidiactl " + (ctl ? "present" : "absent") +
                        ", NVIDIA_VISIBLE_DEVICES=" + (visible_set ? visible : "(unset)");
    const bool disabled = visible == "void" || visible == "none" || visible.empty();
    if ((!proc && !ctl) || (visible_set && disabled)) {
      ctx.add("container.gpu_access", kL, Verdict::kFail, "GPUs passed into the container", found,
              "docker run --gpus all ...   (or --runtime=nvidia -e NVIDIA_VISIBLE_DEVICES=all)\n"
              "Kubernetes: request resources.limits nvidia.com/gpu: 1 (NVIDIA device plugin / GPU operator)\n"
              "On the host: install nvidia-container-toolkit and `sudo nvidia-ctk runtime configure --runtime=docker "
              "&& sudo systemctl restart docker`.",
              "The NVIDIA container toolkit injects the driver libraries, /dev/nvidia* and /proc/driver/nvidia; "
              "without it the container sees no GPU.");
    } else if (!visible_set) {
      ctx.add("container.gpu_access", kL, Verdict::kWarn, "GPUs passed into the container", found,
              "Prefer `--gpus` / the NVIDIA runtime over mounting /dev/nvidia* by hand (--privileged), so the "
              "driver libraries match the host's.",
              "GPU devices are visible but NVIDIA_VISIBLE_DEVICES is unset: they were probably mounted by hand.");
    } else {
      ctx.add("container.gpu_access", kL, Verdict::kPass, "GPUs passed into the container", found);
    }
    return;
  }
  // Host: a container engine without the NVIDIA container toolkit cannot give GPUs to containers.
  std::vector<std::string> engines;
  for (const char* e : {"/usr/bin/docker", "/usr/bin/dockerd", "/usr/bin/containerd", "/usr/bin/podman",
                        "/usr/local/bin/k3s", "/usr/bin/crio"})
    if (root.exists(e)) engines.push_back(basename(e));
  if (engines.empty()) {
    ctx.add("container.runtime", kL, Verdict::kSkip, "NVIDIA container toolkit on the host",
            "no container engine installed");
    return;
  }
  std::vector<std::string> toolkit;
  for (const char* p :
       {"/usr/bin/nvidia-container-runtime", "/usr/bin/nvidia-container-toolkit",
        "/usr/bin/nvidia-container-runtime-hook", "/usr/bin/nvidia-ctk", "/etc/nvidia-container-runtime/config.toml"})
    if (root.exists(p)) toolkit.push_back(p);
  if (toolkit.empty()) {
    ctx.add("container.runtime", kL, Verdict::kWarn, "NVIDIA container toolkit on the host",
            "container engine (" + join(engines, ", ") + ") without the NVIDIA container toolkit",
            "Install nvidia-container-toolkit (NVIDIA's apt/yum repository), then:\n"
            "sudo nvidia-ctk runtime configure --runtime=docker && sudo systemctl restart docker\n"
            "Test: docker run --rm --gpus all ubuntu nvidia-smi",
            "`docker run --gpus all` fails with \"could not select device driver \"\" with capabilities: [[gpu]]\".");
  } else {
    ctx.add("container.runtime", kL, Verdict::kPass, "NVIDIA container toolkit on the host",
            join(engines, ", ") + " with " + join(toolkit, ", "));
  }
}

void shmCheck(Context& ctx) {
  const auto& root = ctx.in.root;
  std::uint64_t size = 0;
  std::string source;
  if (auto mounts = root.readFile("/proc/mounts")) {
    for (const auto& l : lines(*mounts)) {
      auto f = split(l, ' ');
      if (f.size() >= 4 && f[1] == "/dev/shm") {
        size = parseSizeOption(f[3]);
        if (size) source = "/proc/mounts";
      }
    }
  }
  if (!size) {
    if (auto s = root.filesystemSize("/dev/shm"); s && *s > 0) {
      size = *s;
      source = "statvfs";
    }
  }
  const std::string title = "/dev/shm large enough for data loaders";
  if (!size) {
    ctx.add("container.shm", kL, Verdict::kSkip, title, "/dev/shm size unknown");
    return;
  }
  const std::string found = human(size) + " (" + source + ")";
  if (size < kGiB) {
    ctx.add("container.shm", kL, ctx.container ? Verdict::kFail : Verdict::kWarn, title, found + " < 1 GiB",
            ctx.container ? "docker run --shm-size=16g ...   or --ipc=host\n"
                            "Kubernetes: mount an emptyDir with medium: Memory at /dev/shm"
                          : "sudo mount -o remount,size=16G /dev/shm   # and set it in /etc/fstab",
            "PyTorch DataLoader workers pass batches through shared memory; with Docker's 64 MB default they die "
            "with \"Bus error\" / \"DataLoader worker (pid N) is killed by signal: Bus error\".");
  } else {
    ctx.add("container.shm", kL, Verdict::kPass, title, found);
  }
}

void clockCheck(Context& ctx) {
  const auto& root = ctx.in.root;
  const std::string title = "System clock synchronised";
  if (root.exists("/run/systemd/timesync/synchronized")) {
    ctx.add("container.clock", kL, Verdict::kPass, title, "systemd-timesyncd reports synchronised");
    return;
  }
  for (const auto& p : processNames(root)) {
    if (p == "chronyd" || p == "ntpd" || p == "systemd-timesyn" || p == "ntpsec" || p == "openntpd") {
      ctx.add("container.clock", kL, Verdict::kPass, title, p + " is running");
      return;
    }
  }
  if (ctx.container) {
    ctx.add("container.clock", kL, Verdict::kSkip, title,
            "in a container: the clock is the host's; check NTP on the host");
    return;
  }
  ctx.add("container.clock", kL, Verdict::kWarn, title, "no NTP client found (chronyd, ntpd, systemd-timesyncd)",
          "sudo apt-get install chrony && sudo systemctl enable --now chrony   # or: sudo timedatectl set-ntp true",
          "Clock not synchronised: skew between nodes breaks distributed training (NCCL/elastic timeouts, "
          "rendezvous), TLS certificate checks and the ordering of logs and metrics.");
}

}  // namespace

void containerChecks(Context& ctx) {
  runtimeChecks(ctx);
  shmCheck(ctx);
  clockCheck(ctx);
}

}  // namespace gw::doctor::detail
