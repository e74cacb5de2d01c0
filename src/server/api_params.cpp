#include "server/api_params.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <ctime>

#include "server/config.h"

namespace gw::server {
namespace {

bool digits(std::string_view s, std::size_t pos, std::size_t n, int* out) {
  if (pos + n > s.size()) return false;
  int v = 0;
  for (std::size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return true;
}

// RFC3339 date-time (with 'T' or ' ' between date and time, 'Z' or a numeric offset).
Result<std::int64_t> parseRfc3339(std::string_view s) {
  const Status bad = Status::Error("'" + std::string(s) + "' is not an RFC3339 time (e.g. 2024-05-01T12:00:00Z)");
  int y, mo, d, h, mi, sec;
  if (!digits(s, 0, 4, &y) || s.size() < 19 || s[4] != '-' || !digits(s, 5, 2, &mo) || s[7] != '-' ||
      !digits(s, 8, 2, &d) || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') || !digits(s, 11, 2, &h) || s[13] != ':' ||
      !digits(s, 14, 2, &mi) || s[16] != ':' || !digits(s, 17, 2, &sec))
    return bad;
  // A day the month does not have (2024-02-31) is refused: timegm would read it as March 2.
  static constexpr int kDays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  if (mo < 1 || mo > 12 || d < 1 || d > kDays[mo - 1] || (mo == 2 && d == 29 && !leap) || h > 23 || mi > 59 || sec > 60)
    return bad;
  std::size_t pos = 19;
  double frac_ms = 0;
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    double scale = 100;
    std::size_t start = pos;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      frac_ms += (s[pos] - '0') * scale;
      scale /= 10;
      ++pos;
    }
    if (pos == start) return bad;
  }
  if (pos >= s.size()) return bad;  // RFC3339 requires a zone
  int offset_min = 0;
  if (s[pos] == 'Z' || s[pos] == 'z') {
    ++pos;
  } else if (s[pos] == '+' || s[pos] == '-') {
    int oh, om;
    if (!digits(s, pos + 1, 2, &oh) || pos + 3 >= s.size() || s[pos + 3] != ':' || !digits(s, pos + 4, 2, &om))
      return bad;
    offset_min = (oh * 60 + om) * (s[pos] == '-' ? -1 : 1);
    pos += 6;
  } else {
    return bad;
  }
  if (pos != s.size()) return bad;
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = sec;
  std::time_t t = timegm(&tm);
  return static_cast<std::int64_t>(t) * 1000 + static_cast<std::int64_t>(std::llround(frac_ms)) -
         static_cast<std::int64_t>(offset_min) * 60000;
}

}  // namespace

Result<std::int64_t> parseTimeSpec(std::string_view text, std::int64_t now_ms) {
  if (text.empty()) return Status::Error("empty time");
  if (text == "now") return now_ms;
  // Unix seconds, possibly fractional.
  if (text.find_first_not_of("0123456789.") == std::string_view::npos) {
    double v = 0;
    auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || p != text.data() + text.size() || !std::isfinite(v))
      return Status::Error("'" + std::string(text) + "' is not a unix time in seconds");
    if (v > 1e11) return Status::Error("'" + std::string(text) + "' looks like milliseconds; give unix seconds");
    return static_cast<std::int64_t>(std::llround(v * 1000));
  }
  if (text.size() >= 10 && text[4] == '-') return parseRfc3339(text);
  std::string_view rel = text;
  if (rel.starts_with("-")) rel.remove_prefix(1);
  auto d = parseDuration(rel);
  if (!d) {
    return Status::Error(
        "'" + std::string(text) +
        "' is not a time: give RFC3339 (2024-05-01T12:00:00Z), unix seconds, or a duration ago (1h, 30m)");
  }
  return now_ms - d->count();
}

Result<std::uint64_t> parseWholeNumber(std::string_view text, std::uint64_t lo, std::uint64_t hi) {
  const auto refuse = [&] {
    return Status::Error("expected a whole number from " + std::to_string(lo) + " to " + std::to_string(hi));
  };
  if (text.empty() || text.size() > 20) return refuse();
  std::uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return refuse();
    const auto digit = static_cast<std::uint64_t>(c - '0');
    if (v > (UINT64_MAX - digit) / 10) return refuse();
    v = v * 10 + digit;
  }
  if (v < lo || v > hi) return refuse();
  return v;
}

Result<std::int64_t> parseStepMs(std::string_view text) {
  if (text == "0" || text == "raw") return std::int64_t{0};
  auto d = parseDuration(text);
  if (!d) return d.status();
  return static_cast<std::int64_t>(d->count());
}

}  // namespace gw::server
