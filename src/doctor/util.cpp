#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <utility>

#include "doctor/doctor_internal.h"

namespace gw::doctor::detail {

std::string trim(std::string_view s) {
  std::size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

std::vector<std::string> split(std::string_view s, char sep, bool keep_empty) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= s.size()) {
    std::size_t pos = s.find(sep, start);
    if (pos == std::string_view::npos) pos = s.size();
    std::string part(s.substr(start, pos - start));
    if (keep_empty || !part.empty()) out.push_back(std::move(part));
    start = pos + 1;
  }
  return out;
}

std::vector<std::string> lines(std::string_view s) {
  std::vector<std::string> out = split(s, '\n');
  for (auto& l : out)
    if (!l.empty() && l.back() == '\r') l.pop_back();
  return out;
}

bool startsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }
bool contains(std::string_view s, std::string_view needle) { return s.find(needle) != std::string_view::npos; }
std::string toLower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}
bool icontains(std::string_view s, std::string_view needle) { return contains(toLower(s), toLower(needle)); }

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

std::string basename(std::string_view path) {
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  if (path == "/") return "/";  // the root is its own name, as POSIX basename says
  auto pos = path.rfind('/');
  return std::string(pos == std::string_view::npos ? path : path.substr(pos + 1));
}

std::string dirname(std::string_view path) {
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  auto pos = path.rfind('/');
  if (pos == std::string_view::npos) return ".";
  if (pos == 0) return "/";
  return std::string(path.substr(0, pos));
}

std::vector<int> parseVersion(std::string_view v) {
  std::vector<int> out;
  std::size_t i = 0;
  while (i < v.size() && std::isdigit(static_cast<unsigned char>(v[i]))) {
    long n = 0;
    while (i < v.size() && std::isdigit(static_cast<unsigned char>(v[i]))) {
      if (n < 100000000) n = n * 10 + (v[i] - '0');
      ++i;
    }
    out.push_back(static_cast<int>(n));
    if (i < v.size() && v[i] == '.') {
      ++i;
    } else {
      break;
    }
  }
  return out;
}

int compareVersions(std::string_view a, std::string_view b) {
  auto va = parseVersion(a), vb = parseVersion(b);
  std::size_t n = std::max(va.size(), vb.size());
  for (std::size_t i = 0; i < n; ++i) {
    int x = i < va.size() ? va[i] : 0, y = i < vb.size() ? vb[i] : 0;
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}

std::string majorMinor(std::string_view v) {
  auto p = parseVersion(v);
  if (p.empty()) return std::string(v);
  if (p.size() == 1) return std::to_string(p[0]);
  return std::to_string(p[0]) + "." + std::to_string(p[1]);
}

int majorOf(std::string_view v) {
  auto p = parseVersion(v);
  return p.empty() ? -1 : p[0];
}

// Oldest driver (Linux) that supports each CUDA toolkit release, from NVIDIA's CUDA release notes.
std::string minimumDriverFor(std::string_view cuda) {
  static const std::vector<std::pair<std::string, std::string>> kTable = {
      {"11.0", "450.36.06"}, {"11.1", "455.23"},    {"11.2", "460.27.03"}, {"11.3", "465.19.01"}, {"11.4", "470.42.01"},
      {"11.5", "495.29.05"}, {"11.6", "510.39.01"}, {"11.7", "515.43.04"}, {"11.8", "520.61.05"}, {"12.0", "525.60.13"},
      {"12.1", "530.30.02"}, {"12.2", "535.54.03"}, {"12.3", "545.23.06"}, {"12.4", "550.54.14"}, {"12.5", "555.42.02"},
      {"12.6", "560.28.03"}, {"12.8", "570.26"},    {"12.9", "575.51.03"}, {"13.0", "580.65.06"}};
  std::string mm = majorMinor(cuda);
  for (const auto& [v, d] : kTable)
    if (v == mm) return d;
  return "";
}

std::string cudaVersionString(int v) {
  if (v <= 0) return "";
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

std::string nvccRelease(std::string_view output, std::string* full, std::string* line) {
  for (const auto& l : lines(output)) {
    auto pos = l.find("release ");
    if (pos == std::string::npos) continue;
    std::string rest = l.substr(pos + 8);
    std::string mm = majorMinor(rest);
    if (parseVersion(mm).empty()) continue;
    if (line) *line = trim(l);
    if (full) {
      auto vpos = l.find(", V");
      *full = vpos == std::string::npos ? mm : trim(l.substr(vpos + 3));
    }
    return mm;
  }
  return "";
}

std::string nvmlReturnName(int code) {
  switch (code) {
    case 0:
      return "SUCCESS";
    case 1:
      return "UNINITIALIZED";
    case 2:
      return "INVALID_ARGUMENT";
    case 3:
      return "NOT_SUPPORTED";
    case 4:
      return "NO_PERMISSION";
    case 6:
      return "NOT_FOUND";
    case 9:
      return "DRIVER_NOT_LOADED";
    case 10:
      return "TIMEOUT";
    case 12:
      return "LIBRARY_NOT_FOUND";
    case 13:
      return "FUNCTION_NOT_FOUND";
    case 14:
      return "CORRUPTED_INFOROM";
    case 15:
      return "GPU_IS_LOST";
    case 16:
      return "RESET_REQUIRED";
    case 17:
      return "OPERATING_SYSTEM";
    case 18:
      return "LIB_RM_VERSION_MISMATCH";
    case 20:
      return "MEMORY";
    case 999:
      return "UNKNOWN";
    default:
      return "error " + std::to_string(code);
  }
}

std::string normalizeBusId(std::string_view bus_id) {
  std::string s = toLower(trim(bus_id));
  auto colon = s.find(':');
  if (colon == std::string::npos) return s;
  // The domain as sysfs names it: at least 4 hex digits, more when it needs them (NVML prints 8:
  // "00000001:18:00.0" is sysfs's "0001:18:00.0", and "00010000:…" its "10000:…", not "0000:…").
  const std::string domain = s.substr(0, colon);
  if (domain.empty() || domain.size() > 8 ||
      !std::all_of(domain.begin(), domain.end(), [](unsigned char c) { return std::isxdigit(c) != 0; }))
    return s;
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04lx", std::strtoul(domain.c_str(), nullptr, 16));
  return buf + s.substr(colon);
}

std::string resolveLink(const platform::FsRoot& root, const std::string& path) {
  std::string cur = path;
  for (int hops = 0; hops < 16; ++hops) {
    auto target = root.readLink(cur);
    if (!target) return cur;
    std::string t = *target;
    if (t.empty()) return cur;
    if (t.front() != '/') t = dirname(cur) + "/" + t;
    // Normalise "a/./b" and "a/x/../b".
    std::vector<std::string> parts;
    for (auto& p : split(t, '/')) {
      if (p == ".") continue;
      if (p == "..") {
        if (!parts.empty()) parts.pop_back();
        continue;
      }
      parts.push_back(p);
    }
    cur = "/" + join(parts, "/");
  }
  return cur;
}

std::string findOnPath(const platform::FsRoot& root, const std::map<std::string, std::string>& env,
                       const std::string& program) {
  auto it = env.find("PATH");
  if (it == env.end()) return "";
  for (const auto& dir : split(it->second, ':')) {
    if (dir.empty() || dir.front() != '/') continue;  // relative entries depend on the cwd
    std::string candidate = dir + (dir.back() == '/' ? "" : "/") + program;
    if (root.exists(candidate) && !root.isDirectory(candidate)) return candidate;
  }
  return "";
}

std::vector<std::string> processNames(const platform::FsRoot& root) {
  std::vector<std::string> names;
  auto entries = root.listDir("/proc");
  if (!entries) return names;
  for (const auto& e : *entries) {
    if (e.empty() || !std::all_of(e.begin(), e.end(), [](unsigned char c) { return std::isdigit(c); })) continue;
    auto comm = root.readLine("/proc/" + e + "/comm");
    if (comm && !comm->empty()) names.push_back(*comm);
  }
  return names;
}

std::vector<std::string> loadedModules(const platform::FsRoot& root) {
  std::vector<std::string> mods;
  auto data = root.readFile("/proc/modules");
  if (!data) return mods;
  for (const auto& l : lines(*data)) {
    auto f = split(l, ' ');
    if (!f.empty()) mods.push_back(f[0]);
  }
  return mods;
}

bool moduleLoaded(const std::vector<std::string>& modules, std::string_view name) {
  return std::find(modules.begin(), modules.end(), name) != modules.end();
}

std::string Context::env(const std::string& name) const {
  auto it = in.env.find(name);
  return it == in.env.end() ? std::string() : it->second;
}

bool Context::hasEnv(const std::string& name) const { return in.env.count(name) > 0; }

Check& Context::add(std::string id, Layer layer, Verdict verdict, std::string title, std::string found, std::string fix,
                    std::string explain) {
  checks.push_back(
      Check{std::move(id), layer, verdict, std::move(title), std::move(found), std::move(fix), std::move(explain)});
  return checks.back();
}

const Check* Context::find(std::string_view id) const {
  for (const auto& c : checks)
    if (c.id == id) return &c;
  return nullptr;
}

const Check* Context::firstFailureBelow(Layer layer) const {
  const Check* best = nullptr;
  for (const auto& c : checks) {
    if (c.verdict != Verdict::kFail || c.layer >= layer || c.layer == Layer::kContainer) continue;
    if (!best || c.layer < best->layer) best = &c;
  }
  return best;
}

void detectEnvironment(Context& ctx) {
  const auto& root = ctx.in.root;
  ctx.kernel_release = root.readLine("/proc/sys/kernel/osrelease").value_or("");
  ctx.modules = loadedModules(root);

  // WSL2: the kernel says so, or the paravirtualised GPU device is there.
  std::string proc_version = root.readLine("/proc/version").value_or("");
  if (icontains(ctx.kernel_release, "microsoft") || icontains(ctx.kernel_release, "wsl")) {
    ctx.wsl = true;
    ctx.wsl_evidence = "kernel release " + ctx.kernel_release;
  } else if (icontains(proc_version, "microsoft") || icontains(proc_version, "wsl2")) {
    ctx.wsl = true;
    ctx.wsl_evidence = "/proc/version mentions Microsoft";
  } else if (root.exists("/dev/dxg")) {
    ctx.wsl = true;
    ctx.wsl_evidence = "/dev/dxg exists";
  }

  // Containers: marker files, the cgroup of PID 1, or a Kubernetes pod environment.
  if (root.exists("/.dockerenv")) {
    ctx.container = true;
    ctx.container_evidence = "/.dockerenv";
  } else if (root.exists("/run/.containerenv")) {
    ctx.container = true;
    ctx.container_evidence = "/run/.containerenv (podman)";
  } else if (ctx.hasEnv("KUBERNETES_SERVICE_HOST")) {
    ctx.container = true;
    ctx.container_evidence = "KUBERNETES_SERVICE_HOST is set (Kubernetes pod)";
  } else if (auto cg = root.readFile("/proc/1/cgroup")) {
    for (const char* marker : {"docker", "kubepods", "containerd", "libpod", "/lxc/", "crio"}) {
      if (contains(*cg, marker)) {
        ctx.container = true;
        ctx.container_evidence = std::string("/proc/1/cgroup mentions ") + marker;
        break;
      }
    }
  }
}

}  // namespace gw::doctor::detail
