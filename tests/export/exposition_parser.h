// A strict, independent reader of the exposition formats for the tests: it parses every line
// (comments, samples with escaped label values) and checks the structure rules of text format
// 0.0.4 and OpenMetrics 1.0 that a scraper relies on. It shares no code with the exporter.
#pragma once

#include <cerrno>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gw::exporter::testing {

struct Sample {
  std::string name;
  std::vector<std::pair<std::string, std::string>> labels;  // unescaped values, in order
  std::string value;                                        // as written
  std::string label(std::string_view k) const {
    for (const auto& [n, v] : labels)
      if (n == k) return v;
    return "<absent>";
  }
};

inline bool isNameStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':'; }
inline bool isNameChar(char c) { return isNameStart(c) || (c >= '0' && c <= '9'); }

inline bool validMetricName(std::string_view s) {
  if (s.empty() || !isNameStart(s[0])) return false;
  for (char c : s)
    if (!isNameChar(c)) return false;
  return true;
}
inline bool validLabelName(std::string_view s) {
  if (s.empty() || !isNameStart(s[0]) || s[0] == ':') return false;
  for (char c : s)
    if (!isNameChar(c) || c == ':') return false;
  return true;
}

inline bool validValue(std::string_view v) {
  if (v == "+Inf" || v == "-Inf" || v == "NaN") return true;
  if (v.empty()) return false;
  std::string s(v);
  char* end = nullptr;
  errno = 0;
  std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) return false;
  for (char c : s)  // no "inf", "nan", hex floats sneaking through strtod
    if (!((c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-')) return false;
  return true;
}

// Parses one sample line; returns an error message or "".
inline std::string parseSample(std::string_view line, Sample& s) {
  std::size_t i = 0;
  while (i < line.size() && isNameChar(line[i])) ++i;
  s.name = std::string(line.substr(0, i));
  if (!validMetricName(s.name)) return "bad metric name";
  s.labels.clear();
  if (i < line.size() && line[i] == '{') {
    ++i;
    while (true) {
      if (i < line.size() && line[i] == '}') {
        ++i;
        break;
      }
      std::size_t n0 = i;
      while (i < line.size() && isNameChar(line[i])) ++i;
      std::string name(line.substr(n0, i - n0));
      if (!validLabelName(name)) return "bad label name '" + name + "'";
      if (i + 1 >= line.size() || line[i] != '=' || line[i + 1] != '"') return "expected =\" after label " + name;
      i += 2;
      std::string value;
      while (true) {
        if (i >= line.size()) return "unterminated label value";
        char c = line[i++];
        if (c == '"') break;
        if (c == '\\') {
          if (i >= line.size()) return "dangling backslash";
          char e = line[i++];
          if (e == 'n') {
            value += '\n';
          } else if (e == '\\' || e == '"') {
            value += e;
          } else {
            return std::string("bad escape \\") + e;
          }
        } else {
          value += c;
        }
      }
      for (const auto& [k, v] : s.labels)
        if (k == name) return "duplicate label " + name;
      s.labels.emplace_back(std::move(name), std::move(value));
      if (i < line.size() && line[i] == ',') {
        ++i;
        continue;
      }
      if (i < line.size() && line[i] == '}') {
        ++i;
        break;
      }
      return "expected , or } in label set";
    }
  }
  if (i >= line.size() || line[i] != ' ') return "expected one space before the value";
  ++i;
  std::string_view rest = line.substr(i);
  const std::size_t sp = rest.find(' ');
  s.value = std::string(rest.substr(0, sp));
  if (!validValue(s.value)) return "bad value '" + s.value + "'";
  if (sp != std::string_view::npos) return "unexpected timestamp or trailing text";
  return "";
}

struct Parsed {
  std::vector<std::string> errors;
  std::vector<Sample> samples;
  std::map<std::string, std::string> type;  // family -> TYPE word
  std::map<std::string, std::string> help;  // family -> HELP text (escaped, as written)
  std::map<std::string, std::string> unit;  // family -> UNIT (OpenMetrics)
  std::vector<std::string> family_order;
};

// Parses `text` and checks: lines end with \n, no blank lines, HELP/TYPE/UNIT at most once per
// family and before its samples, every family contiguous (never reopened), sample names belong to
// the current family (OpenMetrics: counter samples end in _total, info samples in _info), valid
// names, labels and values, no duplicate series, and (OpenMetrics) "# EOF" as the last line.
inline Parsed parseExposition(std::string_view text, bool openmetrics) {
  Parsed p;
  auto err = [&](std::size_t lineno, const std::string& what, std::string_view line) {
    p.errors.push_back("line " + std::to_string(lineno) + ": " + what + ": " + std::string(line));
  };
  if (text.empty() || text.back() != '\n') p.errors.push_back("output does not end with a newline");
  std::set<std::string> closed;  // families whose block has ended
  std::set<std::string> series;
  std::string current;  // family of the current block
  bool current_has_samples = false;
  bool eof = false;
  std::size_t lineno = 0;
  auto open = [&](const std::string& fam, std::size_t n, std::string_view line) {
    if (fam == current) return;
    if (!current.empty()) closed.insert(current);
    if (closed.count(fam)) err(n, "family " + fam + " reopened (not contiguous)", line);
    current = fam;
    current_has_samples = false;
    p.family_order.push_back(fam);
  };
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(pos, nl - pos);
    pos = nl + 1;
    ++lineno;
    if (eof) {
      err(lineno, "content after # EOF", line);
      continue;
    }
    if (line.empty()) {
      err(lineno, "blank line", line);
      continue;
    }
    if (line[0] == '#') {
      if (line == "# EOF") {
        if (!openmetrics) err(lineno, "# EOF in text format 0.0.4", line);
        eof = true;
        continue;
      }
      std::string_view rest = line.substr(1);
      if (rest.substr(0, 1) != " ") {
        err(lineno, "comment without space", line);
        continue;
      }
      rest.remove_prefix(1);
      const std::size_t sp = rest.find(' ');
      const std::string_view kw = rest.substr(0, sp);
      if (kw != "HELP" && kw != "TYPE" && kw != "UNIT") {
        if (openmetrics) err(lineno, "unknown descriptor", line);
        continue;
      }
      if (sp == std::string_view::npos) {
        err(lineno, "descriptor without a name", line);
        continue;
      }
      rest.remove_prefix(sp + 1);
      const std::size_t sp2 = rest.find(' ');
      const std::string fam(rest.substr(0, sp2));
      const std::string arg(sp2 == std::string_view::npos ? "" : rest.substr(sp2 + 1));
      if (!validMetricName(fam)) err(lineno, "bad family name", line);
      open(fam, lineno, line);
      if (current_has_samples) err(lineno, "descriptor after samples", line);
      auto& slot = kw == "HELP" ? p.help : kw == "TYPE" ? p.type : p.unit;
      if (slot.count(fam)) err(lineno, std::string(kw) + " twice for " + fam, line);
      slot[fam] = arg;
      if (kw == "TYPE") {
        static const std::set<std::string> text_types = {"counter", "gauge", "untyped", "summary", "histogram"};
        static const std::set<std::string> om_types = {"counter",   "gauge",          "unknown",  "summary",
                                                       "histogram", "gaugehistogram", "stateset", "info"};
        if (!(openmetrics ? om_types : text_types).count(arg)) err(lineno, "bad type " + arg, line);
      }
      if (kw == "UNIT") {
        if (!openmetrics) err(lineno, "# UNIT in text format 0.0.4", line);
        if (arg.empty() || fam.size() <= arg.size() || fam.substr(fam.size() - arg.size() - 1) != "_" + arg)
          err(lineno, "family name does not end with its unit", line);
      }
      continue;
    }
    Sample s;
    if (auto e = parseSample(line, s); !e.empty()) {
      err(lineno, e, line);
      continue;
    }
    // Which family does this sample belong to?
    std::string fam = s.name;
    if (openmetrics) {
      auto typed = [&](const std::string& f, const char* t) { return p.type.count(f) && p.type[f] == t; };
      if (s.name.size() > 6 && s.name.substr(s.name.size() - 6) == "_total" &&
          typed(s.name.substr(0, s.name.size() - 6), "counter")) {
        fam = s.name.substr(0, s.name.size() - 6);
      } else if (s.name.size() > 5 && s.name.substr(s.name.size() - 5) == "_info" &&
                 typed(s.name.substr(0, s.name.size() - 5), "info")) {
        fam = s.name.substr(0, s.name.size() - 5);
      }
      if (typed(fam, "counter") && fam == s.name) err(lineno, "counter sample without _total", line);
      if (typed(fam, "info") && fam == s.name) err(lineno, "info sample without _info", line);
    }
    open(fam, lineno, line);
    current_has_samples = true;
    std::string key = s.name + "{";
    for (const auto& [k, v] : s.labels) key += k + "=" + v + "\x1f";
    if (!series.insert(key).second) err(lineno, "duplicate series", line);
    p.samples.push_back(std::move(s));
  }
  if (openmetrics && !eof) p.errors.push_back("OpenMetrics output without # EOF");
  return p;
}

inline std::string joinErrors(const std::vector<std::string>& errors) {
  std::string s;
  for (std::size_t i = 0; i < errors.size() && i < 20; ++i) s += errors[i] + "\n";
  return s;
}

}  // namespace gw::exporter::testing
