#include "events/kmsg_parser.h"

#include <algorithm>
#include <array>
#include <cstdio>

namespace gw::events {
namespace {

// ---------------------------------------------------------------- character helpers

constexpr bool isDigit(char c) { return c >= '0' && c <= '9'; }
constexpr bool isHex(char c) { return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
constexpr int hexValue(char c) {
  if (isDigit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return c - 'A' + 10;
}
constexpr bool isSpace(char c) { return c == ' ' || c == '\t'; }
constexpr char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c; }
constexpr bool isAlnum(char c) { return isDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

bool startsWith(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && s.substr(0, prefix.size()) == prefix;
}

bool consume(std::string_view& s, std::string_view literal) {
  if (!startsWith(s, literal)) return false;
  s.remove_prefix(literal.size());
  return true;
}

void skipSpaces(std::string_view& s) {
  while (!s.empty() && isSpace(s.front())) s.remove_prefix(1);
}

std::string_view trimRight(std::string_view s) {
  while (!s.empty() && (isSpace(s.back()) || s.back() == '\n' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

// Consumes 1..maxDigits decimal digits; nullopt (nothing consumed) when there are none or more.
std::optional<uint64_t> parseDecimal(std::string_view& s, std::size_t maxDigits) {
  std::size_t n = 0;
  uint64_t value = 0;
  while (n < s.size() && isDigit(s[n])) {
    if (n == maxDigits) return std::nullopt;
    value = value * 10 + static_cast<uint64_t>(s[n] - '0');
    ++n;
  }
  if (n == 0) return std::nullopt;
  s.remove_prefix(n);
  return value;
}

// Consumes exactly n decimal digits (more may follow).
std::optional<int> parseFixedDigits(std::string_view& s, std::size_t n) {
  if (s.size() < n) return std::nullopt;
  int value = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (!isDigit(s[i])) return std::nullopt;
    value = value * 10 + (s[i] - '0');
  }
  s.remove_prefix(n);
  return value;
}

// Consumes a run of hex digits, at most maxDigits; nullopt when there are none or too many.
std::optional<uint64_t> parseHexRun(std::string_view& s, std::size_t maxDigits, std::size_t* len) {
  std::size_t n = 0;
  uint64_t value = 0;
  while (n < s.size() && isHex(s[n])) {
    if (n == maxDigits) return std::nullopt;
    value = value * 16 + static_cast<uint64_t>(hexValue(s[n]));
    ++n;
  }
  if (n == 0) return std::nullopt;
  s.remove_prefix(n);
  if (len != nullptr) *len = n;
  return value;
}

// Case-insensitive search of an ASCII word (not inside a longer alphanumeric run).
std::size_t findWordCI(std::string_view hay, std::string_view word, std::size_t from = 0) {
  if (word.empty() || hay.size() < word.size()) return std::string_view::npos;
  for (std::size_t i = from; i + word.size() <= hay.size(); ++i) {
    bool match = true;
    for (std::size_t k = 0; k < word.size(); ++k) {
      if (lower(hay[i + k]) != lower(word[k])) {
        match = false;
        break;
      }
    }
    if (!match) continue;
    const bool leftOk = i == 0 || !isAlnum(hay[i - 1]);
    const bool rightOk = i + word.size() == hay.size() || !isAlnum(hay[i + word.size()]);
    if (leftOk && rightOk) return i;
  }
  return std::string_view::npos;
}

// ---------------------------------------------------------------- PCI addresses

std::string formatBusId(uint64_t domain, uint64_t bus, uint64_t device, uint64_t function) {
  std::array<char, 32> buf{};
  std::snprintf(buf.data(), buf.size(), "%08X:%02X:%02X.%X", static_cast<unsigned>(domain), static_cast<unsigned>(bus),
                static_cast<unsigned>(device), static_cast<unsigned>(function));
  return std::string(buf.data());
}

// Consumes a PCI address at the start of s ("PCI:" prefix optional): domain:bus:device[.fn] or
// bus:device[.fn]. Stops before the first character that cannot continue it.
std::optional<std::string> consumePciAddress(std::string_view& s) {
  std::string_view t = s;
  consume(t, "PCI:");
  std::size_t len1 = 0;
  std::size_t len2 = 0;
  std::size_t len3 = 0;
  auto g1 = parseHexRun(t, 8, &len1);
  if (!g1 || !consume(t, ":")) return std::nullopt;
  auto g2 = parseHexRun(t, 8, &len2);
  if (!g2) return std::nullopt;
  uint64_t domain = 0;
  uint64_t bus = 0;
  uint64_t device = 0;
  if (t.size() >= 2 && t[0] == ':' && isHex(t[1])) {
    t.remove_prefix(1);
    auto g3 = parseHexRun(t, 8, &len3);
    if (!g3 || len2 > 2 || len3 > 2) return std::nullopt;
    domain = *g1;
    bus = *g2;
    device = *g3;
  } else {
    if (len1 > 2 || len2 > 2) return std::nullopt;
    bus = *g1;
    device = *g2;
  }
  if (device > 0x1f) return std::nullopt;
  uint64_t function = 0;
  if (t.size() >= 2 && t[0] == '.' && isHex(t[1])) {
    t.remove_prefix(1);
    std::size_t lenFn = 0;
    auto fn = parseHexRun(t, 1, &lenFn);
    if (!fn || *fn > 7) return std::nullopt;
    function = *fn;
  }
  // An address glued to more alphanumerics ("0000:3b:00zz") is not an address.
  if (!t.empty() && isAlnum(t.front())) return std::nullopt;
  s = t;
  return formatBusId(domain, bus, device, function);
}

// Finds the first PCI address anywhere in text (used for free-form "fallen off the bus" lines).
std::optional<std::string> findPciAddress(std::string_view text) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (!isHex(text[i]) && text[i] != 'P') continue;
    if (i > 0 && isAlnum(text[i - 1])) continue;
    std::string_view t = text.substr(i);
    if (auto id = consumePciAddress(t)) return id;
  }
  return std::nullopt;
}

// ---------------------------------------------------------------- timestamps

constexpr std::array<std::string_view, 12> kMonths = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                      "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

int monthFromName(std::string_view name) {
  for (std::size_t i = 0; i < kMonths.size(); ++i) {
    if (name == kMonths[i]) return static_cast<int>(i) + 1;
  }
  return 0;
}

// HH:MM:SS[.frac]
bool parseClock(std::string_view& s, WallClock& wc) {
  std::string_view t = s;
  auto h = parseDecimal(t, 2);
  if (!h || !consume(t, ":")) return false;
  auto m = parseDecimal(t, 2);
  if (!m || !consume(t, ":")) return false;
  auto sec = parseDecimal(t, 2);
  if (!sec || *h > 23 || *m > 59 || *sec > 60) return false;
  wc.hour = static_cast<int>(*h);
  wc.minute = static_cast<int>(*m);
  wc.second = static_cast<int>(*sec);
  if (t.size() >= 2 && (t[0] == '.' || t[0] == ',') && isDigit(t[1])) {
    t.remove_prefix(1);
    int micro = 0;
    int digits = 0;
    while (!t.empty() && isDigit(t.front())) {
      if (digits < 6) {
        micro = micro * 10 + (t.front() - '0');
        ++digits;
      }
      t.remove_prefix(1);
    }
    while (digits < 6) {
      micro *= 10;
      ++digits;
    }
    wc.microsecond = micro;
  }
  s = t;
  return true;
}

// "Nov 29 10:00:01" / "Nov  9 10:00:01.123456" (BSD syslog, journalctl short)
bool parseBsdTime(std::string_view& s, WallClock& wc) {
  if (s.size() < 15) return false;
  int month = monthFromName(s.substr(0, 3));
  if (month == 0 || !isSpace(s[3])) return false;
  std::string_view t = s.substr(4);
  skipSpaces(t);
  auto day = parseDecimal(t, 2);
  if (!day || *day < 1 || *day > 31 || t.empty() || !isSpace(t.front())) return false;
  skipSpaces(t);
  WallClock out;
  if (!parseClock(t, out)) return false;
  out.month = month;
  out.day = static_cast<int>(*day);
  wc = out;
  s = t;
  return true;
}

// "2024-11-29T10:00:01[.frac][Z|+01:00|+0100]" (journalctl -o short-iso, RFC 5424)
bool parseIsoTime(std::string_view& s, WallClock& wc) {
  std::string_view t = s;
  auto year = parseDecimal(t, 4);
  if (!year || !consume(t, "-")) return false;
  auto month = parseDecimal(t, 2);
  if (!month || !consume(t, "-")) return false;
  auto day = parseDecimal(t, 2);
  if (!day || t.empty() || (t.front() != 'T' && t.front() != ' ')) return false;
  t.remove_prefix(1);
  WallClock out;
  if (!parseClock(t, out)) return false;
  if (*month < 1 || *month > 12 || *day < 1 || *day > 31) return false;
  out.year = static_cast<int>(*year);
  out.month = static_cast<int>(*month);
  out.day = static_cast<int>(*day);
  if (consume(t, "Z")) {
    out.utcOffsetMinutes = 0;
  } else if (!t.empty() && (t.front() == '+' || t.front() == '-')) {
    const int sign = t.front() == '-' ? -1 : 1;
    std::string_view z = t.substr(1);
    auto hh = parseFixedDigits(z, 2);
    if (hh) {
      consume(z, ":");
      auto mm = parseFixedDigits(z, 2);
      out.utcOffsetMinutes = sign * (*hh * 60 + mm.value_or(0));
      t = z;
    }
  }
  wc = out;
  s = t;
  return true;
}

// "[ 1234.567890]" → µs, or "[Sun Mar 29 19:20:37 2026]" (dmesg -T) → wall clock.
bool parseBracket(std::string_view s, std::optional<uint64_t>& monoUs, std::optional<WallClock>& wall) {
  if (!consume(s, "[")) return false;
  skipSpaces(s);
  if (!s.empty() && isDigit(s.front())) {
    auto secs = parseDecimal(s, 12);
    if (!secs || !consume(s, ".")) return false;
    uint64_t micro = 0;
    int digits = 0;
    while (!s.empty() && isDigit(s.front())) {
      if (digits < 6) {
        micro = micro * 10 + static_cast<uint64_t>(s.front() - '0');
        ++digits;
      }
      s.remove_prefix(1);
    }
    if (digits == 0 || !consume(s, "]")) return false;
    while (digits < 6) {
      micro *= 10;
      ++digits;
    }
    monoUs = *secs * 1000000ULL + micro;
    return true;
  }
  // Weekday, then the BSD form, then an optional year.
  if (s.size() < 4 || !isSpace(s[3])) return false;
  s.remove_prefix(4);
  WallClock wc;
  if (!parseBsdTime(s, wc)) return false;
  skipSpaces(s);
  if (auto year = parseDecimal(s, 4)) wc.year = static_cast<int>(*year);
  if (!consume(s, "]")) return false;
  wall = wc;
  return true;
}

// Reads timestamps and level from the part of the line before the NVIDIA body.
void parseHeader(std::string_view header, KernelEvent& ev) {
  // /dev/kmsg record: "prio,seq,usec,flags[,more];"
  if (!header.empty() && isDigit(header.front()) && header.back() == ';') {
    std::string_view t = header;
    auto prio = parseDecimal(t, 4);
    std::optional<uint64_t> seq;
    std::optional<uint64_t> usec;
    if (prio && consume(t, ",")) seq = parseDecimal(t, 20);
    if (seq && consume(t, ",")) usec = parseDecimal(t, 20);
    if (usec && consume(t, ",")) {
      ev.level = static_cast<KernelLevel>(*prio & 7U);
      ev.kmsgSequence = *seq;
      ev.monotonicUs = *usec;
      return;
    }
  }
  std::string_view t = header;
  // "<4>" from dmesg -r / raw syslog
  if (consume(t, "<")) {
    std::string_view u = t;
    auto prio = parseDecimal(u, 4);
    if (prio && consume(u, ">")) {
      ev.level = static_cast<KernelLevel>(*prio & 7U);
      t = u;
    }
  }
  WallClock wc;
  if (!t.empty() && isDigit(t.front())) {
    if (parseIsoTime(t, wc)) ev.wallClock = wc;
  } else if (parseBsdTime(t, wc)) {
    ev.wallClock = wc;
  }
  for (std::size_t pos = t.find('['); pos != std::string_view::npos; pos = t.find('[', pos + 1)) {
    if (parseBracket(t.substr(pos), ev.monotonicUs, ev.wallClock)) break;
  }
}

// ---------------------------------------------------------------- body details

// "pid=1234, name=python3, rest" / "pid='<unknown>', name=<unknown>, rest" / "pid=1896, rest"
void parsePidAndName(std::string_view& rest, KernelEvent& ev) {
  if (consume(rest, "pid=")) {
    std::size_t end = rest.find(',');
    std::string_view value = rest.substr(0, end);
    std::string_view digits = value;
    auto pid = parseDecimal(digits, 10);
    if (pid && digits.empty() && *pid <= 0x7fffffffULL) ev.pid = static_cast<int>(*pid);
    rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end + 1);
    skipSpaces(rest);
  }
  if (consume(rest, "name=")) {
    std::size_t end = rest.find(", ");
    std::string_view value = rest.substr(0, end);
    if (end == std::string_view::npos) {
      // "name=foo" at the end, or "name=foo,rest"
      std::size_t comma = rest.find(',');
      value = rest.substr(0, comma);
      end = comma;
    }
    value = trimRight(value);
    if (value != "<unknown>" && value != "'<unknown>'") ev.processName = std::string(value);
    rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end + 1);
    skipSpaces(rest);
  }
}

bool isNvLinkXid(int code) { return code == 74 || code == 136 || (code >= 144 && code <= 150) || code == 155; }

// Fatal/non-fatal, link number, unit and the first two registers of NVLink / NVSwitch lines.
void parseLinkDetails(std::string_view msg, KernelEvent& ev, bool firstTokenIsUnit) {
  if (firstTokenIsUnit) {
    std::size_t n = 0;
    bool upper = false;
    while (n < msg.size() && (isDigit(msg[n]) || msg[n] == '_' || (msg[n] >= 'A' && msg[n] <= 'Z'))) {
      upper = upper || (msg[n] >= 'A' && msg[n] <= 'Z');
      ++n;
    }
    if (n >= 3 && upper && (n == msg.size() || isSpace(msg[n]))) {
      ev.nvlinkUnit = std::string(msg.substr(0, n));
    }
  }
  const std::size_t nonfatal1 = findWordCI(msg, "nonfatal");
  const std::size_t nonfatal2 = findWordCI(msg, "non-fatal");
  std::size_t fatal = findWordCI(msg, "fatal");
  // "Non-fatal" contains the word "fatal" after the hyphen; skip that occurrence.
  while (fatal != std::string_view::npos && nonfatal2 != std::string_view::npos && fatal == nonfatal2 + 4) {
    fatal = findWordCI(msg, "fatal", fatal + 1);
  }
  std::size_t nonfatal = std::min(nonfatal1, nonfatal2);
  if (nonfatal != std::string_view::npos && (fatal == std::string_view::npos || nonfatal < fatal)) {
    ev.fatal = false;
  } else if (fatal != std::string_view::npos) {
    ev.fatal = true;
  }
  for (std::size_t pos = findWordCI(msg, "link"); pos != std::string_view::npos;
       pos = findWordCI(msg, "link", pos + 4)) {
    std::string_view t = msg.substr(pos + 4);
    skipSpaces(t);
    if (auto n = parseDecimal(t, 4)) {
      ev.link = static_cast<int>(*n);
      break;
    }
  }
  std::size_t paren = msg.find("(0x");
  if (paren != std::string_view::npos) {
    std::string_view t = msg.substr(paren + 1);
    std::array<std::optional<uint32_t>, 2> regs;
    for (auto& reg : regs) {
      skipSpaces(t);
      if (!consume(t, "0x") && !consume(t, "0X")) break;
      std::size_t len = 0;
      auto v = parseHexRun(t, 8, &len);
      if (!v) break;
      reg = static_cast<uint32_t>(*v);
      consume(t, ",");
    }
    ev.intrInfo = regs[0];
    ev.errorStatus = regs[1];
  }
}

// "GPU recovery action changed from 0x0 (None) to 0x2 (Node Reboot Required)"
void parseRecoveryAction(std::string_view msg, KernelEvent& ev) {
  constexpr std::string_view kLead = "recovery action changed from ";
  std::size_t pos = msg.find(kLead);
  if (pos == std::string_view::npos) return;
  std::string_view t = msg.substr(pos + kLead.size());
  RecoveryActionChange change;
  auto readOne = [&t](int& code, std::string& label) {
    if (!consume(t, "0x") && !consume(t, "0X")) return false;
    std::size_t len = 0;
    auto v = parseHexRun(t, 8, &len);
    if (!v) return false;
    code = static_cast<int>(*v & 0xffU);
    skipSpaces(t);
    if (consume(t, "(")) {
      std::size_t close = t.find(')');
      if (close == std::string_view::npos) return false;
      label = std::string(t.substr(0, close));
      t.remove_prefix(close + 1);
    }
    return true;
  };
  if (!readOne(change.from, change.fromLabel)) return;
  skipSpaces(t);
  if (!consume(t, "to")) return;
  skipSpaces(t);
  if (!readOne(change.to, change.toLabel)) return;
  ev.recovery = std::move(change);
}

Status malformed(std::string_view what) { return Status::Error("malformed NVIDIA kernel line: " + std::string(what)); }

// "(PCI:0000:3b:00): 79, rest" after "Xid " / "SXid "; on success t is left at "rest".
Status parseCodedLine(std::string_view& t, KernelEvent& ev, std::string_view what) {
  const std::string w(what);
  skipSpaces(t);
  if (!consume(t, "(")) return malformed(w + ": missing '('");
  auto id = consumePciAddress(t);
  if (!id) return malformed(w + ": bad PCI address");
  ev.pciBusId = std::move(*id);
  if (!consume(t, ")")) return malformed(w + ": missing ')'");
  if (!consume(t, ":")) return malformed(w + ": missing ':' after address");
  skipSpaces(t);
  auto code = parseDecimal(t, 6);
  if (!code) return malformed(w + ": missing number");
  if (!t.empty() && t.front() != ',' && !isSpace(t.front())) return malformed(w + ": bad number");
  ev.code = static_cast<int>(*code);
  consume(t, ",");
  skipSpaces(t);
  return Status::Ok();
}

Result<std::optional<KernelEvent>> parseXid(std::string_view rest, KernelEvent& ev) {
  Status st = parseCodedLine(rest, ev, "Xid");
  if (!st.ok()) return st;
  ev.kind = KernelEventKind::kXid;
  parsePidAndName(rest, ev);
  ev.message = std::string(trimRight(rest));
  if (isNvLinkXid(ev.code)) {
    parseLinkDetails(ev.message, ev, ev.code >= 144 && ev.code <= 150);
  }
  if (ev.code == 154) parseRecoveryAction(ev.message, ev);
  return std::optional<KernelEvent>(std::move(ev));
}

Result<std::optional<KernelEvent>> fellOffTheBus(std::string pciBusId, std::string_view text, KernelEvent& ev) {
  ev.kind = KernelEventKind::kXid;
  ev.code = 79;
  ev.inferred = true;
  ev.pciBusId = std::move(pciBusId);
  ev.message = std::string(trimRight(text));
  return std::optional<KernelEvent>(std::move(ev));
}

constexpr std::string_view kFellOff = "fallen off the bus";

// Everything after "NVRM: " that is not "Xid".
Result<std::optional<KernelEvent>> parseNvrmOther(std::string_view body, KernelEvent& ev) {
  std::string_view t = body;
  if (consume(t, "GPU at ")) {
    auto id = consumePciAddress(t);
    if (!id) return malformed("GPU at: bad PCI address");
    if (consume(t, ":")) {
      skipSpaces(t);
      if (startsWith(t, "GPU-")) {
        std::size_t n = 4;
        while (n < t.size() && (isHex(t[n]) || t[n] == '-')) ++n;
        if (n < 12 || (n < t.size() && !isSpace(t[n]) && t[n] != '\r' && t[n] != '\n')) {
          return malformed("GPU at: bad UUID");
        }
        ev.kind = KernelEventKind::kGpuUuid;
        ev.pciBusId = std::move(*id);
        ev.uuid = std::string(t.substr(0, n));
        return std::optional<KernelEvent>(std::move(ev));
      }
    }
    if (t.find(kFellOff) != std::string_view::npos) return fellOffTheBus(std::move(*id), body, ev);
    return std::optional<KernelEvent>();
  }
  if (body.find(kFellOff) == std::string_view::npos) return std::optional<KernelEvent>();
  // "GPU 0000:3b:00.0: GPU has fallen off the bus." and free-form variants.
  auto id = findPciAddress(body);
  return fellOffTheBus(id ? std::move(*id) : std::string(), body, ev);
}

}  // namespace

bool mightBeNvidiaEvent(std::string_view line) {
  return line.find("NVRM") != std::string_view::npos || line.find("SXid") != std::string_view::npos;
}

Result<std::optional<KernelEvent>> parseKernelLine(std::string_view line) {
  if (!mightBeNvidiaEvent(line)) return std::optional<KernelEvent>();
  line = trimRight(line);

  const std::size_t nvrm = line.find("NVRM: ");
  const std::size_t sxid = line.find("SXid");
  KernelEvent ev;

  if (nvrm != std::string_view::npos && (sxid == std::string_view::npos || nvrm < sxid)) {
    std::string_view body = line.substr(nvrm + 6);
    skipSpaces(body);
    std::string_view afterXid = body;
    const bool isXid =
        consume(afterXid, "Xid") && !afterXid.empty() && (isSpace(afterXid.front()) || afterXid.front() == '(');
    if (!isXid && body.find("GPU") == std::string_view::npos) return std::optional<KernelEvent>();
    ev.raw = std::string(line);
    parseHeader(line.substr(0, nvrm), ev);
    if (isXid) return parseXid(afterXid, ev);
    return parseNvrmOther(body, ev);
  }

  if (sxid != std::string_view::npos) {
    std::string_view afterSxid = line.substr(sxid + 4);
    if (afterSxid.empty() || (!isSpace(afterSxid.front()) && afterSxid.front() != '(')) {
      return std::optional<KernelEvent>();
    }
    ev.raw = std::string(line);
    // "nvidia-nvswitch0: SXid": the device is the token before the colon.
    std::string_view before = line.substr(0, sxid);
    while (!before.empty() && isSpace(before.back())) before.remove_suffix(1);
    std::size_t headerEnd = before.size();
    if (!before.empty() && before.back() == ':') {
      std::size_t end = before.size() - 1;
      std::size_t start = end;
      while (start > 0 && !isSpace(before[start - 1]) && before[start - 1] != ']' && before[start - 1] != ';') {
        --start;
      }
      ev.device = std::string(before.substr(start, end - start));
      headerEnd = start;
    }
    parseHeader(before.substr(0, headerEnd), ev);
    Status st = parseCodedLine(afterSxid, ev, "SXid");
    if (!st.ok()) return st;
    ev.kind = KernelEventKind::kSXid;
    ev.message = std::string(trimRight(afterSxid));
    parseLinkDetails(ev.message, ev, false);
    return std::optional<KernelEvent>(std::move(ev));
  }
  return std::optional<KernelEvent>();
}

std::optional<std::string> normalizePciBusId(std::string_view text) {
  std::string_view t = text;
  auto id = consumePciAddress(t);
  if (!id || !t.empty()) return std::nullopt;
  return id;
}

std::string_view toString(KernelEventKind kind) {
  switch (kind) {
    case KernelEventKind::kXid:
      return "xid";
    case KernelEventKind::kSXid:
      return "sxid";
    case KernelEventKind::kGpuUuid:
      return "gpu-uuid";
  }
  return "xid";
}

std::string_view toString(KernelLevel level) {
  switch (level) {
    case KernelLevel::kEmergency:
      return "emerg";
    case KernelLevel::kAlert:
      return "alert";
    case KernelLevel::kCritical:
      return "crit";
    case KernelLevel::kError:
      return "err";
    case KernelLevel::kWarning:
      return "warning";
    case KernelLevel::kNotice:
      return "notice";
    case KernelLevel::kInfo:
      return "info";
    case KernelLevel::kDebug:
      return "debug";
  }
  return "info";
}

}  // namespace gw::events
