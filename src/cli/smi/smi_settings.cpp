#include "cli/smi/smi_settings.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <optional>

#include <fmt/format.h>

#include "cli/commands.h"
#include "node/control_protocol.h"
#include "nvml/errors.h"
#include "platform/clock.h"
#include "platform/deadline.h"

namespace gw::cli::smi {
namespace {

using K = SettingRequest::Kind;
using json = nlohmann::json;

constexpr const char* kTerminating = "Terminating early due to previous errors.\n";
// One GPU's change: the reads before and after and the setter, or the kernel's PCI reset (-r),
// which takes a real GPU a few seconds.
constexpr std::chrono::milliseconds kSettingDeadline = 5 * kCallDeadline;
// One GPU's MIG change: -cgi with -C may create seven GPU instances and their compute instances.
constexpr std::chrono::milliseconds kMigDeadlinePerGpu = 3 * kSettingDeadline;

using Gpu = SmiGpu;

std::string watts(unsigned mw) { return fmt::format("{:.2f} W", mw / 1000.0); }
std::string onOff(bool on) { return on ? "Enabled" : "Disabled"; }
std::string mhz(const Result<unsigned>& r) { return r ? std::to_string(*r) + " MHz" : "N/A"; }

int exitFor(const Status& st) { return smiExitFor(st); }

}  // namespace

int smiExitFor(const Status& st) {
  switch (st.nvmlCode()) {
    case NVML_ERROR_NO_PERMISSION:
      return kSmiNoPermission;
    case NVML_ERROR_NOT_SUPPORTED:
    case NVML_ERROR_FUNCTION_NOT_FOUND:
      return kSmiNotSupported;
    case NVML_ERROR_INVALID_ARGUMENT:
      return kSmiInvalidArgument;
    case NVML_ERROR_GPU_IS_LOST:
      return kSmiGpuLost;
    case NVML_ERROR_IN_USE:
      return kSmiInUse;
    case NVML_ERROR_NOT_FOUND:
      return kSmiNotFound;
    case NVML_ERROR_INSUFFICIENT_RESOURCES:
      return kSmiInsufficientResources;
    default:
      return kSmiOther;
  }
}

// Which privilege was missing: NVML says only NO_PERMISSION.
std::string missingPrivilege() {
  const uid_t uid = ::geteuid();
  if (uid != 0)
    return "gpuwarden: changing GPU settings needs root: this process runs as uid " + std::to_string(uid) +
           ". Run it as root (sudo), or let the gpuwarden agent (root) apply it: smi sends settings to the agent "
           "that serves $GPUWARDEN_DATA_DIR when one runs.\n";
  return "gpuwarden: this process runs as root, yet the driver refused: the GPU's settings are not changeable from "
         "here (a container without CAP_SYS_ADMIN, or a simulator scenario with privileged: false).\n";
}

node::Record settingRecord(const SmiGpu& g, const std::string& flag, const std::string& who, std::int64_t now_ms,
                           const std::string& summary, json changes) {
  node::Record rec;
  rec.time_ms = now_ms;
  rec.kind = "setting";
  rec.who = who;
  rec.summary = "GPU " + g.bus_id + ": " + summary;
  rec.state = json{{"gpu", g.uuid}, {"index", g.index}, {"bus_id", g.bus_id}, {"flag", flag}};
  rec.changes = std::move(changes);
  return rec;
}

node::Record unansweredSettingRecord(const SmiGpu& g, const std::string& flag, const std::string& who,
                                     std::int64_t now_ms, std::chrono::milliseconds deadline) {
  node::Record rec = settingRecord(g, flag, who, now_ms,
                                   flag + " sent, no answer from NVML within " + std::to_string(deadline.count()) +
                                       " ms: whether it changed is unknown",
                                   json::array());
  rec.state["outcome"] = "unknown";
  return rec;
}

json settingChange(const std::string& what, const std::string& before, const std::string& after) {
  return json{{"what", what}, {"before", before}, {"after", after}};
}

std::chrono::milliseconds agentSettingWait() { return kCallDeadline + 16 * kMigDeadlinePerGpu; }

namespace {

class Applier {
 public:
  Applier(const nvml::Session& session, const platform::FsRoot& root, const SettingRequest& r, std::string who,
          std::int64_t now_ms)
      : session_(session), root_(root), r_(r), who_(std::move(who)), now_ms_(now_ms) {}

  SettingOutcome run(const std::string& ids) {
    std::vector<Gpu> gpus;
    if (!select(ids, &gpus)) return std::move(o_);
    if (isMigCommand(r_.kind)) return migUnderDeadline(gpus);
    bool changed_ecc = false;
    for (const auto& g : gpus) {
      if (!oneUnderDeadline(g, &changed_ecc)) {
        o_.err += kTerminating;
        return std::move(o_);
      }
    }
    o_.out += "All done.\n";
    if (changed_ecc) o_.out += "Reboot required.\n";
    return std::move(o_);
  }

 private:
  // Copies, not references: a GPU's change runs on a worker that is abandoned when the driver
  // does not answer, and the worker keeps its own Applier alive (the session outlives it).
  const nvml::Session& session_;
  const platform::FsRoot root_;
  const SettingRequest r_;
  std::string who_;
  std::int64_t now_ms_;
  SettingOutcome o_;

  bool select(const std::string& ids, std::vector<Gpu>* out) {
    auto count = session_.deviceCount();
    if (!count) return fail(kSmiOther, "gpuwarden: " + count.status().message() + "\n");
    const GpuSelection sel = parseSelection(ids);
    // Identity under the call deadline: a hung GPU must not hold the command up.
    struct Id {
      Result<nvml::Device> d = Status::Error("not read");
      std::string uuid, bus_id;
    };
    const nvml::Session* session = &session_;
    auto ids_read = platform::runEachWithDeadline<Id>(
        *count,
        [session](std::size_t i) {
          Id id;
          id.d = session->deviceByIndex(static_cast<unsigned>(i));
          if (id.d) {
            id.uuid = id.d->uuid().value_or("");
            if (auto pci = id.d->pciInfo()) id.bus_id = pci->bus_id;
          }
          return id;
        },
        kCallDeadline);
    for (unsigned i = 0; i < *count; ++i) {
      if (!ids_read[i]) {
        if (!sel.matches(i, "", "")) continue;
        o_.err += noHandleLine(std::to_string(i), nvml::noAnswer(kCallDeadline));
        return fail(kSmiOther, kTerminating);
      }
      auto& d = ids_read[i]->d;
      Gpu g;
      g.index = i;
      g.uuid = ids_read[i]->uuid;
      g.bus_id = ids_read[i]->bus_id;
      if (d) g.device = *d;
      if (!sel.matches(i, g.uuid, g.bus_id)) continue;
      if (!d) {
        o_.err += noHandleLine(std::to_string(i), d.status().message());
        return fail(exitFor(d.status()), kTerminating);
      }
      out->push_back(std::move(g));
    }
    if (out->empty()) {
      return fail(kSmiNotFound, "No devices were found\n" +
                                    (ids.empty() ? std::string() : "gpuwarden: no GPU matches -i " + ids + "\n"));
    }
    return true;
  }

  bool fail(int exit, const std::string& err) {
    o_.exit = exit;
    o_.err += err;
    return false;
  }

  // NVML refused: nvidia-smi's sentence, then which privilege (or value) was at fault.
  bool refused(const Gpu& g, const std::string& what, const Status& st) {
    const int exit = exitFor(st);
    if (exit == kSmiNoPermission) {
      o_.err += "Failed to " + what + " for GPU " + g.bus_id + ": Insufficient Permissions\n" + missingPrivilege();
    } else if (exit == kSmiNotSupported) {
      o_.err += "Failed to " + what + " for GPU " + g.bus_id + ": Not Supported\n";
    } else {
      o_.err += "Failed to " + what + " for GPU " + g.bus_id + ": " + st.message() + "\n";
    }
    o_.exit = exit;
    return false;
  }

  void record(const Gpu& g, const std::string& summary, json changes) {
    o_.records.push_back(settingRecord(g, r_.flag, who_, now_ms_, summary, std::move(changes)));
  }
  static json change(const std::string& what, const std::string& before, const std::string& after) {
    return settingChange(what, before, after);
  }
  // A change that was sent and not answered may have happened: the record says it was tried.
  void recordUnanswered(const Gpu& g, std::chrono::milliseconds deadline) {
    o_.records.push_back(unansweredSettingRecord(g, r_.flag, who_, now_ms_, deadline));
  }

  // One GPU's change on a worker of its own, so that a GPU that answered its identity but hangs
  // in a setter stops the command at the deadline (exit 255) instead of holding it, or the
  // agent's control thread, forever. The worker changes a copy of this Applier; its lines and
  // records join ours only when it finished in time.
  bool oneUnderDeadline(const Gpu& g, bool* changed_ecc) {
    auto worker = std::make_shared<Applier>(session_, root_, r_, who_, now_ms_);
    struct Done {
      bool ok = false, changed_ecc = false;
    };
    auto r = platform::runWithDeadline<Done>(
        [worker, g] {
          Done d;
          d.ok = worker->one(g, &d.changed_ecc);
          return d;
        },
        kSettingDeadline);
    if (!r) {
      o_.err += "Unable to change the setting of GPU " + g.bus_id + ": " + nvml::noAnswer(kSettingDeadline) +
                "; whether it changed is unknown (read it back with `gpuwarden smi -q -i " + std::to_string(g.index) +
                "`)\n";
      recordUnanswered(g, kSettingDeadline);
      o_.exit = kSmiOther;
      return false;
    }
    o_.out += worker->o_.out;
    o_.err += worker->o_.err;
    for (auto& rec : worker->o_.records) o_.records.push_back(std::move(rec));
    if (!r->ok) o_.exit = worker->o_.exit;
    if (r->changed_ecc) *changed_ecc = true;
    return r->ok;
  }

  // nvidia-smi mig's tables span the GPUs, so its run is bounded as a whole, by its GPUs' bounds.
  // What an abandoned run did is not known, and its records are lost with it: the message says
  // how to read the layout back.
  SettingOutcome migUnderDeadline(const std::vector<Gpu>& gpus) {
    struct Job {
      const nvml::Session* session;
      SettingRequest r;
      std::vector<Gpu> gpus;
      std::string who;
      std::int64_t now_ms;
    };
    auto job = std::make_shared<Job>(Job{&session_, r_, gpus, who_, now_ms_});
    const auto deadline = kMigDeadlinePerGpu * static_cast<int>(gpus.size());
    auto r = platform::runWithDeadline<SettingOutcome>(
        [job] { return applyMig(*job->session, job->gpus, job->r, job->who, job->now_ms); }, deadline);
    if (r) return std::move(*r);
    std::string which;
    for (const auto& g : gpus) which += (which.empty() ? "" : ", ") + g.bus_id;
    o_.err +=
        "Unable to " + std::string(isMigList(r_.kind) ? "list the MIG layout" : "change the MIG layout") + " of GPU " +
        which + ": " + nvml::noAnswer(deadline) +
        (isMigList(r_.kind) ? "\n" : "; whether it changed is unknown (read it back with `gpuwarden smi mig -lgi`)\n");
    if (!isMigList(r_.kind))
      for (const auto& g : gpus) recordUnanswered(g, deadline);
    o_.exit = kSmiOther;
    return std::move(o_);
  }

  bool one(const Gpu& g, bool* changed_ecc) {
    const nvml::Device& d = g.device;
    switch (r_.kind) {
      case K::Persistence: {
        auto before = d.persistenceMode();
        if (before && *before == r_.on) {
          o_.out += "Persistence mode is already " + onOff(r_.on) + " for GPU " + g.bus_id + ".\n";
          return true;
        }
        if (Status st = d.setPersistenceMode(r_.on); !st) return refused(g, "set persistence mode", st);
        auto after = d.persistenceMode();
        o_.out += onOff(r_.on) + " persistence mode for GPU " + g.bus_id + ".\n";
        const std::string b = before ? onOff(*before) : "N/A", a = after ? onOff(*after) : "N/A";
        record(g, "persistence mode " + b + " → " + a, json::array({change("persistence_mode", b, a)}));
        return true;
      }
      case K::PowerLimit: {
        const unsigned mw = static_cast<unsigned>(std::lround(r_.watts * 1000));
        auto range = d.powerLimitConstraintsMw();
        // nvidia-smi checks the board's range itself and names it.
        if (range && (mw < range->first || mw > range->second)) {
          o_.err += fmt::format(
              "Provided power limit {:.2f} W is not a valid power limit which should be between {:.2f} W and {:.2f} W "
              "for GPU {}\n",
              r_.watts, range->first / 1000.0, range->second / 1000.0, g.bus_id);
          o_.exit = kSmiInvalidArgument;
          return false;
        }
        auto before = d.powerLimitMw();
        if (Status st = d.setPowerLimitMw(mw); !st) {
          if (st.nvmlCode() == NVML_ERROR_NO_PERMISSION || st.nvmlCode() == NVML_ERROR_NOT_SUPPORTED)
            o_.err += "Changing power management limit is not supported in current scope for GPU: " + g.bus_id + ".\n";
          return refused(g, "set power management limit", st);
        }
        auto after = d.powerLimitMw();
        const std::string b = before ? watts(*before) : "N/A", a = after ? watts(*after) : "N/A";
        o_.out += "Power limit for GPU " + g.bus_id + " was set to " + a + " from " + b + ".\n";
        record(g, "power limit " + b + " → " + a, json::array({change("power.limit", b, a)}));
        return true;
      }
      case K::LockGpuClocks:
      case K::LockMemoryClocks: {
        const bool gpu = r_.kind == K::LockGpuClocks;
        const nvmlClockType_t type = gpu ? NVML_CLOCK_GRAPHICS : NVML_CLOCK_MEM;
        // NVML has no reader of the locked range: the record keeps the clock it runs at.
        auto before = d.clock(type);
        Status st = gpu ? d.setGpuLockedClocks(r_.a, r_.b) : d.setMemoryLockedClocks(r_.a, r_.b);
        if (!st) {
          if (st.nvmlCode() == NVML_ERROR_INVALID_ARGUMENT) {
            auto max = d.maxClock(type);
            o_.err += fmt::format("Requested {} clocks {},{} MHz are outside what GPU {} supports{}\n",
                                  gpu ? "GPU" : "memory", r_.a, r_.b, g.bus_id,
                                  max ? fmt::format(" (its highest is {} MHz)", *max) : std::string());
          }
          return refused(g, gpu ? "set GPU locked clocks" : "set memory locked clocks", st);
        }
        auto after = d.clock(type);
        o_.out += fmt::format("{} clocks set to \"({}ClkMin {}, {}ClkMax {})\" for GPU {}\n", gpu ? "GPU" : "Memory",
                              gpu ? "gpu" : "mem", r_.a, gpu ? "gpu" : "mem", r_.b, g.bus_id);
        const std::string what = gpu ? "clocks.gr" : "clocks.mem";
        record(g, fmt::format("{} locked to {}-{} MHz", gpu ? "GPU clocks" : "memory clocks", r_.a, r_.b),
               json::array(
                   {change(what + " (locked range)", "not locked by gpuwarden", fmt::format("{}-{} MHz", r_.a, r_.b)),
                    change(what, mhz(before), mhz(after))}));
        return true;
      }
      case K::ResetGpuClocks:
      case K::ResetMemoryClocks: {
        const bool gpu = r_.kind == K::ResetGpuClocks;
        const nvmlClockType_t type = gpu ? NVML_CLOCK_GRAPHICS : NVML_CLOCK_MEM;
        auto before = d.clock(type);
        Status st = gpu ? d.resetGpuLockedClocks() : d.resetMemoryLockedClocks();
        if (!st) return refused(g, gpu ? "reset GPU locked clocks" : "reset memory locked clocks", st);
        auto after = d.clock(type);
        o_.out += std::string(gpu ? "GPU" : "Memory") + " locked clocks reset to default for GPU " + g.bus_id + ".\n";
        const std::string what = gpu ? "clocks.gr" : "clocks.mem";
        record(g, std::string(gpu ? "GPU" : "memory") + " locked clocks reset",
               json::array(
                   {change(what + " (locked range)", "as locked", "default"), change(what, mhz(before), mhz(after))}));
        return true;
      }
      case K::ApplicationsClocks:
      case K::ResetApplicationsClocks: {
        const bool reset = r_.kind == K::ResetApplicationsClocks;
        auto mem0 = d.appClock(NVML_CLOCK_MEM), gr0 = d.appClock(NVML_CLOCK_GRAPHICS);
        Status st = reset ? d.resetApplicationsClocks() : d.setApplicationsClocks(r_.a, r_.b);
        if (!st) {
          if (!reset && st.nvmlCode() == NVML_ERROR_INVALID_ARGUMENT) {
            o_.err += fmt::format(
                "Specified clock combination \"(MEM {}, SM {})\" is not supported for GPU {}. Run 'nvidia-smi -q -d "
                "SUPPORTED_CLOCKS' to see list of supported clock combinations\n",
                r_.a, r_.b, g.bus_id);
            o_.exit = kSmiInvalidArgument;
            return false;
          }
          return refused(g, reset ? "reset applications clocks" : "set applications clocks", st);
        }
        auto mem1 = d.appClock(NVML_CLOCK_MEM), gr1 = d.appClock(NVML_CLOCK_GRAPHICS);
        if (reset)
          o_.out += "Applications clocks reset to default for GPU " + g.bus_id + ".\n";
        else
          o_.out += fmt::format("Applications clocks set to \"(MEM {}, SM {})\" for GPU {}\n", r_.a, r_.b, g.bus_id);
        record(g, reset ? "applications clocks reset" : fmt::format("applications clocks MEM {}, SM {}", r_.a, r_.b),
               json::array({change("clocks.applications.memory", mhz(mem0), mhz(mem1)),
                            change("clocks.applications.graphics", mhz(gr0), mhz(gr1))}));
        return true;
      }
      case K::ComputeMode: {
        auto before = d.computeMode();
        const std::string name = computeModeWord(r_.a);
        if (before && *before == r_.a) {
          o_.out += "Compute mode is already set to " + name + " for GPU " + g.bus_id + ".\n";
          return true;
        }
        if (Status st = d.setComputeMode(r_.a); !st) return refused(g, "set compute mode", st);
        auto after = d.computeMode();
        o_.out += "Set compute mode to " + name + " for GPU " + g.bus_id + ".\n";
        const std::string b = before ? computeModeWord(*before) : "N/A", a = after ? computeModeWord(*after) : "N/A";
        record(g, "compute mode " + b + " → " + a, json::array({change("compute_mode", b, a)}));
        return true;
      }
      case K::Ecc: {
        auto before = d.eccModes();  // {current, pending}
        if (before && before->second == r_.on) {
          o_.out += "ECC support is already " + onOff(r_.on) + " for GPU " + g.bus_id + ".\n";
          return true;
        }
        if (Status st = d.setEccMode(r_.on); !st) return refused(g, "set ECC configuration", st);
        auto after = d.eccModes();
        o_.out += onOff(r_.on) + " ECC support for GPU " + g.bus_id + ".\n";
        *changed_ecc = true;
        auto pending = [](const Result<std::pair<bool, bool>>& m) {
          return m ? onOff(m->first) + " (pending " + onOff(m->second) + ")" : std::string("N/A");
        };
        record(g, "ECC " + pending(before) + " → " + pending(after) + ", reboot required",
               json::array({change("ecc.mode", pending(before), pending(after))}));
        return true;
      }
      case K::Reset:
        return reset(g);
      case K::MigMode:
        return migMode(g);
      default:  // nvidia-smi mig: applyMig
        return true;
    }
    return true;
  }

  // -mig: the driver resets the GPU to switch; on bare metal the new mode is current at once,
  // elsewhere (a VM, a GPU it could not reset) NVML leaves it pending and says so.
  bool migMode(const Gpu& g) {
    const nvml::Device& d = g.device;
    auto before = d.migModes();  // {current, pending}
    nvmlReturn_t activation = NVML_SUCCESS;
    if (Status st = d.setMigMode(r_.on, &activation); !st) {
      if (st.nvmlCode() == NVML_ERROR_IN_USE) {
        o_.err += "Unable to " + std::string(r_.on ? "enable" : "disable") + " MIG Mode for GPU " + g.bus_id +
                  ": In use by another client\ngpuwarden: the driver resets the GPU to change its MIG mode: stop "
                  "the processes on it" +
                  std::string(r_.on ? "" : " and destroy its GPU instances (smi mig -dci, then smi mig -dgi)") +
                  " first.\n";
        o_.exit = kSmiInUse;
        return false;
      }
      return refused(g, std::string(r_.on ? "enable" : "disable") + " MIG Mode", st);
    }
    auto after = d.migModes();
    o_.out += onOff(r_.on) + " MIG Mode for GPU " + g.bus_id + "\n";
    if (activation != NVML_SUCCESS) {
      o_.out += "Warning: MIG mode is in pending " + std::string(r_.on ? "enable" : "disable") + " state for GPU " +
                g.bus_id + ":" + nvml::errorMeaning(activation) +
                "\nReboot the system or try nvidia-smi --gpu-reset to make MIG mode effective on GPU " + g.bus_id +
                "\n";
    }
    auto mode = [](const Result<std::pair<bool, bool>>& m) {
      return m ? onOff(m->first) + " (pending " + onOff(m->second) + ")" : std::string("N/A");
    };
    record(g, "MIG mode " + mode(before) + " → " + mode(after),
           json::array({change("mig.mode", mode(before), mode(after))}));
    return true;
  }

  // NVML has no public reset (nvidia-smi -r goes through the driver's private interface), so -r
  // is the kernel's PCI function-level reset: the `reset` file of the device in sysfs.
  bool reset(const Gpu& g) {
    const nvml::Device& d = g.device;
    std::size_t procs = 0;
    if (auto c = d.computeProcesses()) procs += c->size();
    if (auto gr = d.graphicsProcesses()) procs += gr->size();
    if (procs > 0) {
      o_.err += "GPU " + g.bus_id +
                " is currently in use by another process.\n\n1 device is currently being used by one or more other "
                "processes (e.g., Fabric Manager, CUDA application, graphics application such as an X server, or a "
                "monitoring application such as another instance of nvidia-smi). Please first kill all processes "
                "using this device and all compute applications running in the system.\n";
      o_.exit = kSmiInUse;
      return false;
    }
    // sysfs names the device with a 4-digit domain, in lower case.
    std::string bdf = g.bus_id.size() > 4 ? g.bus_id.substr(4) : g.bus_id;
    for (auto& ch : bdf) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    const std::string path = root_.path("/sys/bus/pci/devices/" + bdf + "/reset");
    if (::access(path.c_str(), F_OK) != 0) {
      o_.err += "GPU Reset couldn't run because GPU " + g.bus_id + " does not support it.\ngpuwarden: " + path +
                " does not exist: the kernel offers no function-level reset for this device.\n";
      o_.exit = kSmiNotSupported;
      return false;
    }
    // A trigger, not a file we keep: written in place (no temporary file, no rename).
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
      const int e = errno;
      if (e == EACCES || e == EPERM) {
        o_.err += "Unable to reset GPU " + g.bus_id + ": Insufficient Permissions\ngpuwarden: writing " + path +
                  " needs root (uid " + std::to_string(::geteuid()) + " may not). Run it as root (sudo).\n";
        o_.exit = kSmiNoPermission;
      } else {
        o_.err += "Unable to reset GPU " + g.bus_id + ": cannot open " + path + ": " + std::strerror(e) + "\n";
        o_.exit = kSmiOther;
      }
      return false;
    }
    const ssize_t n = ::write(fd, "1\n", 2);
    const int e = errno;
    ::close(fd);
    if (n != 2) {
      o_.err += "Unable to reset GPU " + g.bus_id + ": writing " + path + " failed: " + std::strerror(e) + "\n";
      o_.exit = kSmiOther;
      return false;
    }
    o_.out += "GPU " + g.bus_id + " was successfully reset.\n";
    record(g, "reset (PCI function-level reset)", json::array({change("reset", "", path)}));
    return true;
  }
};

}  // namespace

SettingOutcome applySetting(const nvml::Session& session, const platform::FsRoot& root, const std::string& ids,
                            const SettingRequest& request, const std::string& who, std::int64_t now_ms) {
  return Applier(session, root, request, who, now_ms).run(ids);
}

nlohmann::json settingsRequest(const nlohmann::json& args, const node::control::Peer& peer,
                               const nvml::Session& session, const platform::FsRoot& root,
                               std::vector<node::Record>* records) {
  namespace control = node::control;
  if (std::string why = settingsRefusal(peer); !why.empty()) return control::errorReply(why, "forbidden");
  const auto words_arg = args.find("words");
  if (words_arg == args.end() || !words_arg->is_array() || words_arg->size() > kMaxSettingWords)
    return control::errorReply(
        "args.words must be the words after `smi` (at most " + std::to_string(kMaxSettingWords) + ")", "bad_request");
  std::vector<std::string> words;
  for (const auto& w : *words_arg) {
    if (!w.is_string() || w.get_ref<const std::string&>().size() > kMaxSettingWordBytes)
      return control::errorReply(
          "args.words must be strings of at most " + std::to_string(kMaxSettingWordBytes) + " bytes", "bad_request");
    words.push_back(w.get<std::string>());
  }
  const auto simulated = args.find("simulated");
  if (simulated == args.end() || !simulated->is_boolean())
    return control::errorReply("args.simulated (a boolean) is required", "bad_request");
  const SmiParse p = parseSmiArgs(words);
  if (!p.ok()) return control::okReply(json{{"exit", p.exit}, {"stdout", ""}, {"stderr", p.error + "\n"}});
  if (p.args.mode != SmiArgs::Mode::Setting) return control::errorReply("args.words change no setting", "bad_request");
  // A change meant for simulated GPUs must never reach real ones, nor the reverse.
  if (simulated->get<bool>() != session.isSimulator())
    return control::errorReply(std::string("this agent drives ") +
                                   (session.isSimulator() ? "the simulator" : "real GPUs") +
                                   ", the command line the other; nothing was changed",
                               "bad_request");
  SettingOutcome o = applySetting(session, root, p.args.ids, p.args.setting, peer.describe(), platform::wallMs());
  *records = std::move(o.records);
  return control::okReply(json{{"exit", o.exit}, {"stdout", o.out}, {"stderr", o.err}});
}

std::string settingsRefusal(const node::control::Peer& peer) {
  if (peer.uid == 0) return "";
  return "the agent's control socket refused: uid " + std::to_string(peer.uid) +
         " is not allowed to change GPU settings (only root may; run it as root, e.g. with sudo)";
}

}  // namespace gw::cli::smi
