#include "platform/clock.h"

#include <chrono>
#include <cstdio>
#include <ctime>

namespace gw::platform {

std::int64_t wallMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::int64_t monoMs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1'000'000;
}

std::int64_t wallMsOfMonoUs(std::uint64_t mono_us, std::int64_t wall_now_ms, std::int64_t mono_now_ms) {
  return wall_now_ms - (mono_now_ms - static_cast<std::int64_t>(mono_us / 1000));
}

std::int64_t wallMsOfMonoUs(std::uint64_t mono_us) { return wallMsOfMonoUs(mono_us, wallMs(), monoMs()); }

std::string formatRfc3339(std::int64_t unix_ms) {
  // Floor division, so that instants before 1970 keep a 0..999 millisecond part.
  const std::int64_t secs = unix_ms >= 0 ? unix_ms / 1000 : (unix_ms - 999) / 1000;
  const int rem = static_cast<int>(unix_ms - secs * 1000);
  const std::time_t t = static_cast<std::time_t>(secs);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, rem);
  return buf;
}

}  // namespace gw::platform
