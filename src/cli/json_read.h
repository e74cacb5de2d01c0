// Reading a JSON document that came from another process (the agent's answer) without trusting
// its types: a key that is missing or of another type gives the fallback, never an exception
// (nlohmann's get<>() and value() throw type_error on a wrong type, which would end the CLI).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/printable.h"
#include "platform/bounded_json.h"
#include "platform/clock.h"

namespace gw::cli::jr {

using json = nlohmann::json;

inline const json* find(const json& j, const char* key) {
  if (!j.is_object()) return nullptr;
  auto it = j.find(key);
  return it == j.end() ? nullptr : &*it;
}

inline std::string str(const json& j, const char* key, const std::string& fallback = {}) {
  const json* v = find(j, key);
  return v && v->is_string() ? v->get_ref<const std::string&>() : fallback;
}

// A string, or a number written out (an id, an index): for text output, one line of shown text
// (a control character or a newline in it is escaped, see printable.h).
inline std::string text(const json& j, const char* key) {
  const json* v = find(j, key);
  if (!v) return {};
  if (v->is_string()) return printable(v->get_ref<const std::string&>());
  if (v->is_number()) return v->dump();
  return {};
}

inline std::int64_t integer(const json& j, const char* key, std::int64_t fallback = 0) {
  const json* v = find(j, key);
  return v ? platform::asWholeNumber<std::int64_t>(*v).value_or(fallback) : fallback;
}

// Any number (integer or not); missing or of another type: nullopt.
inline std::optional<double> number(const json& j, const char* key) {
  const json* v = find(j, key);
  if (!v || !v->is_number()) return std::nullopt;
  return v->get<double>();
}

inline bool boolean(const json& j, const char* key, bool fallback = false) {
  const json* v = find(j, key);
  return v && v->is_boolean() ? v->get<bool>() : fallback;
}

inline const json& array(const json& j, const char* key) {
  static const json empty = json::array();
  const json* v = find(j, key);
  return v && v->is_array() ? *v : empty;
}

inline const json& object(const json& j, const char* key) {
  static const json empty = json::object();
  const json* v = find(j, key);
  return v && v->is_object() ? *v : empty;
}

// A timestamp (ms since the epoch) from the answer as RFC 3339; "-" outside years 0001..9999.
inline std::string time(std::int64_t unix_ms) {
  if (unix_ms < -62135596800000 || unix_ms > 253402300799999) return "-";
  return platform::formatRfc3339(unix_ms);
}

// The document as text; bytes that are not UTF-8 are replaced rather than thrown on.
inline std::string dump(const json& j, int indent = 2) {
  return j.dump(indent, ' ', false, json::error_handler_t::replace);
}

}  // namespace gw::cli::jr
