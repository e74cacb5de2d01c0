// platform::parseBounded: what both ends of the control socket (and every JSON reader) parse with. Depth, number of
// values and malformed text are refused with a sentence, never a crash or an exception. And
// sendAll, what both ends write with.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include "node/control_protocol.h"

namespace gw::test {
namespace {

using platform::parseBounded;

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
  // Each number and literal is one value, whatever its characters; what is inside a string is not.
  const std::string kinds = R"({"k" : [-1.5e+10, true,null ,"x, y [1]"]})";  // 7 values
  EXPECT_TRUE(parseBounded(kinds, 64, 7));
  auto k = parseBounded(kinds, 64, 6);
  ASSERT_FALSE(k);
  EXPECT_EQ(k.error(), "JSON with more than 6 values");
  for (const char* bad : {"", "healthy", "{\"ok\":tru}", "{} {}", "{\"a\":\"\\ud800\"}", "\"\xff\""}) {
    auto b = parseBounded(bad);
    ASSERT_FALSE(b) << bad;
    EXPECT_EQ(b.error().rfind("not JSON", 0), 0u) << b.error();
  }
}

// nlohmann's parser stops at a NUL byte as if the input ended there: a request followed by a NUL
// and anything would be the request. Found by tests/fuzz/json_fuzz.cpp.
TEST(ControlProtocol, ParseBoundedRefusesANulByteAnywhere) {
  using namespace std::string_literals;
  ASSERT_TRUE(nlohmann::json::parse("{\"op\":\"x\"}\0}}}garbage"s, nullptr, false).is_object());
  for (const std::string& text : {"{\"op\":\"x\"}\0}}}garbage"s, "\0"s, "{\"op\":\"x\0\"}"s, "[1,\0 2]"s}) {
    auto r = parseBounded(text);
    ASSERT_FALSE(r) << text.size();
    EXPECT_EQ(r.error(), "not JSON: a NUL byte at byte " + std::to_string(text.find('\0') + 1));
  }
  EXPECT_TRUE(parseBounded(R"({"op":"x\u0000"})"));  // an escaped NUL inside a string is JSON
}

// The largest document the bounds let through: an array of kMaxValues - 1 objects. nlohmann's
// parser with a callback took time quadratic in such an array (each object's end walked its parent:
// half a million empty objects, 1.5 MB of request, were minutes of the agent's CPU); a parse of the
// whole million is linear now and ends well inside the test's timeout.
TEST(ControlProtocol, AnArrayOfObjectsAtTheValueBoundParses) {
  constexpr std::size_t kObjects = node::control::kMaxValues - 1;  // and the array
  EXPECT_EQ(node::control::kMaxValues, std::size_t{1} << 20);
  std::string text = "[{}";
  text.reserve(3 * kObjects + 8);
  for (std::size_t i = 1; i < kObjects; ++i) text += ",{}";
  auto r = parseBounded(text + "]");
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r->size(), kObjects);
  auto over = parseBounded(text + ",{}]");
  ASSERT_FALSE(over);
  EXPECT_EQ(over.error(), "JSON with more than 1048576 values");
}

// A reply larger than the socket's buffer: the sender waits for room (the reader catching up)
// rather than giving up at the first full buffer.
TEST(ControlProtocol, SendAllWaitsForRoomWhileTheReaderCatchesUp) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  ASSERT_EQ(::fcntl(sv[0], F_SETFL, ::fcntl(sv[0], F_GETFL) | O_NONBLOCK), 0);
  const std::string data(8 << 20, 'x');
  std::size_t got = 0;
  std::thread reader([&] {
    char buf[65536];
    ssize_t n;
    while ((n = ::read(sv[1], buf, sizeof buf)) > 0) got += static_cast<std::size_t>(n);
  });
  const std::string why =
      node::control::sendAll(sv[0], data, std::chrono::steady_clock::now() + std::chrono::seconds(30));
  ::close(sv[0]);
  reader.join();
  ::close(sv[1]);
  EXPECT_EQ(why, "");
  EXPECT_EQ(got, data.size());
}

}  // namespace
}  // namespace gw::test
