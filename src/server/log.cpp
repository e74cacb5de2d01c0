#include "server/log.h"

#include <unistd.h>

#include <chrono>
#include <ctime>
#include <cstdio>

namespace gw::server {

void logLine(const std::string& level, const std::string& message) {
  using namespace std::chrono;
  auto now = system_clock::now();
  std::time_t t = system_clock::to_time_t(now);
  auto ms = duration_cast<milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char ts[64];
  std::snprintf(ts, sizeof(ts), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms));
  std::string line = std::string(ts) + " gpuwarden " + level + ": " + message;
  // Newlines inside a message would break "one line per event".
  for (auto& ch : line)
    if (ch == '\n' || ch == '\r') ch = ' ';
  line += '\n';
  // One write(2) so that lines from different threads do not interleave.
  ssize_t r = ::write(STDERR_FILENO, line.data(), line.size());
  (void)r;
}

}  // namespace gw::server
