// node::control::parseBounded: what both ends of the control socket parse with. Depth, number of
// values and malformed text are refused with a sentence, never a crash or an exception.
#include <gtest/gtest.h>

#include "node/control_protocol.h"

namespace gw::test {
namespace {

using node::control::parseBounded;

TEST(ControlProtocol, ParseBoundedRefusesDeepNesting) {
  for (const char* open : {"[", "{\"a\":"}) {
    std::string deep;
    for (int i = 0; i < 100000; ++i) deep += open;
    const std::string close = open[0] == '[' ? "]" : "}";
    std::string text = deep;
    for (int i = 0; i < 100000; ++i) text += close;
    auto r = parseBounded(text);
    ASSERT_FALSE(r) << open;
    EXPECT_EQ(r.error(), "JSON nested deeper than 64");
    // Unclosed, too.
    EXPECT_FALSE(parseBounded(deep));
  }
  // 64 levels parse; 65 do not.
  EXPECT_TRUE(parseBounded(std::string(64, '[') + std::string(64, ']')));
  EXPECT_FALSE(parseBounded(std::string(65, '[') + std::string(65, ']')));
  EXPECT_TRUE(parseBounded(std::string(3, '[') + std::string(3, ']'), 3));
  EXPECT_FALSE(parseBounded(std::string(4, '[') + std::string(4, ']'), 3));
  // Brackets inside strings (escaped quotes too) are not nesting.
  auto s = parseBounded(R"({"a":"[[[[[[[[[[\"[[[[[[[[[","b":[1]})", 2);
  ASSERT_TRUE(s) << s.error();
  EXPECT_EQ((*s)["b"][0], 1);
  // Closing before opening cannot hide depth from the count.
  EXPECT_FALSE(parseBounded("]]]]" + std::string(66, '[') + std::string(66, ']')));
}

TEST(ControlProtocol, ParseBoundedRefusesTooManyValuesAndMalformedText) {
  std::string many = "[0";
  for (int i = 0; i < 99; ++i) many += ",0";
  many += "]";  // 101 values with the array
  EXPECT_TRUE(parseBounded(many, 64, 101));
  auto r = parseBounded(many, 64, 100);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), "JSON with more than 100 values");
  EXPECT_FALSE(parseBounded(R"({"a":1,"b":2})", 64, 4));  // keys count
  EXPECT_TRUE(parseBounded(R"({"a":1,"b":2})", 64, 5));
  for (const char* bad : {"", "healthy", "{\"ok\":tru}", "{} {}", "{\"a\":\"\\ud800\"}", "\"\xff\""}) {
    auto b = parseBounded(bad);
    ASSERT_FALSE(b) << bad;
    EXPECT_EQ(b.error().rfind("not JSON", 0), 0u) << b.error();
  }
}

}  // namespace
}  // namespace gw::test
