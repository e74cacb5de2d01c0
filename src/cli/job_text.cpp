#include "cli/job_text.h"

#include <cmath>
#include <cstdio>

namespace gw::cli {

std::string humanBytes(double bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  constexpr int kLast = 5;
  double x = bytes;
  int u = 0;
  while (x >= 1024 && u < kLast) {
    x /= 1024;
    ++u;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, u ? "%.1f %s" : "%.0f %s", x, kUnits[u]);
  return buf;
}

std::string humanDuration(double seconds) {
  const auto total = static_cast<long long>(std::llround(seconds));
  char buf[64];
  if (total >= 3600)
    std::snprintf(buf, sizeof buf, "%lldh %02lldm %02llds", total / 3600, total / 60 % 60, total % 60);
  else if (total >= 60)
    std::snprintf(buf, sizeof buf, "%lldm %02llds", total / 60, total % 60);
  else
    std::snprintf(buf, sizeof buf, "%llds", total);
  return buf;
}

}  // namespace gw::cli
