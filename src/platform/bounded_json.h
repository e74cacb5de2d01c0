// Parsing JSON that came from outside the process (a socket, a file, another program's output)
// without letting its size decide what the parse costs: nesting and the number of values are
// counted before nlohmann's parser sees the text. Every JSON the product reads from outside itself
// (sockets, files, databases, other programs) goes through here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "common/result.h"

namespace gw::platform {

inline constexpr int kJsonMaxDepth = 64;
// JSON values (objects, arrays, keys and scalars) in one document: bounds the parsed tree, which
// takes several times the text's bytes (`[{},{},…]` 16 MiB long would be ~0.4 GB of objects).
inline constexpr std::size_t kJsonMaxValues = 1 << 20;

// Parses one JSON document, refusing nesting deeper than max_depth and more than max_values
// values; the error says which bound was broken. Never throws.
Result<nlohmann::json> parseBounded(std::string_view text, int max_depth = kJsonMaxDepth,
                                    std::size_t max_values = kJsonMaxValues);

// The same with the default bounds, giving `fallback` for text that is refused (a column of a
// database of ours that a damaged disk or another writer left unreadable).
inline nlohmann::json parseBoundedOr(std::string_view text, nlohmann::json fallback) {
  auto j = parseBounded(text);
  return j ? std::move(j).value() : std::move(fallback);
}

// The value as a T if it is a whole number in T's range; nullopt for a fraction, a string, a
// negative number for an unsigned T or one past T's range, where nlohmann's get<T>() would cast
// (1e300 to an int is undefined behaviour, 2^32+1 becomes 1).
template <class T>
std::optional<T> asWholeNumber(const nlohmann::json& v) {
  // nlohmann's is_number_integer() holds for unsigned values too: 2^64-1 read as int64 is -1.
  if (v.is_number_unsigned()) {
    if (std::in_range<T>(v.get<std::uint64_t>())) return static_cast<T>(v.get<std::uint64_t>());
  } else if (v.is_number_integer() && std::in_range<T>(v.get<std::int64_t>())) {
    return static_cast<T>(v.get<std::int64_t>());
  }
  return std::nullopt;
}

// The same at `key` of a parsed outside document, throwing std::runtime_error ("\"KEY\" is not a
// whole number in range") for anything else; a missing key throws nlohmann's out_of_range.
template <class T>
T wholeNumber(const nlohmann::json& j, const char* key) {
  if (auto n = asWholeNumber<T>(j.at(key))) return *n;
  throw std::runtime_error(std::string("\"") + key + "\" is not a whole number in range");
}

// The same, `missing` when the key is not there.
template <class T>
T wholeNumberOr(const nlohmann::json& j, const char* key, T missing) {
  return j.contains(key) ? wholeNumber<T>(j, key) : missing;
}

}  // namespace gw::platform
