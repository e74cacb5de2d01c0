// YAML scenario parser. Strict on purpose: an unknown key, a wrong type or an out-of-range
// value is an error naming file:line:field, because a typo that passes silently makes a test
// or a demo show something other than what its author meant.
#include "sim/scenario_parser.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string_view>
#include <tuple>

#include "nvml/nvml_abi.h"
#include "sim/faults.h"

namespace gw::sim {
namespace {

struct Failure {
  std::string message;
};

// A YAML node with the file it came from and its dotted path, for error messages.
struct N {
  YAML::Node node;
  const std::string* file = nullptr;
  std::string path;
  int parent_line = 0;
};

int lineOf(const N& n) {
  YAML::Mark m = n.node.Mark();
  return m.is_null() ? n.parent_line : m.line + 1;
}

[[noreturn]] void fail(const N& n, const std::string& msg) {
  std::string out = *n.file + ":" + std::to_string(lineOf(n)) + ": ";
  if (!n.path.empty()) out += n.path + ": ";
  throw Failure{out + msg};
}

std::string join(const std::vector<std::string_view>& items) {
  std::string out;
  for (auto s : items) {
    if (!out.empty()) out += ", ";
    out += s;
  }
  return out;
}

std::optional<N> child(const N& map, const std::string& key) {
  const YAML::Node& cn = map.node;
  YAML::Node v = cn[key];
  if (!v.IsDefined()) return std::nullopt;
  return N{v, map.file, map.path.empty() ? key : map.path + "." + key, lineOf(map)};
}

N itemAt(const N& seq, std::size_t i) {
  const YAML::Node& cn = seq.node;
  return N{cn[i], seq.file, seq.path + "[" + std::to_string(i) + "]", lineOf(seq)};
}

void expectMap(const N& n) {
  if (!n.node.IsMap()) fail(n, "expected a mapping (key: value lines)");
}
void expectSeq(const N& n) {
  if (!n.node.IsSequence()) fail(n, "expected a list");
}

void checkKeys(const N& map, const std::vector<std::string_view>& allowed,
               const std::vector<std::string_view>& more = {}) {
  expectMap(map);
  for (auto it = map.node.begin(); it != map.node.end(); ++it) {
    std::string key = it->first.Scalar();
    bool known = std::find(allowed.begin(), allowed.end(), key) != allowed.end() ||
                 std::find(more.begin(), more.end(), key) != more.end();
    if (known) continue;
    N at{it->first, map.file, map.path.empty() ? key : map.path + "." + key, lineOf(map)};
    std::string expected = join(allowed);
    for (auto m : more) expected += ", " + std::string(m);
    fail(at, "unknown key '" + key + "' (expected " + expected + ")");
  }
}

std::string readStr(const N& n) {
  if (!n.node.IsScalar()) fail(n, "expected a string");
  return n.node.Scalar();
}

long long readInt(const N& n, long long lo, long long hi) {
  long long v = 0;
  if (!n.node.IsScalar() || !YAML::convert<long long>::decode(n.node, v)) {
    fail(n, "expected an integer, got '" + (n.node.IsScalar() ? n.node.Scalar() : std::string("a collection")) + "'");
  }
  if (v < lo || v > hi) {
    fail(n, std::to_string(v) + " is out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
  return v;
}

std::string fmt(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

double readNum(const N& n, double lo, double hi) {
  double v = 0;
  if (!n.node.IsScalar() || !YAML::convert<double>::decode(n.node, v) || !std::isfinite(v)) {
    fail(n, "expected a number, got '" + (n.node.IsScalar() ? n.node.Scalar() : std::string("a collection")) + "'");
  }
  if (v < lo || v > hi) fail(n, fmt(v) + " is out of range [" + fmt(lo) + ", " + fmt(hi) + "]");
  return v;
}

bool readBool(const N& n) {
  bool v = false;
  if (!n.node.IsScalar() || !YAML::convert<bool>::decode(n.node, v)) {
    fail(n,
         "expected true or false, got '" + (n.node.IsScalar() ? n.node.Scalar() : std::string("a collection")) + "'");
  }
  return v;
}

// The digits-and-dots part of a value with a unit ("1.5" of "1.5s"), checked: "..", "1.2.3" or a
// number too large are errors naming the value, never an exception.
double parseDecimal(const N& n, const std::string& num, const std::string& whole) {
  double v = 0;
  const char* end = num.data() + num.size();
  auto [p, ec] = std::from_chars(num.data(), end, v, std::chars_format::fixed);
  if (ec != std::errc() || p != end || !std::isfinite(v))
    fail(n, "expected a number before the unit, got '" + whole + "'");
  return v;
}

// Seconds: a number, or a string with a unit: "500ms", "30s", "5m", "2h".
double readSeconds(const N& n, double lo, double hi) {
  double v = 0;
  if (n.node.IsScalar() && YAML::convert<double>::decode(n.node, v)) return readNum(n, lo, hi);
  std::string s = n.node.IsScalar() ? n.node.Scalar() : "";
  std::size_t pos = 0;
  while (pos < s.size() && (std::isdigit(static_cast<unsigned char>(s[pos])) || s[pos] == '.')) ++pos;
  std::string num = s.substr(0, pos), unit = s.substr(pos);
  double scale = unit == "ms" ? 0.001 : unit == "s" ? 1 : unit == "m" ? 60 : unit == "h" ? 3600 : -1;
  if (num.empty() || scale < 0) fail(n, "expected seconds (a number, or e.g. 30s, 5m, 2h), got '" + s + "'");
  v = parseDecimal(n, num, s) * scale;
  if (v < lo || v > hi) fail(n, fmt(v) + " s is out of range [" + fmt(lo) + ", " + fmt(hi) + "]");
  return v;
}

// Memory: an integer of MiB, or a string with a unit: "512MiB", "70GiB", "70GB".
unsigned long long readMib(const N& n, unsigned long long hi) {
  long long v = 0;
  if (n.node.IsScalar() && YAML::convert<long long>::decode(n.node, v)) {
    return static_cast<unsigned long long>(readInt(n, 0, static_cast<long long>(hi)));
  }
  std::string s = n.node.IsScalar() ? n.node.Scalar() : "";
  std::size_t pos = 0;
  while (pos < s.size() && (std::isdigit(static_cast<unsigned char>(s[pos])) || s[pos] == '.')) ++pos;
  std::string num = s.substr(0, pos), unit = s.substr(pos);
  while (!unit.empty() && unit.front() == ' ') unit.erase(0, 1);
  double scale = (unit == "MiB" || unit == "MB") ? 1 : (unit == "GiB" || unit == "GB") ? 1024 : -1;
  if (num.empty() || scale < 0) fail(n, "expected memory (MiB as a number, or e.g. 512MiB, 70GiB), got '" + s + "'");
  double mib = parseDecimal(n, num, s) * scale;
  if (mib > static_cast<double>(hi)) fail(n, s + " is more than " + std::to_string(hi) + " MiB");
  return static_cast<unsigned long long>(std::llround(mib));
}

// Power: watts as a number (fractions allowed: 312.5), or a string with a unit: "312.5W",
// "312500mW". Returns milliwatts, as NVML counts them; the range is given in milliwatts and named
// in watts.
unsigned readMilliwatts(const N& n, unsigned lo_mw, unsigned hi_mw) {
  double w = 0;
  if (n.node.IsScalar() && YAML::convert<double>::decode(n.node, w)) {
    w = readNum(n, lo_mw / 1000.0, hi_mw / 1000.0);
    return static_cast<unsigned>(std::llround(w * 1000));
  }
  std::string s = n.node.IsScalar() ? n.node.Scalar() : "";
  std::size_t pos = 0;
  while (pos < s.size() && (std::isdigit(static_cast<unsigned char>(s[pos])) || s[pos] == '.')) ++pos;
  std::string num = s.substr(0, pos), unit = s.substr(pos);
  while (!unit.empty() && unit.front() == ' ') unit.erase(0, 1);
  double scale = unit == "W" ? 1000 : unit == "mW" ? 1 : -1;
  if (num.empty() || scale < 0) fail(n, "expected watts (a number, or e.g. 312.5W, 312500mW), got '" + s + "'");
  const double mw = parseDecimal(n, num, s) * scale;
  if (mw < lo_mw || mw > hi_mw)
    fail(n, s + " is out of range [" + fmt(lo_mw / 1000.0) + ", " + fmt(hi_mw / 1000.0) + "] W");
  return static_cast<unsigned>(std::llround(mw));
}

bool parseBusId(const std::string& s, GpuConfig* g) {
  unsigned dom = 0, bus = 0, dev = 0, fn = 0;
  char tail = 0;
  if (std::sscanf(s.c_str(), "%x:%x:%x.%x%c", &dom, &bus, &dev, &fn, &tail) != 4) return false;
  if (bus > 0xFF || dev > 0x1F || fn > 7 || dom > 0xFFFF) return false;
  g->pci_domain = dom;
  g->pci_bus = bus;
  g->pci_device = dev;
  g->pci_function = fn;
  return true;
}

bool isUuid(const std::string& s) {
  if (s.size() != 40 || s.compare(0, 4, "GPU-") != 0) return false;
  for (std::size_t i = 4; i < s.size(); ++i) {
    bool dash = i == 12 || i == 17 || i == 22 || i == 27;
    if (dash ? s[i] != '-' : !std::isxdigit(static_cast<unsigned char>(s[i]))) return false;
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// Files and `base:` inheritance.

const std::vector<std::string_view> kTopKeys = {
    "name",       "description", "base", "seed",  "driver_version", "nvml_version", "cuda_driver_version",
    "privileged", "init_error",  "host", "count", "defaults",       "gpus",         "nvlink",
    "faults"};

struct Merged {
  std::map<std::string, N> keys;
  std::vector<N> faults;
  std::string sources;
  std::deque<std::string> files;  // stable storage for N::file
};

void loadMerged(const std::string& path, int depth, Merged* m, const N* referrer) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (referrer) fail(*referrer, "cannot read base scenario '" + path + "'");
    throw Failure{path + ": cannot read scenario file"};
  }
  std::stringstream buf;
  buf << in.rdbuf();
  std::string text = buf.str();
  m->sources += path + "\n" + text + "\n";
  m->files.push_back(path);
  const std::string* file = &m->files.back();

  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    throw Failure{path + ":" + std::to_string(e.mark.line + 1) + ": invalid YAML: " + e.msg};
  }
  N top{root, file, "", 1};
  if (!root.IsDefined() || root.IsNull()) throw Failure{path + ":1: the scenario is empty"};
  checkKeys(top, kTopKeys);

  if (auto base = child(top, "base")) {
    if (depth >= 8) fail(*base, "too many nested bases (a cycle?)");
    std::string name = readStr(*base);
    std::filesystem::path dir = std::filesystem::path(path).parent_path();
    std::filesystem::path p = name;
    if (p.extension() != ".yaml" && p.extension() != ".yml") p += ".yaml";
    if (p.is_relative()) p = dir / p;
    loadMerged(p.lexically_normal().string(), depth + 1, m, &*base);
    m->keys.erase("name");  // a derived scenario has its own name
    m->keys.erase("description");
  }
  for (auto it = root.begin(); it != root.end(); ++it) {
    std::string key = it->first.Scalar();
    if (key == "base") continue;
    N value = *child(top, key);
    if (key == "faults") {
      expectSeq(value);
      for (std::size_t i = 0; i < value.node.size(); ++i) m->faults.push_back(itemAt(value, i));
    } else {
      m->keys.insert_or_assign(key, value);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// GPUs.

const std::vector<std::string_view> kGpuKeys = {
    "profile",  "uuid", "serial",      "bus_id",      "minor",   "numa",      "cpus", "pcie_switch", "host_bridge",
    "workload", "ecc",  "persistence", "power_limit", "ambient", "processes", "mig",  "fan"};

// A GPU's keys come from its own entry, else from `defaults`.
struct GpuSource {
  std::optional<N> own;
  std::optional<N> defaults;
  std::optional<N> get(const std::string& key) const {
    if (own) {
      if (auto v = child(*own, key)) return v;
    }
    if (defaults) return child(*defaults, key);
    return std::nullopt;
  }
};

Workload parseWorkload(const N& n) {
  static constexpr std::string_view kPresets = "idle, training, inference, bursty, starved";
  auto preset = [&](const N& p) {
    std::string s = readStr(p);
    if (s == "idle") return WorkloadPreset::kIdle;
    if (s == "training") return WorkloadPreset::kTraining;
    if (s == "inference") return WorkloadPreset::kInference;
    if (s == "bursty") return WorkloadPreset::kBursty;
    if (s == "starved") return WorkloadPreset::kStarved;
    fail(p, "unknown preset '" + s + "' (expected " + std::string(kPresets) + ")");
  };
  Workload w;
  if (n.node.IsScalar()) {
    w.preset = preset(n);
    return w;
  }
  checkKeys(n, {"preset", "level", "curve", "power"});
  auto p = child(n, "preset");
  auto c = child(n, "curve");
  if (p && c) fail(*c, "give either preset or curve, not both");
  if (!p && !c) fail(n, "needs a preset or a curve");
  if (p) w.preset = preset(*p);
  if (auto l = child(n, "level")) w.level = readNum(*l, 0, 100);
  if (auto pw = child(n, "power")) w.power = readNum(*pw, 0.05, 1);
  if (c) {
    expectSeq(*c);
    if (c->node.size() == 0) fail(*c, "the curve needs at least one [seconds, percent] point");
    w.preset = WorkloadPreset::kCurve;
    for (std::size_t i = 0; i < c->node.size(); ++i) {
      N pt = itemAt(*c, i);
      if (!pt.node.IsSequence() || pt.node.size() != 2) fail(pt, "expected a [seconds, percent] pair");
      double t = readSeconds(itemAt(pt, 0), 0, 1e9);
      double u = readNum(itemAt(pt, 1), 0, 100);
      if (!w.curve.empty() && t <= w.curve.back().first) fail(pt, "curve times must increase");
      w.curve.emplace_back(t, u);
    }
  }
  return w;
}

ProcessConfig parseProcess(const N& n) {
  checkKeys(n, {"pid", "name", "memory", "start", "stop", "zombie", "share", "gi", "ci"});
  ProcessConfig p;
  auto pid = child(n, "pid");
  if (!pid) fail(n, "a process needs a pid");
  p.pid = static_cast<unsigned>(readInt(*pid, 1, 4194304));
  auto name = child(n, "name");
  p.name = name ? readStr(*name) : "python3";
  if (p.name.empty() || p.name.size() > 255) fail(*name, "the name must have 1 to 255 characters");
  if (auto m = child(n, "memory")) p.memory_mib = readMib(*m, 1ull << 22);
  if (auto s = child(n, "start")) p.start = readSeconds(*s, 0, 1e9);
  if (auto s = child(n, "stop")) {
    p.stop = readSeconds(*s, 0, 1e9);
    if (p.stop <= p.start) fail(*s, "stop must be after start");
  }
  if (auto z = child(n, "zombie")) {
    p.zombie = readBool(*z);
    if (p.zombie && p.stop == kForever) fail(*z, "a zombie needs a stop time (when its job ended)");
  }
  if (auto s = child(n, "share")) p.share = readNum(*s, 0, 1000);
  if (auto g = child(n, "gi")) p.gpu_instance = static_cast<unsigned>(readInt(*g, 0, 14));
  if (auto c = child(n, "ci")) p.compute_instance = static_cast<unsigned>(readInt(*c, 0, 7));
  return p;
}

void parseMig(const N& n, GpuConfig* g) {
  checkKeys(n, {"enabled", "instances"});
  auto e = child(n, "enabled");
  g->mig_enabled = e ? readBool(*e) : true;
  if (g->mig_enabled && !g->profile->mig_capable) {
    fail(e ? *e : n, std::string(g->profile->id) + " does not support MIG");
  }
  auto list = child(n, "instances");
  if (!list) return;
  if (!g->mig_enabled) fail(*list, "instances given but MIG is disabled");
  expectSeq(*list);
  unsigned slices = 0;
  std::set<std::pair<unsigned, unsigned>> ids;
  for (std::size_t i = 0; i < list->node.size(); ++i) {
    N item = itemAt(*list, i);
    checkKeys(item, {"profile", "gi", "ci"});
    MigInstanceConfig m;
    auto p = child(item, "profile");
    if (!p) fail(item, "a MIG instance needs a profile (e.g. 1g.10gb)");
    std::string pname = readStr(*p);
    m.profile = findMigProfile(*g->profile, pname);
    if (!m.profile) {
      std::string known;
      for (const auto& mp : g->profile->mig_profiles) known += (known.empty() ? "" : ", ") + std::string(mp.name);
      fail(*p, "unknown MIG profile '" + pname + "' for " + std::string(g->profile->id) + " (expected " + known + ")");
    }
    slices += m.profile->gpu_slices;
    if (slices > 7) fail(item, "the instances need more than the GPU's 7 slices");
    if (auto gi = child(item, "gi")) {
      m.gpu_instance_id = static_cast<unsigned>(readInt(*gi, 0, 14));
    } else {
      // NVIDIA's placement: the first free id among those a profile of this size can take.
      for (unsigned k = 0; k < m.profile->instances; ++k) {
        const unsigned id = migGpuInstanceId(*m.profile, k * m.profile->mem_slices);
        bool used = std::any_of(g->mig_instances.begin(), g->mig_instances.end(),
                                [&](const MigInstanceConfig& o) { return o.gpu_instance_id == id; });
        if (!used) {
          m.gpu_instance_id = id;
          break;
        }
      }
    }
    if (auto ci = child(item, "ci")) m.compute_instance_id = static_cast<unsigned>(readInt(*ci, 0, 7));
    if (!ids.insert({m.gpu_instance_id, m.compute_instance_id}).second) {
      fail(item, "gi " + std::to_string(m.gpu_instance_id) + " ci " + std::to_string(m.compute_instance_id) +
                     " is used twice");
    }
    g->mig_instances.push_back(m);
  }
}

struct HostInfo {
  std::map<int, std::vector<std::pair<unsigned, unsigned>>> numa_cpus;
};

GpuConfig parseGpu(const GpuSource& src, unsigned index, const HostInfo& host, const N& where) {
  GpuConfig g;
  g.index = index;
  auto prof = src.get("profile");
  if (!prof)
    fail(src.own ? *src.own : where, "GPU " + std::to_string(index) + " has no profile (set it here or in defaults)");
  std::string pid = readStr(*prof);
  g.profile = findProfile(pid);
  if (!g.profile) fail(*prof, "unknown profile '" + pid + "' (expected " + profileIdList() + ")");
  const GpuProfile& P = *g.profile;

  if (auto v = src.get("uuid")) {
    g.uuid = readStr(*v);
    if (!isUuid(g.uuid)) fail(*v, "expected GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx, got '" + g.uuid + "'");
  }
  if (auto v = src.get("serial")) {
    g.serial = readStr(*v);
    if (g.serial.empty() || g.serial.size() >= NVML_DEVICE_SERIAL_BUFFER_SIZE)
      fail(*v, "a serial has 1 to 29 characters");
  }
  if (auto v = src.get("bus_id")) {
    if (!parseBusId(readStr(*v), &g)) fail(*v, "expected a PCI bus id like 0000:18:00.0, got '" + readStr(*v) + "'");
  } else {
    g.pci_bus = (0x18 + index * 0x10) & 0xFF;  // spaced like a server's root ports
  }
  // The driver numbers its device nodes in probe order; NVML numbers GPUs in PCI order. They
  // agree on many machines, not all (uniqueness is checked across GPUs by the caller).
  g.minor = index;
  if (auto v = src.get("minor")) g.minor = static_cast<unsigned>(readInt(*v, 0, 254));  // 255 is nvidiactl
  if (auto v = src.get("numa")) g.numa_node = static_cast<int>(readInt(*v, 0, 63));
  if (auto v = src.get("cpus")) {
    if (!parseCpuList(readStr(*v), &g.cpus))
      fail(*v, "expected a CPU list like 0-55,112-167, got '" + readStr(*v) + "'");
  } else {
    auto it = host.numa_cpus.find(g.numa_node);
    if (it == host.numa_cpus.end()) {
      auto v2 = src.get("numa");
      fail(v2 ? *v2 : where,
           "NUMA node " + std::to_string(g.numa_node) + " is not listed in host.numa_nodes (or give cpus)");
    }
    g.cpus = it->second;
  }
  if (auto v = src.get("pcie_switch")) g.pcie_switch = static_cast<int>(readInt(*v, 0, 1023));
  if (auto v = src.get("host_bridge")) {
    g.host_bridge = static_cast<int>(readInt(*v, 0, 1023));
  } else {
    // Not given: a host bridge of its own (per switch, or per GPU when directly attached).
    g.host_bridge = g.pcie_switch >= 0 ? -1 - g.pcie_switch : -2000 - static_cast<int>(index);
  }
  if (auto v = src.get("workload")) g.workload = parseWorkload(*v);
  g.ecc = P.ecc_default;
  if (auto v = src.get("ecc")) {
    g.ecc = readBool(*v);
    if (g.ecc && !P.ecc_supported) fail(*v, std::string(P.id) + " has no ECC");
  }
  g.persistence = P.persistence_default;
  if (auto v = src.get("persistence")) g.persistence = readBool(*v);
  g.power_limit_mw = P.power_default_mw;
  if (auto v = src.get("power_limit")) g.power_limit_mw = readMilliwatts(*v, P.power_min_mw, P.power_max_mw);
  if (auto v = src.get("ambient")) g.ambient = readNum(*v, 0, 60);
  if (auto v = src.get("fan")) {
    if (P.fans == 0) fail(*v, std::string(P.id) + " has no fans");
    g.fan = static_cast<unsigned>(readInt(*v, 0, 100));
  }
  if (auto v = src.get("mig")) parseMig(*v, &g);
  if (auto v = src.get("processes")) {
    expectSeq(*v);
    std::set<unsigned> pids;
    for (std::size_t i = 0; i < v->node.size(); ++i) {
      N item = itemAt(*v, i);
      ProcessConfig p = parseProcess(item);
      if (!pids.insert(p.pid).second) fail(item, "pid " + std::to_string(p.pid) + " is listed twice on this GPU");
      if (g.mig_enabled) {
        if (!p.gpu_instance) fail(item, "MIG is enabled: say on which instance the process runs (gi)");
        bool found = std::any_of(g.mig_instances.begin(), g.mig_instances.end(), [&](const MigInstanceConfig& m) {
          return m.gpu_instance_id == *p.gpu_instance && m.compute_instance_id == p.compute_instance;
        });
        if (!found)
          fail(item, "no MIG instance with gi " + std::to_string(*p.gpu_instance) + " ci " +
                         std::to_string(p.compute_instance));
      } else if (p.gpu_instance) {
        fail(item, "gi given but MIG is not enabled on this GPU");
      }
      g.processes.push_back(p);
    }
    // The memory held at any moment must fit: check at every process start, on the whole GPU
    // and, with MIG, on each instance.
    for (const auto& m : g.mig_instances) {
      unsigned long long sum = 0;
      for (const auto& p : g.processes) {
        if (p.gpu_instance == m.gpu_instance_id && p.compute_instance == m.compute_instance_id) sum += p.memory_mib;
      }
      if (sum > m.profile->memory_mib) {
        fail(*v, "processes on MIG instance gi " + std::to_string(m.gpu_instance_id) + " hold " + std::to_string(sum) +
                     " MiB, more than its " + std::to_string(m.profile->memory_mib) + " MiB");
      }
    }
    unsigned long long usable = P.memory_mib - P.reserved_mib;
    for (const auto& p : g.processes) {
      unsigned long long sum = 0;
      for (const auto& q : g.processes) {
        bool holds = q.start <= p.start && (p.start < q.stop || q.zombie);
        if (holds) sum += q.memory_mib;
      }
      if (sum > usable) {
        fail(*v, "processes hold " + std::to_string(sum) + " MiB at t=" + fmt(p.start) + " s, more than the " +
                     std::to_string(usable) + " MiB usable on " + std::string(P.id));
      }
    }
  }
  return g;
}

// ---------------------------------------------------------------------------------------------
// Faults.

void parseFaultParam(const N& v, const std::string& key, FaultConfig* f) {
  if (key == "code")
    f->code = static_cast<unsigned>(readInt(v, 1, 999));
  else if (key == "action") {
    // The recovery action the driver asks for from then on, as Xid 154 announces it.
    const std::string a = readStr(v);
    constexpr std::pair<std::string_view, int> kActions[] = {
        {"none", NVML_GPU_RECOVERY_ACTION_NONE},
        {"reset", NVML_GPU_RECOVERY_ACTION_GPU_RESET},
        {"reboot", NVML_GPU_RECOVERY_ACTION_NODE_REBOOT},
        {"drain_p2p", NVML_GPU_RECOVERY_ACTION_DRAIN_P2P},
        {"drain_and_reset", NVML_GPU_RECOVERY_ACTION_DRAIN_AND_RESET}};
    for (const auto& [name, code] : kActions)
      if (a == name) f->action = code;
    if (f->action < 0)
      fail(v, "unknown recovery action '" + a + "' (expected none, reset, reboot, drain_p2p or drain_and_reset)");
  } else if (key == "count")
    f->count = static_cast<unsigned long long>(readInt(v, 1, 1000000000));
  else if (key == "sbe")
    f->sbe = static_cast<unsigned>(readInt(v, 0, 100000));
  else if (key == "dbe")
    f->dbe = static_cast<unsigned>(readInt(v, 0, 100000));
  else if (key == "pending")
    f->pending = readBool(v);
  else if (key == "correctable")
    f->correctable = static_cast<unsigned>(readInt(v, 0, 100000));
  else if (key == "uncorrectable")
    f->uncorrectable = static_cast<unsigned>(readInt(v, 0, 100000));
  else if (key == "failure")
    f->failure = readBool(v);
  else if (key == "gen")
    f->gen = static_cast<unsigned>(readInt(v, 1, 6));
  else if (key == "width") {
    f->width = static_cast<unsigned>(readInt(v, 1, 16));
    if ((f->width & (f->width - 1)) != 0) fail(v, "a PCIe width is 1, 2, 4, 8 or 16");
  } else if (key == "rate")
    f->rate = readNum(v, 0, 1e6);
  else if (key == "link")
    f->link = static_cast<int>(readInt(v, 0, NVML_NVLINK_MAX_LINKS - 1));
  else if (key == "replay")
    f->replay = readNum(v, 0, 1e6);
  else if (key == "recovery")
    f->recovery = readNum(v, 0, 1e6);
  else if (key == "crc_flit")
    f->crc_flit = readNum(v, 0, 1e6);
  else if (key == "crc_data")
    f->crc_data = readNum(v, 0, 1e6);
  else if (key == "seconds")
    f->seconds = readSeconds(v, 0.001, 3600);
  else if (key == "call") {
    f->call = readStr(v);
    if (f->call.rfind("nvml", 0) != 0) fail(v, "expected an NVML function name like nvmlDeviceGetPowerUsage");
  } else if (key == "error") {
    // An nvmlReturn_t the ABI declares, other than success: what a real driver can answer.
    const auto e = readInt(v, 1, NVML_ERROR_UNKNOWN);
    if (e > NVML_ERROR_DEPRECATED && e != NVML_ERROR_UNKNOWN)
      fail(v, "expected an NVML error code: 1-" + std::to_string(NVML_ERROR_DEPRECATED) + " or " +
                  std::to_string(NVML_ERROR_UNKNOWN) + " (NVML_ERROR_UNKNOWN), got " + std::to_string(e));
    f->error = static_cast<unsigned>(e);
  } else if (key == "after_calls")
    f->after_calls = static_cast<unsigned>(readInt(v, 0, 1000000));
  else if (key == "temperature")
    f->temperature = readNum(v, 20, 130);
  else if (key == "clock_factor")
    f->clock_factor = readNum(v, 0.05, 1);
  else if (key == "watts")
    f->watts = readNum(v, 1, 2000);
  else if (key == "factor")
    f->factor = readNum(v, 1, 100);
  else if (key == "pstate")
    f->pstate = static_cast<unsigned>(readInt(v, 1, 15));
  else if (key == "state") {
    // The fabric registration: nvidia-fabricmanager not running, still working, or done with an error.
    const std::string st = readStr(v);
    if (st == "not_started")
      f->fabric_state = NVML_GPU_FABRIC_STATE_NOT_STARTED;
    else if (st == "in_progress")
      f->fabric_state = NVML_GPU_FABRIC_STATE_IN_PROGRESS;
    else if (st == "failed")
      f->fabric_failed = true;
    else
      fail(v, "unknown fabric state '" + st + "' (expected not_started, in_progress or failed)");
  } else if (key == "health") {
    // One condition of the fabric's health mask, raised.
    const std::string h = readStr(v);
    constexpr std::pair<std::string_view, unsigned> kHealth[] = {
        {"degraded_bandwidth",
         NVML_GPU_FABRIC_HEALTH_MASK_DEGRADED_BW_TRUE << NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_DEGRADED_BW},
        {"route_recovery",
         NVML_GPU_FABRIC_HEALTH_MASK_ROUTE_RECOVERY_TRUE << NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_ROUTE_RECOVERY},
        {"route_unhealthy",
         NVML_GPU_FABRIC_HEALTH_MASK_ROUTE_UNHEALTHY_TRUE << NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_ROUTE_UNHEALTHY},
        {"access_timeout_recovery", NVML_GPU_FABRIC_HEALTH_MASK_ACCESS_TIMEOUT_RECOVERY_TRUE
                                        << NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_ACCESS_TIMEOUT_RECOVERY}};
    for (const auto& [name, bits] : kHealth)
      if (h == name) f->fabric_health = bits;
    if (!f->fabric_health)
      fail(v, "unknown fabric health condition '" + h +
                  "' (expected degraded_bandwidth, route_recovery, route_unhealthy or access_timeout_recovery)");
  } else
    fail(v, "internal: parameter '" + key + "' has no parser");
}

FaultConfig parseFault(const N& n, const Scenario& s) {
  expectMap(n);
  auto type = child(n, "type");
  if (!type) fail(n, "a fault needs a type (" + faultTypeList() + ")");
  std::string tname = readStr(*type);
  const FaultTypeInfo* info = findFaultType(tname);
  if (!info) fail(*type, "unknown fault type '" + tname + "' (expected " + faultTypeList() + ")");
  checkKeys(n, {"type", "gpu", "at", "duration", "note"}, info->params);
  FaultConfig f;
  f.type = info->type;
  f.type_name = tname;
  f.count = 1;
  auto gpu = child(n, "gpu");
  if (info->per_gpu && !gpu) fail(n, tname + " needs gpu: (an index, a list, or all)");
  if (!info->per_gpu && gpu) fail(*gpu, tname + " affects the whole machine; remove gpu");
  if (gpu) {
    auto add = [&](const N& g) {
      long long i = readInt(g, 0, 1023);
      if (i >= static_cast<long long>(s.gpus.size())) {
        fail(g,
             "GPU " + std::to_string(i) + " does not exist (the scenario has " + std::to_string(s.gpus.size()) + ")");
      }
      f.gpus.push_back(static_cast<unsigned>(i));
    };
    if (gpu->node.IsScalar() && gpu->node.Scalar() == "all") {
      for (unsigned i = 0; i < s.gpus.size(); ++i) f.gpus.push_back(i);
    } else if (gpu->node.IsSequence()) {
      for (std::size_t i = 0; i < gpu->node.size(); ++i) add(itemAt(*gpu, i));
    } else {
      add(*gpu);
    }
  }
  if (auto at = child(n, "at")) f.at = readSeconds(*at, 0, 1e9);
  if (auto d = child(n, "duration")) {
    if (!info->allows_duration) fail(*d, tname + " has no duration (it happens once, or is permanent)");
    f.duration = readSeconds(*d, 0.001, 1e9);
  }
  if (auto note = child(n, "note")) readStr(*note);
  for (auto key : info->params) {
    if (auto v = child(n, std::string(key))) parseFaultParam(*v, std::string(key), &f);
  }
  for (auto key : info->required) {
    if (!child(n, std::string(key))) fail(n, tname + " needs " + std::string(key));
  }
  if (f.type == FaultType::kPcieDowntrain && !f.gen && !f.width) fail(n, "pcie_downtrain needs gen or width");
  // Checks against the GPUs named.
  for (unsigned i : f.gpus) {
    const GpuConfig& g = s.gpus[i];
    const GpuProfile& P = *g.profile;
    std::string who = "GPU " + std::to_string(i) + " (" + std::string(P.id) + ")";
    switch (f.type) {
      case FaultType::kFanFailure:
        if (P.fans == 0) fail(*type, who + " has no fans");
        break;
      case FaultType::kNvlinkDown:
      case FaultType::kNvlinkErrors:
        if (P.nvlink_links == 0) fail(*type, who + " has no NVLink");
        if (f.link >= static_cast<int>(P.nvlink_links))
          fail(*child(n, "link"), who + " has links 0-" + std::to_string(P.nvlink_links - 1));
        break;
      case FaultType::kPcieDowntrain:
        if (f.gen > P.pcie_max_gen) fail(*child(n, "gen"), who + " runs at most Gen" + std::to_string(P.pcie_max_gen));
        if (f.width > P.pcie_max_width)
          fail(*child(n, "width"), who + " is at most x" + std::to_string(P.pcie_max_width));
        break;
      case FaultType::kEccSbe:
      case FaultType::kEccDbe:
      case FaultType::kRetiredPages:
        if (!g.ecc) fail(*type, "ECC is disabled on " + who);
        break;
      case FaultType::kRowRemap:
        if (!P.row_remapping || !g.ecc) fail(*type, who + " has no row remapping (or ECC is off)");
        break;
      case FaultType::kFabric:
        if (!s.nvswitch_count)
          fail(*type, who + " is on no NVSwitch fabric (the scenario needs nvlink: {nvswitch: true})");
        break;
      default:
        break;
    }
  }
  return f;
}

// ---------------------------------------------------------------------------------------------

Scenario build(Merged& m, const std::string& top_path) {
  Scenario s;
  auto get = [&](const char* key) -> std::optional<N> {
    auto it = m.keys.find(key);
    if (it == m.keys.end()) return std::nullopt;
    return it->second;
  };
  s.name = std::filesystem::path(top_path).stem().string();
  if (auto v = get("name")) s.name = readStr(*v);
  if (auto v = get("description")) s.description = readStr(*v);
  if (auto v = get("seed")) {
    unsigned long long seed = 0;
    if (!v->node.IsScalar() || !YAML::convert<unsigned long long>::decode(v->node, seed))
      fail(*v, "expected a non-negative integer");
    s.seed = seed;
  }
  if (auto v = get("driver_version")) {
    s.driver_version = readStr(*v);
    bool ok = !s.driver_version.empty() && s.driver_version.size() < 32 &&
              std::all_of(s.driver_version.begin(), s.driver_version.end(),
                          [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || c == '.'; });
    if (!ok) fail(*v, "expected a version like 550.54.15, got '" + s.driver_version + "'");
  }
  s.nvml_version = "12." + s.driver_version;
  if (auto v = get("nvml_version")) s.nvml_version = readStr(*v);
  if (auto v = get("cuda_driver_version")) s.cuda_driver_version = static_cast<int>(readInt(*v, 1000, 99990));
  if (auto v = get("privileged")) s.privileged = readBool(*v);
  if (auto v = get("init_error")) {
    std::string e = readStr(*v);
    if (e == "none")
      s.init_error = InitError::kNone;
    else if (e == "driver_not_loaded")
      s.init_error = InitError::kDriverNotLoaded;
    else if (e == "lib_rm_version_mismatch")
      s.init_error = InitError::kLibRmVersionMismatch;
    else if (e == "no_permission")
      s.init_error = InitError::kNoPermission;
    else
      fail(*v,
           "unknown init_error '" + e + "' (expected none, driver_not_loaded, lib_rm_version_mismatch, no_permission)");
  }

  HostInfo host;
  if (auto h = get("host")) {
    checkKeys(*h, {"numa_nodes", "virtualization"});
    if (auto v = child(*h, "virtualization")) {
      const std::string mode = readStr(*v);
      if (mode == "none")
        s.virtualization = NVML_GPU_VIRTUALIZATION_MODE_NONE;
      else if (mode == "passthrough")
        s.virtualization = NVML_GPU_VIRTUALIZATION_MODE_PASSTHROUGH;
      else
        fail(*v, "unknown virtualization '" + mode + "' (expected none or passthrough)");
    }
    if (auto nodes = child(*h, "numa_nodes")) {
      expectMap(*nodes);
      for (auto it = nodes->node.begin(); it != nodes->node.end(); ++it) {
        N key{it->first, nodes->file, nodes->path + "." + it->first.Scalar(), lineOf(*nodes)};
        int node = static_cast<int>(readInt(key, 0, 63));
        N val{it->second, nodes->file, key.path, lineOf(key)};
        std::vector<std::pair<unsigned, unsigned>> cpus;
        if (!parseCpuList(readStr(val), &cpus))
          fail(val, "expected a CPU list like 0-55,112-167, got '" + readStr(val) + "'");
        host.numa_cpus[node] = cpus;
      }
    }
  } else {
    host.numa_cpus[0] = {{0, 63}};
  }

  auto count = get("count");
  auto gpus = get("gpus");
  auto defaults = get("defaults");
  if (defaults) checkKeys(*defaults, kGpuKeys);
  std::size_t n = 0;
  if (gpus) expectSeq(*gpus);
  if (count)
    n = static_cast<std::size_t>(readInt(*count, 0, 64));
  else if (gpus)
    n = gpus->node.size();
  if (gpus && gpus->node.size() > n)
    fail(*gpus, std::to_string(gpus->node.size()) + " entries but count is " + std::to_string(n));
  if (n == 0 && s.init_error == InitError::kNone) {
    throw Failure{m.files.front() + ":1: the scenario has no GPUs (give count and defaults, or a gpus list)"};
  }
  std::set<std::tuple<unsigned, unsigned, unsigned, unsigned>> bus_ids;
  std::set<std::string> uuids;
  std::map<unsigned, unsigned> minors;  // minor -> GPU index
  std::map<int, int> switch_bridge;
  std::map<int, int> bridge_numa;
  std::map<int, unsigned> bridge_domain;  // a host bridge (PCIe root) is in one PCI domain
  N where = count ? *count : gpus ? *gpus : N{YAML::Node(), m.files.empty() ? nullptr : &m.files.front(), "", 1};
  for (std::size_t i = 0; i < n; ++i) {
    GpuSource src;
    src.defaults = defaults;
    if (gpus && i < gpus->node.size()) {
      src.own = itemAt(*gpus, i);
      checkKeys(*src.own, kGpuKeys);
    }
    const N& at = src.own ? *src.own : where;
    GpuConfig g = parseGpu(src, static_cast<unsigned>(i), host, at);
    if (!bus_ids.insert({g.pci_domain, g.pci_bus, g.pci_device, g.pci_function}).second)
      fail(at, "GPU " + std::to_string(i) + " has the same bus_id as another GPU");
    if (!g.uuid.empty() && !uuids.insert(g.uuid).second)
      fail(at, "GPU " + std::to_string(i) + " has the same uuid as another GPU");
    if (auto [mit, mfresh] = minors.emplace(g.minor, g.index); !mfresh)
      fail(at, "GPU " + std::to_string(i) + " has minor " + std::to_string(g.minor) + ", as GPU " +
                   std::to_string(mit->second) + " does (/dev/nvidiaN is one GPU's)");
    if (g.pcie_switch >= 0) {
      auto [it, fresh] = switch_bridge.emplace(g.pcie_switch, g.host_bridge);
      if (!fresh && it->second != g.host_bridge)
        fail(at, "pcie_switch " + std::to_string(g.pcie_switch) + " is already under another host_bridge");
    }
    auto [bit, bfresh] = bridge_numa.emplace(g.host_bridge, g.numa_node);
    if (!bfresh && bit->second != g.numa_node)
      fail(at,
           "its host bridge is on NUMA node " + std::to_string(bit->second) + ", not " + std::to_string(g.numa_node));
    auto [dit, dfresh] = bridge_domain.emplace(g.host_bridge, g.pci_domain);
    if (!dfresh && dit->second != g.pci_domain) {
      char want[16];
      std::snprintf(want, sizeof want, "%04x", dit->second);
      fail(at, "its host bridge (or PCIe switch) is in PCI domain " + std::string(want) +
                   ": GPUs below one root share its domain");
    }
    s.gpus.push_back(std::move(g));
  }

  // NVLink.
  s.nvlinks.resize(s.gpus.size());
  for (auto& g : s.gpus) s.nvlinks[g.index].resize(g.profile->nvlink_links);
  if (auto nv = get("nvlink")) {
    checkKeys(*nv, {"nvswitch", "switches", "bridges"});
    auto sw = child(*nv, "nvswitch");
    auto br = child(*nv, "bridges");
    bool nvswitch = sw && readBool(*sw);
    if (nvswitch && br) fail(*br, "an NVSwitch system has no point-to-point bridges");
    if (nvswitch) {
      s.nvswitch_count = 4;
      if (auto c = child(*nv, "switches")) s.nvswitch_count = static_cast<unsigned>(readInt(*c, 1, 16));
      for (auto& g : s.gpus) {
        unsigned links = g.profile->nvlink_links;
        if (links == 0)
          fail(*sw, "GPU " + std::to_string(g.index) + " (" + std::string(g.profile->id) + ") has no NVLink");
        for (unsigned l = 0; l < links; ++l) {
          s.nvlinks[g.index][l] = {NvLinkRemote::kSwitch, 0, l * s.nvswitch_count / links};
        }
      }
    }
    if (br) {
      expectSeq(*br);
      std::vector<unsigned> next(s.gpus.size(), 0);
      for (std::size_t i = 0; i < br->node.size(); ++i) {
        N item = itemAt(*br, i);
        checkKeys(item, {"gpus", "links"});
        auto gp = child(item, "gpus");
        if (!gp || !gp->node.IsSequence() || gp->node.size() != 2) fail(gp ? *gp : item, "expected gpus: [a, b]");
        unsigned a = static_cast<unsigned>(readInt(itemAt(*gp, 0), 0, 1023));
        unsigned b = static_cast<unsigned>(readInt(itemAt(*gp, 1), 0, 1023));
        if (a >= s.gpus.size() || b >= s.gpus.size())
          fail(*gp, "no such GPU (the scenario has " + std::to_string(s.gpus.size()) + ")");
        if (a == b) fail(*gp, "a bridge joins two different GPUs");
        auto lk = child(item, "links");
        unsigned links = lk ? static_cast<unsigned>(readInt(*lk, 1, NVML_NVLINK_MAX_LINKS)) : 1;
        for (unsigned g : {a, b}) {
          if (next[g] + links > s.gpus[g].profile->nvlink_links) {
            fail(item, "GPU " + std::to_string(g) + " has only " + std::to_string(s.gpus[g].profile->nvlink_links) +
                           " NVLink links");
          }
        }
        for (unsigned l = 0; l < links; ++l) {
          s.nvlinks[a][next[a]++] = {NvLinkRemote::kGpu, b, 0};
          s.nvlinks[b][next[b]++] = {NvLinkRemote::kGpu, a, 0};
        }
      }
    }
  }

  for (const N& f : m.faults) s.faults.push_back(parseFault(f, s));
  return s;
}

}  // namespace

bool parseCpuList(const std::string& text, std::vector<std::pair<unsigned, unsigned>>* out) {
  out->clear();
  std::stringstream ss(text);
  std::string part;
  while (std::getline(ss, part, ',')) {
    part.erase(std::remove(part.begin(), part.end(), ' '), part.end());
    unsigned a = 0, b = 0;
    char tail = 0;
    if (std::sscanf(part.c_str(), "%u-%u%c", &a, &b, &tail) == 2) {
      if (b < a || b > 65535) return false;
    } else if (std::sscanf(part.c_str(), "%u%c", &a, &tail) == 1) {
      if (a > 65535) return false;
      b = a;
    } else {
      return false;
    }
    out->emplace_back(a, b);
  }
  return !out->empty();
}

LoadResult loadScenarioFile(const std::string& path) {
  LoadResult r;
  Merged m;
  try {
    loadMerged(path, 0, &m, nullptr);
    r.scenario = build(m, path);
    r.ok = true;
  } catch (const Failure& f) {
    r.error = f.message;
  } catch (const YAML::Exception& e) {
    // Anything yaml-cpp still throws (e.g. a malformed node access) names at least the file.
    r.error = path + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg;
  } catch (const std::exception& e) {
    // Nothing may leave through the C ABI (nvmlInit): any other failure is an error message.
    r.error = path + ": cannot load the scenario: " + e.what();
  } catch (...) {
    r.error = path + ": cannot load the scenario (unknown error)";
  }
  r.sources = std::move(m.sources);
  return r;
}

}  // namespace gw::sim
