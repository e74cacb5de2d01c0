// Parsing of the JSON API's query parameters, kept apart from HTTP so that it is unit tested.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"
#include "platform/clock.h"

namespace gw::server {

// Where the events' list starts when the caller names no `since` (/api/v1/events and the control
// socket's "events"): the last hour, as docs/api.md says.
inline constexpr std::int64_t kDefaultEventsWindowMs = 60 * 60 * 1000;

// A point in time for since/until: RFC3339 ("2024-05-01T12:00:00Z", "…T12:00:00.5+02:00"),
// unix seconds ("1714564800", "1714564800.25"), "now", or a duration before now ("1h", "30m",
// "1h30m", also written "-1h"). Returns ms since the epoch.
Result<std::int64_t> parseTimeSpec(std::string_view text, std::int64_t now_ms);

// A query step ("1m", "10s", "500ms"); "0" or "raw" mean every sample (returns 0).
Result<std::int64_t> parseStepMs(std::string_view text);

// A count or an id in a URL: decimal digits only (no sign, blank or trailing text, which
// std::stoul would let through: "-1" as 2^64-1, "5x" as 5), from lo to hi inclusive.
Result<std::uint64_t> parseWholeNumber(std::string_view text, std::uint64_t lo, std::uint64_t hi);

}  // namespace gw::server
