#include "cli/gpu_processes.h"

#include <map>
#include <sstream>

#include "platform/deadline.h"

namespace gw::cli {

std::string processCommand(const platform::FsRoot& root, const nvml::Session& s, unsigned pid) {
  if (auto comm = root.readLine("/proc/" + std::to_string(pid) + "/comm"); comm && !comm->empty()) return *comm;
  if (auto n = s.processName(pid); n && !n->empty()) {
    std::string name = *n;
    if (auto slash = name.rfind('/'); slash != std::string::npos) name = name.substr(slash + 1);
    return name;
  }
  return "-";
}

namespace {

std::optional<std::string> uidOf(const platform::FsRoot& root, unsigned pid) {
  auto status = root.readFile("/proc/" + std::to_string(pid) + "/status", 64 << 10);
  if (!status) return std::nullopt;
  std::istringstream in(*status);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("Uid:", 0) != 0) continue;
    std::istringstream fields(line.substr(4));
    std::string uid;
    if (fields >> uid) return uid;
  }
  return std::nullopt;
}

std::string userName(const std::string& passwd, const std::string& uid) {
  std::istringstream in(passwd);
  std::string line;
  while (std::getline(in, line)) {
    // name:password:uid:...
    auto a = line.find(':');
    if (a == std::string::npos) continue;
    auto b = line.find(':', a + 1);
    if (b == std::string::npos) continue;
    auto c = line.find(':', b + 1);
    if (line.substr(b + 1, c == std::string::npos ? std::string::npos : c - b - 1) == uid) return line.substr(0, a);
  }
  return uid;
}

}  // namespace

std::string processUser(const platform::FsRoot& root, unsigned pid) {
  auto uid = uidOf(root, pid);
  if (!uid) return "-";
  auto passwd = root.readFile("/etc/passwd", 4 << 20);
  return passwd ? userName(*passwd, *uid) : *uid;
}

std::vector<GpuProcessRead> readGpuProcesses(const nvml::Session& s, unsigned count, const platform::FsRoot& root,
                                             std::uint64_t since_us, const GpuMatch& match, bool needs_ids,
                                             std::chrono::milliseconds deadline) {
  struct Read {
    GpuProcessRead out;
    std::vector<nvml::ProcessInfo> procs;
    std::map<unsigned, nvml::ProcessUtil> util;
  };
  const nvml::Session* session = &s;
  auto reads = platform::runEachWithDeadline<Read>(
      count,
      [session, match, needs_ids, since_us](std::size_t idx) {
        const unsigned i = static_cast<unsigned>(idx);
        Read r;
        auto d = session->deviceByIndex(i);
        if (!d) {
          r.out.matched = match(i, "", "");
          r.out.lost = d.error();
          return r;
        }
        std::string uuid, bus;
        if (needs_ids) {
          uuid = d->uuid().value_or("");
          if (auto p = d->pciInfo()) bus = p->bus_id;
        }
        if (!match(i, uuid, bus)) return r;
        r.out.matched = true;
        auto procs = d->computeProcesses();
        if (!procs) {
          if (nvml::isLost(procs.status().nvmlCode())) r.out.lost = procs.error();
          return r;
        }
        r.procs = std::move(procs).value();
        if (auto g = d->graphicsProcesses()) r.procs.insert(r.procs.end(), g->begin(), g->end());
        if (auto u = d->processUtilization(since_us))
          for (const auto& p : *u) r.util[p.pid] = p;
        return r;
      },
      deadline);
  std::vector<GpuProcessRead> out(count);
  std::map<unsigned, std::string> users;  // one /proc and /etc/passwd read per process per call
  for (unsigned i = 0; i < count; ++i) {
    if (!reads[i]) {
      out[i].stalled = true;
      out[i].matched = true;
      continue;
    }
    Read& r = *reads[i];
    out[i] = std::move(r.out);
    for (const auto& p : r.procs) {
      GpuProcess g;
      g.gpu = i;
      g.pid = p.pid;
      g.graphics = p.graphics;
      g.used_bytes = p.used_bytes;
      if (auto u = r.util.find(p.pid); u != r.util.end()) {
        g.sm = u->second.sm;
        g.mem = u->second.mem;
        g.enc = u->second.enc;
        g.dec = u->second.dec;
      }
      g.command = processCommand(root, s, p.pid);
      auto [it, fresh] = users.try_emplace(p.pid);
      if (fresh) it->second = processUser(root, p.pid);
      g.user = it->second;
      out[i].procs.push_back(std::move(g));
    }
  }
  return out;
}

}  // namespace gw::cli
