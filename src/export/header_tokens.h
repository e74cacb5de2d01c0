// Reading HTTP list headers (Accept, Accept-Encoding): the exporter negotiates both and the web
// routes read Accept, all with one spelling of "trim", "case-insensitive equal" and, above all,
// one reading of a q-value (three readers used to disagree on "q=1.5" and "q=0.12345").
#pragma once

#include <optional>
#include <string_view>

namespace gw::exporter::detail {

inline std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

inline bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

// RFC 9110's qvalue: "0" [ "." 0*3DIGIT ] or "1" [ "." 0*3("0") ]; nullopt for anything else
// ("1.5", "0.12345", "x", ""), which each caller treats as its own kind of refusal.
inline std::optional<double> qvalue(std::string_view v) {
  if (v.empty() || (v[0] != '0' && v[0] != '1')) return std::nullopt;
  const bool one = v[0] == '1';
  if (v.size() == 1) return one ? 1.0 : 0.0;
  if (v[1] != '.' || v.size() > 5) return std::nullopt;
  // In thousandths, divided once: "0.3" is then exactly the double 0.3.
  int thousandths = 0, digits = 0;
  for (char c : v.substr(2)) {
    if (c < '0' || c > '9' || (one && c != '0')) return std::nullopt;
    thousandths = thousandths * 10 + (c - '0');
    ++digits;
  }
  for (; digits < 3; ++digits) thousandths *= 10;
  return one ? 1.0 : thousandths / 1000.0;
}

// Calls fn(name, value) for each ';'-separated parameter of a list element ("q=0.5;version=1"),
// names and values trimmed and a quoted value unquoted.
template <typename Fn>
void forEachParam(std::string_view params, Fn&& fn) {
  while (!params.empty()) {
    const std::size_t semi = params.find(';');
    std::string_view p = params.substr(0, semi);
    params = semi == std::string_view::npos ? std::string_view{} : params.substr(semi + 1);
    const std::size_t eq = p.find('=');
    if (eq == std::string_view::npos) continue;
    std::string_view value = trim(p.substr(eq + 1));
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"') value = value.substr(1, value.size() - 2);
    fn(trim(p.substr(0, eq)), value);
  }
}

// The weight of one element's parameters: 1 without a q, nullopt when its q is malformed.
inline std::optional<double> weightOf(std::string_view params) {
  std::optional<double> q = 1.0;
  forEachParam(params, [&](std::string_view name, std::string_view value) {
    if (iequals(name, "q")) q = q ? qvalue(value) : q;
  });
  return q;
}

// Calls fn(token, params) for each ','-separated element of a list header, where params is the
// text after the element's first ';'. Empty elements ("a,,b") are skipped, as RFC 9110 allows.
template <typename Fn>
void forEachElement(std::string_view header, Fn&& fn) {
  while (!header.empty()) {
    const std::size_t comma = header.find(',');
    std::string_view elem = header.substr(0, comma);
    header = comma == std::string_view::npos ? std::string_view{} : header.substr(comma + 1);
    const std::size_t semi = elem.find(';');
    const std::string_view token = trim(elem.substr(0, semi));
    const std::string_view params = semi == std::string_view::npos ? std::string_view{} : elem.substr(semi + 1);
    if (!token.empty()) fn(token, params);
  }
}

}  // namespace gw::exporter::detail
