// cli::printable: what of another machine's text may reach the terminal as it is.
#include "cli/printable.h"

#include <gtest/gtest.h>

#include <string>

#include "cli/json_read.h"

namespace gw::cli {
namespace {

// An agent's answer read for text output: an integer of another type or past int64 is the
// fallback, never a cast (2^64-1 is not -1, 1.5 not 1).
TEST(JsonRead, AnIntegerIsAWholeNumberInRangeOrTheFallback) {
  const auto j = nlohmann::json::parse(
      R"({"max": 9223372036854775807, "min": -9223372036854775808, "past": 9223372036854775808,
          "wrap": 18446744073709551615, "half": 1.5, "text": "7", "no": null})");
  EXPECT_EQ(jr::integer(j, "max"), INT64_MAX);
  EXPECT_EQ(jr::integer(j, "min"), INT64_MIN);
  for (const char* key : {"past", "wrap", "half", "text", "no", "missing"})
    EXPECT_EQ(jr::integer(j, key, -7), -7) << key;
  EXPECT_EQ(jr::integer(nlohmann::json::array({1}), "max", -7), -7);
}

TEST(Printable, ControlsAreShownNotObeyed) {
  EXPECT_EQ(printable("\x1b]0;pwned\x07H100\x1b[2J"), "\\x1b]0;pwned\\x07H100\\x1b[2J");
  EXPECT_EQ(printable(std::string("a\0b", 3)), "a\\x00b");
  EXPECT_EQ(printable("\x1f\x20\x7e\x7f"), "\\x1f ~\\x7f");  // the printable range's edges
  EXPECT_EQ(printable("a\tb\r\n"), "a\tb\\x0d\\x0a");
  EXPECT_EQ(printable("a\tb\r\n", true), "a\tb\\x0d\n");
}

TEST(Printable, Utf8StaysAndC1ControlsAndBrokenBytesAreEscaped) {
  EXPECT_EQ(printable("ünïcode 中 \xF0\x9F\x98\x80"), "ünïcode 中 \xF0\x9F\x98\x80");
  EXPECT_EQ(printable("\xC2\x9B"
                      "2J"),
            "\\u009b2J");                                                      // CSI as a C1 control
  EXPECT_EQ(printable("\xC2\x80\xC2\x9F\xC2\xA0"), "\\u0080\\u009f\xC2\xA0");  // C1's edges; U+00A0 is text
  EXPECT_EQ(printable("\x9B"
                      "2J"),
            "\\x9b2J");                                              // a lone 8-bit CSI
  EXPECT_EQ(printable("\xC0\x80"), "\\xc0\\x80");                    // overlong NUL
  EXPECT_EQ(printable("\xED\xA0\x80"), "\\xed\\xa0\\x80");           // a surrogate
  EXPECT_EQ(printable("\xF4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // past U+10FFFF
  EXPECT_EQ(printable("\xE4\xB8"), "\\xe4\\xb8");                    // cut short
  EXPECT_EQ(printable("\xFF"), "\\xff");
}

}  // namespace
}  // namespace gw::cli
