// nvidia-smi mig: the GPU instance profiles and placements, the GPU and compute instances, their
// creation and destruction, in nvidia-smi's tables and sentences. Every value comes from NVML;
// a change is recorded (kind "setting") with the GPU's MIG layout before and after.
#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "cli/smi/smi_internal.h"
#include "cli/smi/smi_settings.h"
#include "nvml/errors.h"

namespace gw::cli::smi {
namespace {

using K = SettingRequest::Kind;
using json = nlohmann::json;

constexpr std::size_t kInner = 77;  // nvidia-smi's tables are 79 columns wide

std::string line(char fill = '-') {
  const char edge = fill == '=' ? '|' : '+';
  return std::string(1, edge) + std::string(kInner, fill) + edge + "\n";
}
std::string row(const std::string& inner) {
  std::string s = inner.size() < kInner ? inner + std::string(kInner - inner.size(), ' ') : inner;
  return "|" + s + "|\n";
}

struct GiView {
  nvml::GpuInstance handle;
  nvml::GpuInstanceInfo info;
  const nvml::MigGpuProfile* profile = nullptr;  // nullptr: a profile this GPU did not list
};

struct CiView {
  nvml::ComputeInstance handle;
  nvml::ComputeInstanceInfo info;
  nvml::MigComputeProfile profile;
};

// What one selected GPU answers about MIG, read once per command.
struct MigGpu {
  const SmiGpu* gpu = nullptr;
  bool enabled = false;  // MIG mode on (off: only its profiles are listed)
  std::vector<nvml::MigGpuProfile> profiles;
  std::vector<GiView> instances;  // by id
};

bool absent(const Status& st) {
  return st.nvmlCode() == NVML_ERROR_NOT_SUPPORTED || st.nvmlCode() == NVML_ERROR_INVALID_ARGUMENT;
}

// "MIG 1c.3g.40gb" for a compute instance profile smaller than its GPU instance, else the
// GPU instance's own name.
std::string computeProfileName(const GiView& gi, const nvml::MigComputeProfile& p) {
  const std::string gi_name = gi.profile ? gi.profile->name : "MIG ?";
  if (!gi.profile || p.slices >= gi.profile->slices) return gi_name;
  const std::string bare = gi_name.starts_with("MIG ") ? gi_name.substr(4) : gi_name;
  return "MIG " + std::to_string(p.slices) + "c." + bare;
}

std::string bareName(const std::string& name) { return name.starts_with("MIG ") ? name.substr(4) : name; }

class MigRunner {
 public:
  MigRunner(const nvml::Session& session, const SettingRequest& r, std::string who, std::int64_t now_ms)
      : session_(session), r_(r), who_(std::move(who)), now_ms_(now_ms) {}

  SettingOutcome run(const std::vector<SmiGpu>& selected) {
    const bool list = isMigList(r_.kind);
    std::string why_not;
    for (const SmiGpu& g : selected) {
      auto modes = g.device.migModes();
      if (!modes) {
        if (!absent(modes.status()))
          return fail(smiExitFor(modes.status()),
                      "Unable to read the MIG mode of GPU " + g.bus_id + ": " + message(modes.status()) + "\n");
        why_not += fmt::format("gpuwarden: GPU {} ({}) does not support MIG.\n", g.index, g.bus_id);
        continue;
      }
      // nvidia-smi lists a MIG-capable GPU's profiles and their placements with MIG off too (a
      // real 580.159.04 did).
      if (!modes->first && r_.kind != K::MigListGpuProfiles && r_.kind != K::MigListPlacements) {
        why_not += fmt::format(
            "gpuwarden: MIG mode is disabled on GPU {} ({}): `gpuwarden smi -i {} -mig 1` (as root) enables it.\n",
            g.index, g.bus_id, g.index);
        continue;
      }
      MigGpu m;
      m.gpu = &g;
      m.enabled = modes->first;
      if (!readProfiles(&m) || (m.enabled && !readInstances(&m))) return std::move(o_);
      gpus_.push_back(std::move(m));
    }
    if (gpus_.empty()) {
      // A list finds nothing and says so on stdout with success, as nvidia-smi does; a change
      // has nothing to act on.
      if (list) {
        o_.out += "No MIG-enabled devices found.\n";
        o_.err += why_not;
        return std::move(o_);
      }
      return fail(kSmiNotSupported, "No MIG-enabled devices found.\n" + why_not);
    }
    switch (r_.kind) {
      case K::MigListGpuProfiles:
        listProfiles();
        break;
      case K::MigListPlacements:
        listPlacements();
        break;
      case K::MigListGpuInstances:
        listGpuInstances();
        break;
      case K::MigListComputeProfiles:
        listComputeProfiles();
        break;
      case K::MigListComputeInstances:
        listComputeInstances();
        break;
      default:
        change();
        break;
    }
    return std::move(o_);
  }

 private:
  const nvml::Session& session_;
  const SettingRequest& r_;
  std::string who_;
  std::int64_t now_ms_;
  SettingOutcome o_;
  std::vector<MigGpu> gpus_;
  bool touched_ = false;  // an instance was there to act on, on some GPU

  SettingOutcome fail(int exit, const std::string& err) {
    o_.exit = exit;
    o_.err += err;
    return std::move(o_);
  }
  bool stop(int exit, const std::string& err) {
    o_.exit = exit;
    o_.err += err;
    return false;
  }

  // nvidia-smi prints NVML's own string for an error.
  std::string message(const Status& st) const {
    const auto f = session_.api().nvmlErrorString;
    if (st.nvmlCode() > 0 && f) {
      const char* s = f(static_cast<nvmlReturn_t>(st.nvmlCode()));
      if (s && *s) return s;
    }
    return st.message();
  }
  // nvidia-smi's sentence, then gpuwarden's reason on the lines after it.
  bool refused(const std::string& sentence, const Status& st, const std::string& reason = "") {
    std::string why = reason;
    if (st.nvmlCode() == NVML_ERROR_NO_PERMISSION) why = missingPrivilege();
    return stop(smiExitFor(st), sentence + ": " + message(st) + "\n" + why);
  }

  bool readProfiles(MigGpu* m) {
    for (unsigned i = 0; i < nvml::kGpuInstanceProfileSlots; ++i) {
      auto p = m->gpu->device.gpuInstanceProfile(i);
      if (p) {
        m->profiles.push_back(*p);
      } else if (!absent(p.status())) {
        return refused("Unable to read the GPU instance profiles of GPU " + m->gpu->bus_id, p.status());
      }
    }
    // nvidia-smi lists them from the smallest, not in NVML's index order.
    std::stable_sort(m->profiles.begin(), m->profiles.end(), [](const auto& a, const auto& b) {
      return a.slices != b.slices ? a.slices < b.slices : a.memory_mib < b.memory_mib;
    });
    return true;
  }

  bool readInstances(MigGpu* m) {
    m->instances.clear();
    for (const auto& p : m->profiles) {
      auto list = m->gpu->device.gpuInstances(p.id, p.instances);
      if (!list) return refused("Unable to list the GPU instances of GPU " + m->gpu->bus_id, list.status());
      for (const auto& h : *list) {
        auto info = h.info();
        if (!info) return refused("Unable to read a GPU instance of GPU " + m->gpu->bus_id, info.status());
        m->instances.push_back({h, *info, &p});
      }
    }
    std::sort(m->instances.begin(), m->instances.end(),
              [](const GiView& a, const GiView& b) { return a.info.id < b.info.id; });
    return true;
  }

  // The compute instance profiles a GPU instance offers (NOT_SUPPORTED: larger than it).
  std::optional<std::vector<nvml::MigComputeProfile>> computeProfiles(const MigGpu& m, const GiView& gi) {
    std::vector<nvml::MigComputeProfile> out;
    for (unsigned i = 0; i < nvml::kComputeInstanceProfileSlots; ++i) {
      auto p = gi.handle.computeProfile(i);
      if (p) {
        out.push_back(*p);
      } else if (!absent(p.status())) {
        refused(fmt::format("Unable to read the compute instance profiles of GPU {} GPU instance ID {}", m.gpu->index,
                            gi.info.id),
                p.status());
        return std::nullopt;
      }
    }
    return out;
  }

  std::optional<std::vector<CiView>> computeInstances(const MigGpu& m, const GiView& gi) {
    auto profiles = computeProfiles(m, gi);
    if (!profiles) return std::nullopt;
    std::vector<CiView> out;
    for (const auto& p : *profiles) {
      auto list = gi.handle.computeInstances(p.id);
      if (!list) {
        refused(
            fmt::format("Unable to list the compute instances of GPU {} GPU instance ID {}", m.gpu->index, gi.info.id),
            list.status());
        return std::nullopt;
      }
      for (const auto& h : *list) {
        auto info = h.info();
        if (!info) {
          refused("Unable to read a compute instance of GPU " + m.gpu->bus_id, info.status());
          return std::nullopt;
        }
        out.push_back({h, *info, p});
      }
    }
    std::sort(out.begin(), out.end(), [](const CiView& a, const CiView& b) { return a.info.id < b.info.id; });
    return out;
  }

  // The GPU instances -gi names (all without it); a named one that does not exist is an error.
  std::optional<std::vector<const GiView*>> targets(const MigGpu& m, const std::string& action) {
    std::vector<const GiView*> out;
    if (r_.gpu_instances.empty()) {
      for (const auto& gi : m.instances) out.push_back(&gi);
      return out;
    }
    for (unsigned id : r_.gpu_instances) {
      auto it = std::find_if(m.instances.begin(), m.instances.end(), [&](const GiView& g) { return g.info.id == id; });
      if (it == m.instances.end()) {
        stop(kSmiNotFound,
             fmt::format("Unable to {} GPU instance ID {:2} on GPU {:2}: Not Found\n", action, id, m.gpu->index));
        return std::nullopt;
      }
      out.push_back(&*it);
    }
    return out;
  }

  // --- lists ---

  void listProfiles() {
    auto cols = [](const std::string& gpu, const std::string& name, const std::string& id, const std::string& inst,
                   const std::string& mem, const std::string& p2p, const std::string& sm, const std::string& dec,
                   const std::string& enc) {
      return row(fmt::format("{:>4}  {:<16}{:>4}{:>12}{:>10}{:>7}{:>6}{:>6}{:>6}", gpu, name, id, inst, mem, p2p, sm,
                             dec, enc));
    };
    // 580 widened the table to 81 columns and left-aligns the numbers (recorded from a real
    // 580.159.04; the older layout is from published 535/550 outputs).
    const bool r580 = layout580(session_.driverVersion().value_or(""));
    const std::string rule580 = "+" + std::string(79, '-') + "+\n";
    auto row580 = [](const std::string& gpu, const std::string& name, const std::string& id, const std::string& inst,
                     const std::string& mem, const std::string& p2p, const std::string& sm, const std::string& dec,
                     const std::string& enc) {
      return fmt::format("|{:>4}  {:<18}{:>4}     {:<11}{:<11}{:<7}{:<7}{:<6}{:<4}|\n", gpu, name, id, inst, mem, p2p,
                         sm, dec, enc);
    };
    std::string s = r580 ? rule580 +
                               "| GPU instance profiles:                                                        |\n"
                               "| GPU   Name               ID    Instances   Memory     P2P    SM    DEC   ENC  |\n"
                               "|                                Free/Total   GiB              CE    JPEG  OFA  |\n"
                               "|" +
                               std::string(79, '=') + "|\n"
                         : line() + row(" GPU instance profiles:") +
                               cols("GPU", "Name", "ID", "Instances", "Memory", "P2P", "SM", "DEC", "ENC") +
                               cols("", "", "", "Free/Total", "GiB", "", "CE", "JPEG", "OFA") + line('=');
    for (const MigGpu& m : gpus_) {
      for (const auto& p : m.profiles) {
        // With MIG off nothing is placed, so every instance of a profile is free.
        Result<unsigned> free = m.enabled ? m.gpu->device.gpuInstanceCapacity(p.id) : Result<unsigned>(p.instances);
        if (!free) {
          refused("Unable to read the free GPU instances of GPU " + m.gpu->bus_id, free.status());
          return;
        }
        const std::string gpu = std::to_string(m.gpu->index), id = std::to_string(p.id),
                          inst = fmt::format("{}/{}", *free, p.instances),
                          mem = fmt::format("{:.2f}", p.memory_mib / 1024.0), p2p = p.p2p ? "Yes" : "No";
        if (r580) {
          s += row580(gpu, p.name, id, inst, mem, p2p, std::to_string(p.sms), std::to_string(p.decoders),
                      std::to_string(p.encoders));
          s += fmt::format("|{:63}{:<6}{:<6}{:<4}|\n", "", p.copy_engines, p.jpegs, p.ofas) + rule580;
        } else {
          s += cols(gpu, p.name, id, inst, mem, p2p, std::to_string(p.sms), std::to_string(p.decoders),
                    std::to_string(p.encoders));
          s += cols("", "", "", "", "", "", std::to_string(p.copy_engines), std::to_string(p.jpegs),
                    std::to_string(p.ofas));
          s += line();
        }
      }
    }
    o_.out += s;
  }

  void listPlacements() {
    for (const MigGpu& m : gpus_) {
      for (const auto& p : m.profiles) {
        auto places = m.gpu->device.gpuInstancePlacements(p.id);
        if (!places) {
          refused("Unable to read the placements of GPU " + m.gpu->bus_id, places.status());
          return;
        }
        std::string starts;
        for (const auto& pl : *places) starts += (starts.empty() ? "" : ",") + std::to_string(pl.start);
        const unsigned size = places->empty() ? 0 : places->front().size;
        o_.out += fmt::format("GPU {:2} Profile ID {:2} Placement{}: {{{}}}:{}\n", m.gpu->index, p.id,
                              places->size() == 1 ? " " : "s", starts, size);
      }
    }
  }

  void listGpuInstances() {
    auto cols = [](const std::string& gpu, const std::string& name, const std::string& profile, const std::string& id,
                   const std::string& place) {
      return row(fmt::format("{:>4}  {:<16}{:>9}{:>10}{:>13}", gpu, name, profile, id, place));
    };
    std::string s = line() + row(" GPU instances:") + cols("GPU", "Name", "Profile", "Instance", "Placement") +
                    cols("", "", "ID", "ID", "Start:Size") + line('=');
    bool any = false;
    for (const MigGpu& m : gpus_) {
      for (const auto& gi : m.instances) {
        any = true;
        s += cols(std::to_string(m.gpu->index), gi.profile->name, std::to_string(gi.info.profile_id),
                  std::to_string(gi.info.id), fmt::format("{}:{}", gi.info.placement.start, gi.info.placement.size));
        s += line();
      }
    }
    if (!any) {
      stop(kSmiNotFound, "No GPU instances found: Not Found\n");
      return;
    }
    o_.out += s;
  }

  void listComputeProfiles() {
    auto cols = [](const std::string& gpu, const std::string& gi, const std::string& name, const std::string& id,
                   const std::string& inst, const std::string& sm, const std::string& dec, const std::string& enc,
                   const std::string& ofa) {
      return row(
          fmt::format("{:>4}{:>9}  {:<17}{:>8}{:>12}{:>7}{:>6}{:>6}{:>5}", gpu, gi, name, id, inst, sm, dec, enc, ofa));
    };
    std::string s = line() + row(" Compute instance profiles:") +
                    cols("GPU", "GPU", "Name", "Profile", "Instances", "SM", "DEC", "ENC", "OFA") +
                    cols("", "Instance", "", "ID", "Free/Total", "", "CE", "JPEG", "") +
                    cols("", "ID", "", "", "", "", "", "", "") + line('=');
    bool any = false;
    for (const MigGpu& m : gpus_) {
      auto gis = targets(m, "list compute instance profiles of");
      if (!gis) return;
      for (const GiView* gi : *gis) {
        auto profiles = computeProfiles(m, *gi);
        if (!profiles) return;
        for (const auto& p : *profiles) {
          auto free = gi->handle.computeCapacity(p.id);
          if (!free) {
            refused("Unable to read the free compute instances of GPU " + m.gpu->bus_id, free.status());
            return;
          }
          any = true;
          // '*' marks the default profile, the one -C and a bare -cci create.
          const bool dflt = gi->profile && p.slices == gi->profile->slices;
          s += cols(std::to_string(m.gpu->index), std::to_string(gi->info.id), computeProfileName(*gi, p),
                    std::to_string(p.id) + (dflt ? "*" : " "), fmt::format("{}/{}", *free, p.instances),
                    std::to_string(p.sms), std::to_string(p.decoders), std::to_string(p.encoders),
                    std::to_string(p.ofas));
          s += cols("", "", "", "", "", "", std::to_string(p.copy_engines), std::to_string(p.jpegs), "");
          s += line();
        }
      }
    }
    if (!any) {
      stop(kSmiNotFound, "No GPU instances found: Not Found\n");
      return;
    }
    o_.out += s;
  }

  void listComputeInstances() {
    auto cols = [](const std::string& gpu, const std::string& gi, const std::string& name, const std::string& profile,
                   const std::string& id, const std::string& place) {
      return row(fmt::format("{:>4}{:>9}  {:<18}{:>9}{:>10}{:>13}", gpu, gi, name, profile, id, place));
    };
    std::string s = line() + row(" Compute instances:") +
                    cols("GPU", "GPU", "Name", "Profile", "Instance", "Placement") +
                    cols("", "Instance", "", "ID", "ID", "Start:Size") + cols("", "ID", "", "", "", "") + line('=');
    bool any = false;
    for (const MigGpu& m : gpus_) {
      auto gis = targets(m, "list compute instances of");
      if (!gis) return;
      for (const GiView* gi : *gis) {
        auto cis = computeInstances(m, *gi);
        if (!cis) return;
        for (const CiView& ci : *cis) {
          any = true;
          s += cols(std::to_string(m.gpu->index), std::to_string(gi->info.id), computeProfileName(*gi, ci.profile),
                    std::to_string(ci.info.profile_id), std::to_string(ci.info.id),
                    fmt::format("{}:{}", ci.info.placement.start, ci.info.placement.size));
          s += line();
        }
      }
    }
    if (!any) {
      stop(kSmiNotFound, "No compute instances found: Not Found\n");
      return;
    }
    o_.out += s;
  }

  // --- changes ---

  // The GPU's MIG layout in one line, for the records' before and after.
  std::string layout(MigGpu& m) {
    if (!readInstances(&m)) return "N/A";
    if (m.instances.empty()) return "no GPU instances";
    std::string s;
    for (const GiView& gi : m.instances) {
      if (!s.empty()) s += "; ";
      s += fmt::format("GI {} {} at {}:{}", gi.info.id, gi.profile->name, gi.info.placement.start,
                       gi.info.placement.size);
      auto cis = computeInstances(m, gi);
      if (!cis) return "N/A";
      std::string ids;
      for (const CiView& ci : *cis) ids += (ids.empty() ? "" : ",") + std::to_string(ci.info.id);
      s += ids.empty() ? " (no CI)" : " (CI " + ids + ")";
    }
    return s;
  }

  void change() {
    for (MigGpu& m : gpus_) {
      const std::string before = layout(m);
      std::vector<std::string> done;
      bool ok = true;
      switch (r_.kind) {
        case K::MigCreateGpuInstances:
          ok = createGpuInstances(m, &done);
          break;
        case K::MigDestroyGpuInstances:
          ok = destroyGpuInstances(m, &done);
          break;
        case K::MigCreateComputeInstances:
          ok = createComputeInstances(m, &done);
          break;
        default:
          ok = destroyComputeInstances(m, &done);
          break;
      }
      // What was done stands even when a later step failed: it is recorded all the same.
      if (!done.empty()) {
        const std::string after = layout(m);
        std::string summary = "MIG ";
        for (std::size_t i = 0; i < done.size(); ++i) summary += (i ? ", " : "") + done[i];
        o_.records.push_back(settingRecord(*m.gpu, r_.flag, who_, now_ms_, summary,
                                           json::array({settingChange("mig.layout", before, after)})));
      }
      if (!ok) return;
    }
    if (touched_) return;
    const bool gpu_level = r_.kind == K::MigDestroyGpuInstances || r_.kind == K::MigCreateComputeInstances;
    stop(kSmiNotFound, gpu_level ? "No GPU instances found: Not Found\n" : "No compute instances found: Not Found\n");
  }

  const nvml::MigGpuProfile* findProfile(const MigGpu& m, const std::string& word) {
    for (const auto& p : m.profiles) {
      if (word == std::to_string(p.id) || word == p.name || word == bareName(p.name)) return &p;
    }
    return nullptr;
  }

  // The default compute instance profile of a GPU instance: all of its slices.
  std::optional<nvml::MigComputeProfile> defaultComputeProfile(const MigGpu& m, const GiView& gi) {
    auto profiles = computeProfiles(m, gi);
    if (!profiles) return std::nullopt;
    for (const auto& p : *profiles)
      if (gi.profile && p.slices == gi.profile->slices) return p;
    stop(kSmiNotSupported, fmt::format("Unable to find the default compute instance profile of GPU {:2} GPU "
                                       "instance ID {:2}: Not Supported\n",
                                       m.gpu->index, gi.info.id));
    return std::nullopt;
  }

  bool createComputeInstance(const MigGpu& m, const GiView& gi, const nvml::MigComputeProfile& p,
                             std::vector<std::string>* done) {
    const std::string name = computeProfileName(gi, p);
    auto ci = gi.handle.createComputeInstance(p.id);
    if (!ci) {
      std::string reason;
      if (ci.status().nvmlCode() == NVML_ERROR_INSUFFICIENT_RESOURCES)
        reason = fmt::format(
            "gpuwarden: GPU instance {} has no free compute slices left for {} (smi mig -lcip -gi {} -i {} shows what "
            "is free).\n",
            gi.info.id, name, gi.info.id, m.gpu->index);
      return refused(
          fmt::format("Unable to create a compute instance on GPU {:2} GPU instance ID {:2} using profile {}",
                      m.gpu->index, gi.info.id, p.id),
          ci.status(), reason);
    }
    auto info = ci->info();
    if (!info) return refused("Unable to read the new compute instance of GPU " + m.gpu->bus_id, info.status());
    o_.out += fmt::format(
        "Successfully created compute instance ID {:2} on GPU {:2} GPU instance ID {:2} using profile "
        "{} (ID {:2})\n",
        info->id, m.gpu->index, gi.info.id, name, p.id);
    done->push_back(fmt::format("created compute instance {} on GPU instance {}", info->id, gi.info.id));
    return true;
  }

  bool createGpuInstances(MigGpu& m, std::vector<std::string>* done) {
    touched_ = true;
    for (const std::string& word : r_.profiles) {
      const nvml::MigGpuProfile* p = findProfile(m, word);
      if (!p) {
        std::string known;
        for (const auto& q : m.profiles)
          known += (known.empty() ? "" : ", ") + fmt::format("{} ({})", q.id, bareName(q.name));
        return stop(kSmiInvalidArgument,
                    fmt::format("Unable to create a GPU instance on GPU {:2} using profile {}: Invalid Argument\n"
                                "gpuwarden: GPU {} has no GPU instance profile '{}'; its profiles are {}.\n",
                                m.gpu->index, word, m.gpu->index, word, known));
      }
      auto gi = m.gpu->device.createGpuInstance(p->id);
      if (!gi) {
        std::string reason;
        if (gi.status().nvmlCode() == NVML_ERROR_INSUFFICIENT_RESOURCES)
          reason = fmt::format(
              "gpuwarden: no room is left on GPU {} for another {} (its {} instances at most, the free slices taken): "
              "smi mig -lgip shows what is free, smi mig -dgi frees slices.\n",
              m.gpu->index, p->name, p->instances);
        return refused(fmt::format("Unable to create a GPU instance on GPU {:2} using profile {}", m.gpu->index, p->id),
                       gi.status(), reason);
      }
      auto info = gi->info();
      if (!info) return refused("Unable to read the new GPU instance of GPU " + m.gpu->bus_id, info.status());
      o_.out += fmt::format("Successfully created GPU instance ID {:2} on GPU {:2} using profile {} (ID {:2})\n",
                            info->id, m.gpu->index, p->name, p->id);
      done->push_back(fmt::format("created GPU instance {} ({})", info->id, bareName(p->name)));
      if (!r_.default_ci) continue;
      const GiView view{*gi, *info, p};
      auto dflt = defaultComputeProfile(m, view);
      if (!dflt || !createComputeInstance(m, view, *dflt, done)) return false;
    }
    return true;
  }

  bool destroyGpuInstances(MigGpu& m, std::vector<std::string>* done) {
    auto gis = targets(m, "destroy");
    if (!gis) return false;
    for (const GiView* gi : *gis) {
      touched_ = true;
      if (Status st = gi->handle.destroy(); !st) {
        std::string reason;
        if (st.nvmlCode() == NVML_ERROR_IN_USE)
          reason = fmt::format(
              "gpuwarden: GPU instance {} still holds compute instances: destroy them first (smi mig -dci -gi {} -i "
              "{}).\n",
              gi->info.id, gi->info.id, m.gpu->index);
        return refused(fmt::format("Unable to destroy GPU instance ID {:2} from GPU {:2}", gi->info.id, m.gpu->index),
                       st, reason);
      }
      o_.out += fmt::format("Successfully destroyed GPU instance ID {:2} from GPU {:2}\n", gi->info.id, m.gpu->index);
      done->push_back(fmt::format("destroyed GPU instance {}", gi->info.id));
    }
    return true;
  }

  bool createComputeInstances(MigGpu& m, std::vector<std::string>* done) {
    auto gis = targets(m, "create a compute instance on");
    if (!gis) return false;
    for (const GiView* gi : *gis) {
      touched_ = true;
      if (r_.profiles.empty()) {
        auto dflt = defaultComputeProfile(m, *gi);
        if (!dflt || !createComputeInstance(m, *gi, *dflt, done)) return false;
        continue;
      }
      auto profiles = computeProfiles(m, *gi);
      if (!profiles) return false;
      for (const std::string& word : r_.profiles) {
        auto it = std::find_if(profiles->begin(), profiles->end(), [&](const nvml::MigComputeProfile& p) {
          const std::string name = computeProfileName(*gi, p);
          return word == std::to_string(p.id) || word == name || word == bareName(name);
        });
        if (it == profiles->end()) {
          std::string known;
          for (const auto& p : *profiles)
            known += (known.empty() ? "" : ", ") + fmt::format("{} ({})", p.id, bareName(computeProfileName(*gi, p)));
          return stop(kSmiInvalidArgument,
                      fmt::format("Unable to create a compute instance on GPU {:2} GPU instance ID {:2} using profile "
                                  "{}: Invalid Argument\ngpuwarden: GPU instance {} offers the compute instance "
                                  "profiles {}.\n",
                                  m.gpu->index, gi->info.id, word, gi->info.id, known));
        }
        if (!createComputeInstance(m, *gi, *it, done)) return false;
      }
    }
    return true;
  }

  bool destroyComputeInstances(MigGpu& m, std::vector<std::string>* done) {
    auto gis = targets(m, "destroy compute instances of");
    if (!gis) return false;
    for (const GiView* gi : *gis) {
      auto cis = computeInstances(m, *gi);
      if (!cis) return false;
      std::vector<const CiView*> chosen;
      if (r_.compute_instances.empty()) {
        for (const CiView& ci : *cis) chosen.push_back(&ci);
      } else {
        for (unsigned id : r_.compute_instances) {
          auto it = std::find_if(cis->begin(), cis->end(), [&](const CiView& c) { return c.info.id == id; });
          if (it == cis->end())
            return stop(kSmiNotFound,
                        fmt::format("Unable to destroy compute instance ID {:2} from GPU {:2} GPU instance ID {:2}: "
                                    "Not Found\n",
                                    id, m.gpu->index, gi->info.id));
          chosen.push_back(&*it);
        }
      }
      for (const CiView* ci : chosen) {
        touched_ = true;
        if (Status st = ci->handle.destroy(); !st) {
          std::string reason;
          if (st.nvmlCode() == NVML_ERROR_IN_USE)
            reason = fmt::format(
                "gpuwarden: a process runs on compute instance {} of GPU instance {}: stop it first (smi "
                "--query-compute-apps=pid,process_name -i {} lists them).\n",
                ci->info.id, gi->info.id, m.gpu->index);
          return refused(fmt::format("Unable to destroy compute instance ID {:2} from GPU {:2} GPU instance ID {:2}",
                                     ci->info.id, m.gpu->index, gi->info.id),
                         st, reason);
        }
        o_.out += fmt::format("Successfully destroyed compute instance ID {:2} from GPU {:2} GPU instance ID {:2}\n",
                              ci->info.id, m.gpu->index, gi->info.id);
        done->push_back(fmt::format("destroyed compute instance {} of GPU instance {}", ci->info.id, gi->info.id));
      }
    }
    return true;
  }
};

}  // namespace

SettingOutcome applyMig(const nvml::Session& session, const std::vector<SmiGpu>& gpus, const SettingRequest& request,
                        const std::string& who, std::int64_t now_ms) {
  return MigRunner(session, request, who, now_ms).run(gpus);
}

}  // namespace gw::cli::smi
