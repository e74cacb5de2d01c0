// The one clock. Everything that stamps, schedules or prints time asks here, so that there is one
// definition of "now" and one text form of a timestamp. (The simulator keeps its own scenario
// clock: src/sim does not depend on platform/.)
#pragma once

#include <cstdint>
#include <string>

namespace gw::platform {

// Milliseconds since the Unix epoch: timestamps that are stored, shown or sent.
std::int64_t wallMs();

// Milliseconds of CLOCK_MONOTONIC (time since boot, never stepped): durations and deadlines. The
// kernel log stamps its records on this clock, and std::chrono::steady_clock is this clock too.
std::int64_t monoMs();

// The wall-clock time of an instant stamped on the monotonic clock in microseconds (the kernel
// log's records): now's wall time less how long ago it was. `wall_now_ms` and `mono_now_ms` are
// read together; the one-argument form reads them itself.
std::int64_t wallMsOfMonoUs(std::uint64_t mono_us, std::int64_t wall_now_ms, std::int64_t mono_now_ms);
std::int64_t wallMsOfMonoUs(std::uint64_t mono_us);

// "2024-05-01T12:00:00.123Z" (RFC 3339, UTC, milliseconds) from milliseconds since the epoch.
std::string formatRfc3339(std::int64_t unix_ms);

}  // namespace gw::platform
