#include "nvml/driver_gpus.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <set>

namespace gw::nvml {

namespace {

constexpr std::size_t kInfoBytes = 4096;

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool parseHex(std::string_view s, unsigned long max, unsigned long& out) {
  if (s.empty() || s.size() > 8) return false;
  auto r = std::from_chars(s.data(), s.data() + s.size(), out, 16);
  return r.ec == std::errc() && r.ptr == s.data() + s.size() && out <= max;
}

}  // namespace

std::string normalBusId(std::string_view bus) {
  // DOMAIN:BUS:DEVICE.FUNCTION, the domain 4 or 8 hex digits.
  const auto c2 = bus.rfind(':');
  const auto dot = bus.rfind('.');
  if (c2 == std::string_view::npos || c2 == 0 || dot == std::string_view::npos || dot < c2) return "";
  const auto c1 = bus.rfind(':', c2 - 1);
  if (c1 == std::string_view::npos) return "";
  unsigned long dom = 0, b = 0, dev = 0, fn = 0;
  if (!parseHex(bus.substr(0, c1), 0xffffffff, dom) || !parseHex(bus.substr(c1 + 1, c2 - c1 - 1), 0xff, b) ||
      !parseHex(bus.substr(c2 + 1, dot - c2 - 1), 0x1f, dev) || !parseHex(bus.substr(dot + 1), 0x7, fn))
    return "";
  char out[32];
  std::snprintf(out, sizeof out, "%04lx:%02lx:%02lx.%lx", dom, b, dev, fn);
  return out;
}

Result<std::vector<DriverGpu>> readDriverGpus(const platform::FsRoot& root) {
  constexpr std::string_view kDir = "/proc/driver/nvidia/gpus";
  std::vector<DriverGpu> out;
  if (!root.isDirectory(kDir)) return out;
  auto names = root.listDir(kDir);
  if (!names) return names.status();
  if (names->size() > kMaxDriverGpus)
    return Status::Error(root.path(kDir) + " lists " + std::to_string(names->size()) + " entries; at most " +
                         std::to_string(kMaxDriverGpus) + " are read");
  for (const auto& name : *names) {
    auto text = root.readFile(std::string(kDir) + "/" + name + "/information", kInfoBytes);
    if (!text) continue;  // a GPU going away meanwhile
    DriverGpu g;
    g.bus_id = normalBusId(name);
    bool excluded = false;  // NVreg_ExcludedGpus: the driver holds it, NVML never shows it
    std::string_view rest = *text;
    while (!rest.empty()) {
      const auto nl = rest.find('\n');
      std::string_view line = rest.substr(0, nl);
      rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
      const auto colon = line.find(':');
      if (colon == std::string_view::npos) continue;
      const auto key = trim(line.substr(0, colon));
      const auto value = trim(line.substr(colon + 1));
      if (key == "Device Minor") {
        long m = -1;
        auto r = std::from_chars(value.data(), value.data() + value.size(), m);
        if (r.ec == std::errc() && r.ptr == value.data() + value.size() && m >= 0 && m < 255) g.minor = m;
      } else if (key == "GPU UUID" && value.size() <= 96 && value.rfind("GPU-", 0) == 0) {
        g.uuid = std::string(value);
      } else if (key == "GPU Excluded") {
        excluded = value == "Yes";
      } else if (key == "Bus Location" && g.bus_id.empty()) {
        g.bus_id = normalBusId(value);
      }
    }
    if (g.minor >= 0 && !excluded) out.push_back(std::move(g));
  }
  return out;
}

void completeMinors(std::vector<BoardMinor>& boards, const std::vector<DriverGpu>& driver) {
  std::set<long> claimed;
  for (const auto& b : boards)
    if (b.minor >= 0) claimed.insert(b.minor);
  for (auto& b : boards) {
    if (b.minor >= 0) continue;
    const std::string bus = normalBusId(b.bus_id);
    for (const auto& d : driver)
      if (!claimed.count(d.minor) && ((!bus.empty() && d.bus_id == bus) || (!b.uuid.empty() && d.uuid == b.uuid))) {
        b.minor = d.minor;
        claimed.insert(d.minor);
        break;
      }
  }
  const auto unknown = std::count_if(boards.begin(), boards.end(), [](const BoardMinor& b) { return b.minor < 0; });
  std::vector<long> free;
  for (const auto& d : driver)
    if (!claimed.count(d.minor)) free.push_back(d.minor);
  std::sort(free.begin(), free.end());
  free.erase(std::unique(free.begin(), free.end()), free.end());
  // Only a count that matches exactly proves which minor is whose.
  if (unknown == 1 && free.size() == 1)
    for (auto& b : boards)
      if (b.minor < 0) b.minor = free.front();
}

}  // namespace gw::nvml
