// The one clock: wall time for what is stored and shown, monotonic time for durations and
// deadlines, and the one RFC 3339 rendering of a wall time.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace gw::platform {

inline std::int64_t wallMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

inline std::int64_t monoMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// "2024-05-01T12:00:00.123Z" (UTC, milliseconds).
std::string formatRfc3339(std::int64_t ms);

}  // namespace gw::platform
