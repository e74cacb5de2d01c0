// Parsing JSON that came from outside the process (a socket, a file, another program's output)
// without letting its size decide what the parse costs: nesting and the number of values are
// counted before nlohmann's parser sees the text. Every JSON the product reads from outside itself
// (sockets, files, databases, other programs) goes through here.
#pragma once

#include <cstddef>
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

}  // namespace gw::platform
