#include "cluster/slurm.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <set>
#include <sstream>
#include <thread>

#include "node/jobs.h"
#include "platform/host_name.h"
#include "nvml/inventory.h"

namespace gw::cluster::slurm {

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool toUnsigned(std::string_view s, unsigned& out) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  if (s.empty() || s.size() > 9) return false;
  auto r = std::from_chars(s.data(), s.data() + s.size(), out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

}  // namespace

std::string nodeName(const std::string& given) {
  if (!given.empty()) return given;
  for (const char* v : {"SLURMD_NODENAME", "SLURM_NODENAME"})
    if (const char* n = std::getenv(v); n && *n) return n;
  const std::string h = platform::hostName();
  return h.substr(0, h.find('.'));
}

// ---- gres.conf

std::string gresType(const std::string& model) {
  std::istringstream in(model);
  std::vector<std::string> words;
  for (std::string w; in >> w;) {
    const std::string l = lower(w);
    if (l == "nvidia" || l == "tesla" || l == "geforce" || l == "quadro") continue;
    words.push_back(l);
  }
  if (words.empty()) return "gpu";
  std::string t = words[0];
  // "RTX 4090", "RTX A6000": the family word alone says nothing.
  if ((t == "rtx" || t == "gtx" || t == "titan") && words.size() > 1) t += words[1];
  t = t.substr(0, t.find('-'));  // "a100-sxm4-80gb"
  std::string out;
  for (char c : t)
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') out += c;
  return out.empty() ? "gpu" : out;
}

std::map<unsigned, unsigned> logicalCores(const platform::FsRoot& root) {
  std::map<unsigned, unsigned> out;
  auto entries = root.listDir("/sys/devices/system/cpu");
  if (!entries) return out;
  // (socket, core id) of every CPU; logical core k is the k-th distinct pair in that order.
  std::map<unsigned, std::pair<unsigned, unsigned>> where;
  for (const auto& e : *entries) {
    unsigned cpu = 0;
    if (e.rfind("cpu", 0) != 0 || !toUnsigned(std::string_view(e).substr(3), cpu)) continue;
    const std::string base = "/sys/devices/system/cpu/" + e + "/topology/";
    auto pkg = root.readLine(base + "physical_package_id");
    auto core = root.readLine(base + "core_id");
    unsigned p = 0, c = 0;
    if (!pkg || !core || !toUnsigned(*pkg, p) || !toUnsigned(*core, c)) return {};  // partial: say nothing
    where[cpu] = {p, c};
  }
  std::set<std::pair<unsigned, unsigned>> cores;
  for (const auto& [cpu, pc] : where) cores.insert(pc);
  std::map<std::pair<unsigned, unsigned>, unsigned> index;
  unsigned k = 0;
  for (const auto& pc : cores) index[pc] = k++;
  for (const auto& [cpu, pc] : where) out[cpu] = index[pc];
  return out;
}

std::map<std::string, unsigned> migMinors(const platform::FsRoot& root) {
  std::map<std::string, unsigned> out;
  auto text = root.readFile("/proc/driver/nvidia-caps/mig-minors", 1 << 20);
  if (!text) return out;
  std::istringstream in(*text);
  for (std::string line; std::getline(in, line);) {
    const auto sp = line.rfind(' ');
    unsigned minor = 0;
    if (sp == std::string::npos || !toUnsigned(std::string_view(line).substr(sp + 1), minor)) continue;
    out[line.substr(0, sp)] = minor;
  }
  return out;
}

std::string renderGresConf(const GresInput& in) {
  std::vector<const GresGpu*> gpus;
  std::vector<std::string> notes;
  for (const auto& g : in.gpus) {
    if (g.minor >= 0)
      gpus.push_back(&g);
    else
      notes.push_back("GPU " + std::to_string(g.index) + " left out: its device minor number is unknown");
  }
  std::sort(gpus.begin(), gpus.end(), [](const GresGpu* a, const GresGpu* b) { return a->minor < b->minor; });
  std::ostringstream out;
  std::map<std::string, unsigned> count;  // type → GRES count
  std::ostringstream lines;
  bool cores_known = !in.cores.empty();
  for (const auto* g : gpus)
    for (unsigned cpu : g->cpus)
      if (!in.cores.count(cpu)) cores_known = false;
  for (const auto* g : gpus) {
    const std::string type = gresType(g->model);
    const std::string dev = "/dev/nvidia" + std::to_string(g->minor);
    std::string cores;
    if (cores_known && !g->cpus.empty()) {
      std::set<unsigned> ids;
      for (unsigned cpu : g->cpus) ids.insert(in.cores.at(cpu));
      cores = " Cores=" + nvml::formatIdRanges({ids.begin(), ids.end()});
    }
    if (!g->mig) {
      lines << "Name=gpu Type=" << type << " File=" << dev << cores << "\n";
      ++count[type];
      continue;
    }
    // A MIG GPU: one GRES per compute instance, reached through its GPU and its two capability
    // devices (MultipleFiles, Slurm 21.08+).
    bool all = !g->slices.empty();
    std::ostringstream mig;
    std::map<std::string, unsigned> mig_count;
    for (const auto& s : g->slices) {
      const std::string gi = "gpu" + std::to_string(g->minor) + "/gi" + std::to_string(s.gpu_instance);
      auto a = in.mig_minors.find(gi + "/access");
      auto c = in.mig_minors.find(gi + "/ci" + std::to_string(s.compute_instance) + "/access");
      if (a == in.mig_minors.end() || c == in.mig_minors.end()) {
        all = false;
        break;
      }
      const std::string mtype = type + "_" + s.profile;
      mig << "Name=gpu Type=" << mtype << " MultipleFiles=" << dev << ",/dev/nvidia-caps/nvidia-cap" << a->second
          << ",/dev/nvidia-caps/nvidia-cap" << c->second << cores << "\n";
      ++mig_count[mtype];
    }
    if (all) {
      lines << mig.str();
      for (const auto& [t, n] : mig_count) count[t] += n;
    } else {
      notes.push_back("GPU " + std::to_string(g->index) +
                      " has MIG on, but its instances' capability devices could not be read "
                      "(/proc/driver/nvidia-caps/mig-minors): left out; AutoDetect=nvml lists them");
    }
  }
  out << "# gres.conf for " << (in.node.empty() ? "this node" : in.node) << ", written by `gpuwarden slurm gres`.\n";
  out << "# GPUs in device-minor order: Slurm's GPU numbers (SLURM_JOB_GPUS) follow it.\n";
  if (!cores_known)
    out << "# Cores= left out: the CPU topology (/sys/devices/system/cpu/*/topology) could not be read for every "
           "GPU's CPUs.\n";
  for (const auto& n : notes) out << "# " << n << "\n";
  std::string gres;
  for (const auto& [type, n] : count)
    if (n > 0) gres += (gres.empty() ? "" : ",") + ("gpu:" + type + ":" + std::to_string(n));
  out << "#\n# slurm.conf needs GresTypes=gpu and, for this node:\n";
  out << "#   NodeName=" << (in.node.empty() ? "<node>" : in.node) << " Gres=" << (gres.empty() ? "(none)" : gres)
      << "\n";
  out << lines.str();
  return out.str();
}

// ---- the health check

bool NodeState::draining() const { return state.find("DRAIN") != std::string::npos; }
bool NodeState::drainedByUs() const { return draining() && reason.rfind(kDrainReasonPrefix, 0) == 0; }

Result<NodeState> parseShowNode(const std::string& text, const std::string& name) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("NodeName=" + name + " ", 0) != 0 && line != "NodeName=" + name) continue;
    NodeState n;
    n.name = name;
    auto field = [&](const std::string& key) -> std::string {
      const auto p = line.find(" " + key + "=");
      if (p == std::string::npos) return "";
      const auto b = p + key.size() + 2;
      const auto e = line.find(' ', b);
      return line.substr(b, e == std::string::npos ? std::string::npos : e - b);
    };
    n.state = field("State");
    // Reason is free text with spaces, and Slurm appends " [user@time]"; it is followed by other
    // KEY=value fields only in some versions.
    if (auto p = line.find(" Reason="); p != std::string::npos) {
      std::string r = line.substr(p + 8);
      if (auto b = r.rfind(" ["); b != std::string::npos && r.find('@', b) != std::string::npos) r.erase(b);
      n.reason = r;
    }
    if (n.state.empty()) return Status::Error("scontrol's answer for node " + name + " has no State=");
    return n;
  }
  return Status::Error("scontrol does not know node " + name);
}

std::string cleanReason(const std::string& text) {
  std::string out;
  for (unsigned char c : text) {
    if (out.size() >= 200) break;
    if (c == '"' || c == '\'' || c == '\\' || c == '`' || c == '$') continue;
    out += (c >= 0x20 && c < 0x7f) ? static_cast<char>(c) : ' ';
  }
  return out;
}

HealthDecision decideHealthAction(int exit_code, const std::string& finding, const NodeState& node) {
  HealthDecision d;
  if (exit_code == 2) {
    if (node.drainedByUs()) {
      d.why = "critical, already drained by gpuwarden (" + node.reason + ")";
    } else if (node.draining()) {
      d.why = "critical, already drained by someone else (" + node.reason + "): left as it is";
    } else {
      d.action = HealthAction::Drain;
      d.reason = cleanReason(kDrainReasonPrefix + finding);
      d.why = "critical: draining (" + d.reason + ")";
    }
    return d;
  }
  if (exit_code == 0 || exit_code == 1) {
    if (node.drainedByUs()) {
      d.action = HealthAction::Resume;
      d.why = std::string(exit_code == 0 ? "healthy" : "no critical finding") +
              " again: resuming (it was drained with '" + node.reason + "')";
    } else if (node.draining()) {
      d.why = "drained by someone else (" + node.reason + "): left drained";
    } else {
      d.why = exit_code == 0 ? "healthy" : "warning only: not drained";
    }
    return d;
  }
  d.why = "health unknown: nothing changed";
  return d;
}

Result<std::string> Scontrol::run(const std::vector<std::string>& args) {
  std::vector<std::string> argv{program_};
  argv.insert(argv.end(), args.begin(), args.end());
  platform::RunOptions o;
  o.timeout = std::chrono::milliseconds(15000);
  o.max_output = 1 << 20;
  auto r = runner_.run(argv, o);
  std::string cmd;
  for (const auto& a : argv) cmd += (cmd.empty() ? "" : " ") + a;
  if (r.not_found) return Status::Error(program_ + " not found (is slurm-client installed?)");
  if (r.timed_out) return Status::Error("`" + cmd + "` did not answer within 15 s (slurmctld unreachable?)");
  if (r.exit_code != 0) {
    std::string err = r.err.empty() ? r.out : r.err;
    while (!err.empty() && (err.back() == '\n' || err.back() == ' ')) err.pop_back();
    return Status::Error("`" + cmd + "` failed (exit " + std::to_string(r.exit_code) + ")" +
                         (err.empty() ? std::string() : ": " + err.substr(0, 500)));
  }
  return r.out;
}

Result<NodeState> Scontrol::showNode(const std::string& name) {
  auto out = run({"show", "node", name, "-o"});
  if (!out) return out.status();
  return parseShowNode(*out, name);
}

Status Scontrol::drain(const std::string& name, const std::string& reason) {
  auto out = run({"update", "NodeName=" + name, "State=DRAIN", "Reason=" + reason});
  return out ? Status::Ok() : out.status();
}

Status Scontrol::resume(const std::string& name) {
  auto out = run({"update", "NodeName=" + name, "State=RESUME"});
  return out ? Status::Ok() : out.status();
}

// ---- prolog / epilog

Result<JobEnv> jobFromEnv(const std::function<const char*(const char*)>& getenv) {
  JobEnv j;
  const char* id = getenv("SLURM_JOB_ID");
  if (!id || !*id) return Status::Error("SLURM_JOB_ID is not set (run by slurmd as Prolog= / Epilog=)");
  j.job_id = id;
  if (auto st = node::checkJobWord(j.job_id, "SLURM_JOB_ID", node::kMaxJobIdBytes); !st) return st;
  const char* var = nullptr;
  const char* list = nullptr;
  for (const char* v : {"SLURM_JOB_GPUS", "CUDA_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL"})
    if (const char* x = getenv(v); x && *x) {
      var = v;
      list = x;
      break;
    }
  if (list) {
    std::string s = list;
    if (s.size() > 16 * 1024) return Status::Error(std::string(var) + " is too long");
    std::stringstream in(s);
    for (std::string g; std::getline(in, g, ',');) {
      if (g.empty()) continue;
      unsigned n = 0;
      const bool uuid = g.rfind("GPU-", 0) == 0 || g.rfind("MIG-", 0) == 0;
      if (!uuid && !toUnsigned(g, n))
        return Status::Error(std::string(var) + " holds '" + g.substr(0, 40) + "', not a GPU");
      if (uuid && g.size() > 96) return Status::Error(std::string(var) + " holds an over-long UUID");
      j.gpus.push_back(g);
      if (j.gpus.size() > node::kMaxJobGpus)
        return Status::Error(std::string(var) + " lists more than " + std::to_string(node::kMaxJobGpus) + " GPUs");
    }
  }
  if (const char* u = getenv("SLURM_JOB_USER"); u && *u && node::checkJobWord(u, "user", node::kMaxJobUserBytes))
    j.user = u;
  if (const char* u = getenv("SLURM_JOB_UID"); u && *u) {
    unsigned uid = 0;
    if (toUnsigned(u, uid)) j.uid = uid;
  }
  return j;
}

namespace {

bool processGone(int pid) {
  if (::kill(pid, 0) != 0 && errno == ESRCH) return true;
  // /proc/PID/stat: "PID (COMM) S ...": COMM may hold spaces and parentheses, the state follows the last ')'.
  auto stat = platform::FsRoot("/").readFile("/proc/" + std::to_string(pid) + "/stat", 4096);
  if (!stat) return true;
  const auto close = stat->rfind(')');
  return close != std::string::npos && close + 2 < stat->size() && (*stat)[close + 2] == 'Z';
}

bool allGone(const std::vector<int>& pids) { return std::all_of(pids.begin(), pids.end(), processGone); }

void waitUntilGone(const std::vector<int>& pids, std::chrono::milliseconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end && !allGone(pids))
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

}  // namespace

KillOutcome killLeftovers(const std::vector<int>& pids, std::chrono::milliseconds grace) {
  KillOutcome out;
  std::vector<int> targets;
  for (int p : pids)
    if (p > 1) targets.push_back(p);  // never init, never a process group
  for (int p : targets) ::kill(p, SIGTERM);
  waitUntilGone(targets, grace);
  for (int p : targets)
    if (!processGone(p)) {
      ::kill(p, SIGKILL);
      out.killed.push_back(p);
    }
  waitUntilGone(out.killed, std::chrono::milliseconds(500));
  for (int p : out.killed)
    if (!processGone(p)) out.survivors.push_back(p);
  return out;
}

}  // namespace gw::cluster::slurm
