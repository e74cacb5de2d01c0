// libFuzzer target for platform::parseBounded (src/platform/bounded_json.h), the one parser every
// JSON from outside goes through (control socket, remote agents, diag reports, the data folder's
// files). The first two bytes choose the bounds (depth 0..15, values 0..255), the rest is the text.
// Properties:
//  - it never throws and a refusal always says why; a NUL byte is always refused;
//  - what it accepts is what nlohmann accepts, equal value for value;
//  - for text nlohmann parses, it accepts exactly when the text's nesting and value count
//    (objects, arrays, keys and scalars, as nlohmann's SAX parser meets them) are within the
//    bounds: no document past them gets through, and none within them is refused.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <nlohmann/json.hpp>

#include "platform/bounded_json.h"

namespace {

using json = nlohmann::json;

// Counts what the text holds as nlohmann's own SAX parser reads it: every object, array, key and
// scalar event, and the deepest nesting (a key given twice is two values here, as in the text).
struct Measure : nlohmann::json_sax<json> {
  int depth = 0, deepest = 0;
  std::size_t values = 0;
  bool open() {
    ++values;
    deepest = std::max(deepest, ++depth);
    return true;
  }
  bool close() {
    --depth;
    return true;
  }
  bool scalar() {
    ++values;
    return true;
  }
  bool null() override { return scalar(); }
  bool boolean(bool) override { return scalar(); }
  bool number_integer(number_integer_t) override { return scalar(); }
  bool number_unsigned(number_unsigned_t) override { return scalar(); }
  bool number_float(number_float_t, const string_t&) override { return scalar(); }
  bool string(string_t&) override { return scalar(); }
  bool binary(binary_t&) override { return scalar(); }
  bool start_object(std::size_t) override { return open(); }
  bool key(string_t&) override { return scalar(); }
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override { return open(); }
  bool end_array() override { return close(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const int max_depth = data[0] % 16;
  const std::size_t max_values = data[1];
  const std::string_view text(reinterpret_cast<const char*>(data + 2), size - 2);

  auto bounded = gw::platform::parseBounded(text, max_depth, max_values);
  if (!bounded && bounded.error().empty()) __builtin_trap();

  if (text.find('\0') != std::string_view::npos) {
    if (bounded) __builtin_trap();  // nlohmann would stop at the NUL and take what is before it
    return 0;
  }
  json plain = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (plain.is_discarded()) {
    if (bounded) __builtin_trap();  // accepted what is not JSON
    return 0;
  }
  Measure m;
  if (!json::sax_parse(text, &m)) __builtin_trap();  // the DOM parser took it, so must SAX
  const bool within = m.deepest <= max_depth && m.values <= max_values;
  if (bounded) {
    if (!within) __builtin_trap();  // let a document past its bounds through
    if (*bounded != plain) __builtin_trap();
  } else if (within) {
    __builtin_trap();  // refused a document within its bounds
  }
  return 0;
}
