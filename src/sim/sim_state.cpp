#include "sim/sim_state.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "sim/mig.h"
#include "sim/world.h"

namespace gw::sim {
namespace {

constexpr const char* kMagic = "gpuwarden-sim-state 1";
// A state file holds a few lines per GPU; anything larger is not one of ours.
constexpr std::size_t kMaxBytes = 1 << 20;

const char* statePath() {
  const char* p = std::getenv("GPUWARDEN_SIM_STATE");
  return p && *p ? p : nullptr;
}

std::string bootId() {
  const char* b = std::getenv("GPUWARDEN_SIM_BOOT");
  return b && *b ? b : "0";
}

Device* byUuid(World& w, const std::string& uuid) {
  for (auto& d : w.gpus)
    if (d->uuid == uuid) return d.get();
  return nullptr;
}

// MIG mode outlives a reboot (the driver keeps it), the instances do not: a new boot starts from
// the scenario's layout when the mode is the scenario's, with none otherwise. Within a boot the
// file's layout replaces the scenario's ("mig_layout" first, then its "gi" and "ci" lines).
std::string loadMig(Device& d, const std::string& key, const std::vector<unsigned>& v, bool same_boot) {
  if (!d.profile->mig_capable) return "MIG state for a GPU without MIG";
  if (key == "mig") {
    const bool on = v[0] != 0;
    if (on != d.mig_current.load()) {
      clearMigLayout(d);
      d.mig_current = on;
    }
    return "";
  }
  if (!same_boot) return "";
  if (key == "mig_layout") {
    clearMigLayout(d);
    return "";
  }
  if (key == "gi") {
    if (v.size() != 3) return "'gi' takes ID PROFILE_ID START";
    const MigProfile* p = migProfileById(d, v[1]);
    if (!p) return "no GPU instance profile " + std::to_string(v[1]) + " on " + std::string(d.profile->id);
    GpuInstance* gi = nullptr;
    if (createGpuInstance(d, *p, v[2], &gi) != NVML_SUCCESS)
      return "GPU instance " + std::to_string(v[0]) + " does not fit at " + std::to_string(v[2]);
    gi->id = v[0];
    std::sort(d.gpu_instances.begin(), d.gpu_instances.end(),
              [](const GpuInstance* x, const GpuInstance* y) { return x->id < y->id; });
    return "";
  }
  if (v.size() != 4) return "'ci' takes GI_ID ID PROFILE START";
  GpuInstance* gi = findGpuInstance(d, v[0]);
  if (!gi) return "compute instance on GPU instance " + std::to_string(v[0]) + ", which is not listed before it";
  ComputeInstance* ci = nullptr;
  if (createComputeInstance(*gi, v[2], v[1], v[3], &ci) != NVML_SUCCESS)
    return "compute instance " + std::to_string(v[1]) + " does not fit GPU instance " + std::to_string(v[0]);
  return "";
}

}  // namespace

bool loadSimState(World& world, std::string* error) {
  const char* path = statePath();
  if (!path) return true;
  std::ifstream in(path);
  if (!in) return true;  // nothing set yet
  std::string text(kMaxBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  auto bad = [&](const std::string& why) {
    *error = std::string("GPUWARDEN_SIM_STATE ") + path + ": " + why;
    return false;
  };
  if (text.size() > kMaxBytes) return bad("larger than 1 MiB, not a state file this simulator wrote");
  std::istringstream lines(text);
  std::string line;
  if (!std::getline(lines, line) || line != kMagic)
    return bad("not a simulator state file (no '" + std::string(kMagic) + "' first line)");
  bool same_boot = false;
  for (int n = 2; std::getline(lines, line); ++n) {
    std::istringstream f(line);
    std::string word, uuid, key;
    f >> word;
    if (word.empty()) continue;
    if (word == "boot") {
      std::string b;
      f >> b;
      same_boot = b == bootId();
      continue;
    }
    if (word == "scenario") {
      // Scenarios share GPU UUIDs (the same seed makes the same cards), so another scenario's
      // settings and MIG layout would land on this one's GPUs and contradict its file.
      std::string name;
      std::getline(f >> std::ws, name);
      if (name != world.scenario.name)
        return bad("written for scenario '" + name + "', not '" + world.scenario.name +
                   "': give each scenario a state file of its own, or remove this one");
      continue;
    }
    if (word != "gpu" || !(f >> uuid >> key)) return bad("line " + std::to_string(n) + " is not 'gpu UUID KEY VALUES'");
    std::vector<unsigned> v;
    for (unsigned x = 0; v.size() < 4 && f >> x;) v.push_back(x);
    if (v.empty()) return bad("line " + std::to_string(n) + ": '" + key + "' needs a number");
    const unsigned a = v[0], b = v.size() > 1 ? v[1] : 0;
    const bool two = v.size() > 1;
    Device* d = byUuid(world, uuid);
    if (!d) continue;  // another scenario's GPU: not this machine's
    if (key == "mig" || key == "mig_layout" || key == "gi" || key == "ci") {
      std::lock_guard lock(world.mig_mu);
      if (std::string why = loadMig(*d, key, v, same_boot); !why.empty())
        return bad("line " + std::to_string(n) + ": " + why);
      continue;
    }
    std::lock_guard lock(d->settings_mu);
    DeviceSettings& s = d->settings;
    if (key == "ecc" && two) {
      // A reboot applies the pending mode.
      s.ecc_current = same_boot ? a != 0 : b != 0;
      s.ecc_pending = b != 0;
      continue;
    }
    if (!same_boot) continue;  // everything else is lost with the driver
    if (key == "persistence") {
      d->persistence = a != 0;
    } else if (key == "power_mw") {
      d->physics->setPowerLimit(0, a);
    } else if (key == "gpu_locked" && two) {
      s.gpu_lock_min = a, s.gpu_lock_max = b;
    } else if (key == "mem_locked" && two) {
      s.mem_lock_min = a, s.mem_lock_max = b;
    } else if (key == "app_clocks" && two) {
      s.app_mem = a, s.app_graphics = b;
    } else if (key == "compute_mode") {
      s.compute_mode = a;
    } else {
      return bad("line " + std::to_string(n) + ": unknown setting '" + key + "'");
    }
  }
  return true;
}

bool saveSimState(const World& world, double t, std::string* error) {
  const char* path = statePath();
  if (!path) return true;
  std::ostringstream o;
  o << kMagic << "\nboot " << bootId() << "\nscenario " << world.scenario.name << "\n";
  for (const auto& d : world.gpus) {
    const DeviceSettings s = d->readSettings();
    const std::string g = "gpu " + d->uuid + " ";
    o << g << "persistence " << (d->persistence.load() ? 1 : 0) << "\n";
    o << g << "power_mw " << d->physics->powerLimitMwAt(t) << "\n";
    o << g << "gpu_locked " << s.gpu_lock_min << " " << s.gpu_lock_max << "\n";
    o << g << "mem_locked " << s.mem_lock_min << " " << s.mem_lock_max << "\n";
    o << g << "app_clocks " << s.app_mem << " " << s.app_graphics << "\n";
    o << g << "compute_mode " << s.compute_mode << "\n";
    o << g << "ecc " << (s.ecc_current ? 1 : 0) << " " << (s.ecc_pending ? 1 : 0) << "\n";
    if (!d->profile->mig_capable) continue;
    std::lock_guard lock(world.mig_mu);
    const bool mig = d->mig_current.load();
    o << g << "mig " << (mig ? 1 : 0) << " " << (mig ? 1 : 0) << "\n";
    if (!mig) continue;
    o << g << "mig_layout 1\n";
    for (const GpuInstance* gi : d->gpu_instances) {
      o << g << "gi " << gi->id << " " << gi->profile->id << " " << gi->start << "\n";
      for (const ComputeInstance* ci : gi->cis)
        o << g << "ci " << gi->id << " " << ci->id << " " << ci->profile << " " << ci->start << "\n";
    }
  }
  const std::string text = o.str();
  const std::string tmp = std::string(path) + ".tmp." + std::to_string(::getpid());
  auto fail = [&](const std::string& what) {
    *error = std::string("GPUWARDEN_SIM_STATE ") + path + ": " + what + ": " + std::strerror(errno);
    ::unlink(tmp.c_str());
    return false;
  };
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return fail("cannot create " + tmp);
  for (std::size_t done = 0; done < text.size();) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(fd);
      return fail("cannot write " + tmp);
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) {
    ::close(fd);
    return fail("cannot fsync " + tmp);
  }
  ::close(fd);
  if (::rename(tmp.c_str(), path) != 0) return fail("cannot rename " + tmp);
  return true;
}

}  // namespace gw::sim
