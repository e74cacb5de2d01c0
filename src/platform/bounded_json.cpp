#include "platform/bounded_json.h"

namespace gw::platform {

using json = nlohmann::json;

Result<json> parseBounded(std::string_view text, int max_depth, std::size_t max_values) {
  // One pass over the text counts nesting and values outside strings, so that the parser never
  // sees a document deeper or larger than the bounds. It counts what the parser would build: each
  // object and array, each string (keys too) and each number or literal (a run of the characters
  // they are made of). Where the text stops being JSON the parser stops too, and what it built
  // up to there is a prefix of what was counted. (nlohmann's parser with a callback, which could
  // count as it goes, is quadratic in an array of objects: each object's end walks its parent.)
  const auto scalarChar = [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-' || c == '+' ||
           c == '.';
  };
  int depth = 0;
  std::size_t values = 0;
  bool in_string = false, escaped = false, in_scalar = false;
  for (std::size_t at = 0; at < text.size(); ++at) {
    const char c = text[at];
    // nlohmann's parser takes a NUL byte for the end of the input: `{"op":"x"}\0anything` would
    // parse as the part before it. JSON has no NUL outside an escape, so it is refused here.
    if (c == '\0') return Status::Error("not JSON: a NUL byte at byte " + std::to_string(at + 1));
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    const bool scalar = scalarChar(c);
    const bool starts = c == '"' || c == '[' || c == '{' || (scalar && !in_scalar);
    in_scalar = scalar;
    if (starts && ++values > max_values)
      return Status::Error("JSON with more than " + std::to_string(max_values) + " values");
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return Status::Error("JSON nested deeper than " + std::to_string(max_depth));
    } else if (c == ']' || c == '}') {
      if (--depth < 0) return Status::Error("not JSON: unbalanced '" + std::string(1, c) + "'");
    }
  }
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    return Status::Error(std::string("not JSON: ") + e.what());
  } catch (const std::exception& e) {  // std::bad_alloc
    return Status::Error(std::string("cannot parse JSON: ") + e.what());
  }
}

}  // namespace gw::platform
