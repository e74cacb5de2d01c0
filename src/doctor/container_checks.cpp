// Container and system layer (R13): NVIDIA container runtime, GPUs passed into the container,
// /dev/shm size for data loaders, clock synchronisation and the time zone.
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

// A POSIX TZ rule ("CST-8", "EST5EDT,M3.2.0,M11.1.0") carries its own offset and needs no file:
// a name of three or more letters (or <...>) followed by an offset.
bool isPosixTzRule(const std::string& tz) {
  std::size_t i = 0;
  if (!tz.empty() && tz[0] == '<') {
    i = tz.find('>');
    if (i == std::string::npos) return false;
    ++i;
  } else {
    while (i < tz.size() && std::isalpha(static_cast<unsigned char>(tz[i]))) ++i;
    if (i < 3) return false;
  }
  if (i < tz.size() && (tz[i] == '+' || tz[i] == '-')) ++i;
  return i < tz.size() && std::isdigit(static_cast<unsigned char>(tz[i]));
}

// What a time-zone file path holds: "" when it is a usable zone file, else the problem.
std::string zoneFileProblem(const platform::FsRoot& root, const std::string& path) {
  if (!root.exists(path)) return "does not exist";
  if (root.isDirectory(path)) return "is a directory (a bind mount of a path the host lacks creates one)";
  auto head = root.readFile(path, 4);
  if (!head) return "cannot be read (" + head.error() + ")";
  if (*head != "TZif") return "is not a time-zone file (no TZif header)";
  return "";
}

// Seed 001 §2.3: a container whose clock reads differently from the host's (its time zone
// missing) made GPU jobs fail in ways that took long to trace; mount /etc/localtime or sync NTP.
// A missing or dangling /etc/localtime, or a TZ naming a zone that is not installed, makes glibc
// fall back to UTC without a word.
void timezoneCheck(Context& ctx) {
  const auto& root = ctx.in.root;
  const std::string title = "Time zone (/etc/localtime, TZ) resolves";
  const std::string explain =
      "Without a working time zone glibc silently uses UTC: the container's (or host's) log and checkpoint "
      "times disagree with the host's by the zone's offset, and schedules fire at the wrong hour. Seed 001 "
      "(§2.3) traced CUDA errors in GPU jobs to a container whose time differed from the host's; "
      "it mounts /etc/localtime into containers or syncs NTP.";
  const std::string zoneinfo = "/usr/share/zoneinfo";
  std::vector<std::string> problems;
  std::vector<std::string> facts;
  std::string fix;

  // TZ wins over /etc/localtime for every program that inherits it.
  bool tz_ok = false;
  if (ctx.hasEnv("TZ")) {
    std::string tz = ctx.env("TZ");
    if (!tz.empty() && tz[0] == ':') tz.erase(0, 1);
    if (tz.empty() || tz == "UTC" || tz == "GMT") {
      facts.push_back("TZ=" + ctx.env("TZ") + " (UTC)");  // UTC needs no zone file
      tz_ok = true;
    } else if (tz[0] == '/' || !isPosixTzRule(tz) || root.exists(zoneinfo + "/" + tz)) {
      const std::string file = tz[0] == '/' ? tz : zoneinfo + "/" + tz;
      const std::string why = zoneFileProblem(root, resolveLink(root, file));
      if (why.empty()) {
        facts.push_back("TZ=" + ctx.env("TZ") + " (" + file + ")");
        tz_ok = true;
      } else {
        problems.push_back("TZ=" + ctx.env("TZ") + " but " + file + " " + why);
        fix =
            "Install the zone data in the image (apt-get install tzdata / apk add tzdata / dnf install tzdata), "
            "or set TZ to an installed zone (ls " +
            zoneinfo + ")";
      }
    } else {
      facts.push_back("TZ=" + tz + " (a POSIX rule)");
      tz_ok = true;
    }
  }

  const std::string lt = "/etc/localtime";
  if (!root.exists(lt)) {
    if (ctx.container && !tz_ok) {
      problems.push_back(lt + " is missing: the container runs in UTC, whatever the host's zone");
      if (fix.empty())
        fix =
            "docker run -v /etc/localtime:/etc/localtime:ro ...   (or -e TZ=Area/City with tzdata in the image)\n"
            "Kubernetes: a hostPath volume for /etc/localtime (type: File), or env TZ";
    } else {
      facts.push_back(lt + " absent (" + std::string(ctx.container ? "TZ decides" : "the system uses UTC") + ")");
    }
  } else {
    const std::string target = resolveLink(root, lt);
    const std::string why = zoneFileProblem(root, target);
    const std::string shown = target == lt ? lt : lt + " -> " + target;
    if (why.empty()) {
      std::string zone;
      if (startsWith(target, zoneinfo + "/")) zone = target.substr(zoneinfo.size() + 1);
      facts.push_back(shown + (zone.empty() ? "" : " (" + zone + ")"));
    } else {
      problems.push_back(shown + " " + why);
      if (fix.empty())
        fix = ctx.container ? "Mount the host's zone: docker run -v /etc/localtime:/etc/localtime:ro ...\n"
                              "or install tzdata in the image and link a zone: ln -sf /usr/share/zoneinfo/Area/City "
                              "/etc/localtime\nKubernetes: a hostPath volume for /etc/localtime (type: File)"
                            : "sudo apt-get install --reinstall tzdata && sudo timedatectl set-timezone Area/City";
    }
  }
  if (!problems.empty()) {
    std::vector<std::string> all = problems;
    all.insert(all.end(), facts.begin(), facts.end());
    ctx.add("container.timezone", kL, Verdict::kWarn, title, join(all, "; "), fix, explain);
    return;
  }
  ctx.add("container.timezone", kL, Verdict::kPass, title, join(facts, "; "));
}

}  // namespace

void containerChecks(Context& ctx) {
  runtimeChecks(ctx);
  shmCheck(ctx);
  clockCheck(ctx);
  timezoneCheck(ctx);
}

}  // namespace gw::doctor::detail
