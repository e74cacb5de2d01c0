// gzip for /metrics: round trip through zlib, and Accept-Encoding parsing.
#include <gtest/gtest.h>
#include <zlib.h>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../support/gunzip.h"
#include "export/export_fixture.h"
#include "export/gzip.h"
#include "export/header_tokens.h"
#include "export/prometheus.h"

namespace gw::exporter {
namespace {

using testsupport::gunzip;

TEST(Gzip, RoundTripOfAScrape) {
  using namespace gw::exporter::testing;
  std::string text;
  SelfMetrics s;
  s.now_ms = kNowMs;
  renderMetrics(text, makeNode(), makeAgent(), s, {}, Format::Text004);
  const std::string gz = gzipCompress(text);
  ASSERT_GE(gz.size(), 18u);
  EXPECT_EQ(static_cast<unsigned char>(gz[0]), 0x1f);  // gzip magic
  EXPECT_EQ(static_cast<unsigned char>(gz[1]), 0x8b);
  EXPECT_LT(gz.size() * 5, text.size()) << "metrics text should compress well";
  EXPECT_EQ(gunzip(gz), text);
  // Every level, and the buffer-reusing overload.
  std::string buf = "garbage";
  for (int level : {0, 1, 6, 9}) {
    gzipCompress(text, buf, level);
    EXPECT_EQ(gunzip(buf), text) << level;
  }
}

TEST(Gzip, EmptyAndBinaryInput) {
  EXPECT_EQ(gunzip(gzipCompress("")), "");
  std::string bin;
  for (int i = 0; i < 100000; ++i) bin += static_cast<char>((i * 7919) & 0xff);
  EXPECT_EQ(gunzip(gzipCompress(bin)), bin);
}

// A cached page compressed once plus a per-scrape tail: one valid gzip member whose CRC and size
// zlib checks, equal to the two texts joined, at every level and for empty halves.
TEST(Gzip, PrefixPlusSuffixIsOneMember) {
  using namespace gw::exporter::testing;
  std::string page, tail;
  SelfMetrics s;
  s.now_ms = kNowMs;
  s.scrapes = 41;
  renderSampledMetrics(page, makeNode(), makeAgent(), {}, Format::OpenMetrics);
  renderScrapeMetrics(tail, makeNode(), makeAgent(), s, {}, Format::OpenMetrics);
  std::string bin;
  for (int i = 0; i < 70000; ++i) bin += static_cast<char>((i * 7919) & 0xff);
  const std::pair<std::string, std::string> cases[] = {{page, tail}, {"", tail},  {page, ""},
                                                       {"", ""},     {bin, page}, {page, bin}};
  std::string out = "garbage";
  for (const auto& [a, b] : cases)
    for (int level : {0, 1, 6, 9}) {
      GzipPrefix p;
      gzipPrefix(a, p, level);
      EXPECT_EQ(p.size, a.size());
      gzipWithPrefix(p, b, out, level);
      ASSERT_GE(out.size(), 18u);
      EXPECT_EQ(static_cast<unsigned char>(out[0]), 0x1f);
      EXPECT_EQ(gunzip(out), a + b) << "level " << level << " prefix " << a.size() << " suffix " << b.size();
    }
  // The same prefix serves many suffixes.
  GzipPrefix p;
  gzipPrefix(page, p);
  for (std::uint64_t n : {1u, 2u, 1000u}) {
    s.scrapes = n;
    tail.clear();
    renderScrapeMetrics(tail, makeNode(), makeAgent(), s, {}, Format::OpenMetrics);
    gzipWithPrefix(p, tail, out);
    EXPECT_EQ(gunzip(out), page + tail);
    EXPECT_LT(out.size() * 5, page.size() + tail.size());
  }
}

// The round-trip check above can fail: zlib verifies the trailer's CRC-32.
TEST(Gzip, CorruptTrailerIsRejectedByZlib) {
  GzipPrefix p;
  gzipPrefix("first half\n", p);
  std::string out;
  gzipWithPrefix(p, "second half\n", out);
  out[out.size() - 8] ^= 0x01;  // first byte of the CRC-32
  z_stream zs{};
  ASSERT_EQ(inflateInit2(&zs, 15 + 16), Z_OK);
  zs.next_in = reinterpret_cast<Bytef*>(out.data());
  zs.avail_in = static_cast<uInt>(out.size());
  char buf[256];
  zs.next_out = reinterpret_cast<Bytef*>(buf);
  zs.avail_out = sizeof buf;
  EXPECT_EQ(inflate(&zs, Z_FINISH), Z_DATA_ERROR);
  inflateEnd(&zs);
}

TEST(Gzip, AcceptEncoding) {
  EXPECT_TRUE(acceptsGzip("gzip"));                     // Prometheus
  EXPECT_TRUE(acceptsGzip("gzip, deflate, br, zstd"));  // browsers
  EXPECT_TRUE(acceptsGzip("GZIP"));
  EXPECT_TRUE(acceptsGzip("x-gzip"));
  EXPECT_TRUE(acceptsGzip("deflate, gzip;q=1.0, *;q=0.5"));
  EXPECT_TRUE(acceptsGzip("gzip;q=0.5"));
  EXPECT_TRUE(acceptsGzip("gzip; Q=0.001"));
  EXPECT_TRUE(acceptsGzip("*"));
  EXPECT_TRUE(acceptsGzip("identity, *;q=0.1"));
  EXPECT_FALSE(acceptsGzip(""));
  EXPECT_FALSE(acceptsGzip("identity"));
  EXPECT_FALSE(acceptsGzip("deflate, br"));
  EXPECT_FALSE(acceptsGzip("gzip;q=0"));
  EXPECT_FALSE(acceptsGzip("gzip;q=0.000"));
  EXPECT_FALSE(acceptsGzip("gzip;q=0, *"));  // explicit refusal wins over the wildcard
  EXPECT_FALSE(acceptsGzip("*;q=0"));
  EXPECT_FALSE(acceptsGzip("gzipper"));
}

// The one q-value reading (export/header_tokens.h) that Accept-Encoding, /metrics' Accept and the
// web routes' Accept all use: RFC 9110's grammar at its edges.
TEST(HeaderTokens, QValueGrammarAtItsEdges) {
  using detail::qvalue;
  EXPECT_EQ(qvalue("0"), 0.0);
  EXPECT_EQ(qvalue("1"), 1.0);
  EXPECT_EQ(qvalue("0.5"), 0.5);
  EXPECT_EQ(qvalue("0.001"), 0.001);
  EXPECT_EQ(qvalue("0.999"), 0.999);
  EXPECT_EQ(qvalue("1.000"), 1.0);
  EXPECT_EQ(qvalue("0."), 0.0);  // "0" "." 0*3DIGIT: no digits is allowed
  EXPECT_EQ(qvalue("1."), 1.0);
  for (const char* bad : {"", "0.1234", "1.001", "1.5", "2", "-0", ".5", "0,5", "x", "0.5x", "00", "01", " 1"})
    EXPECT_EQ(qvalue(bad), std::nullopt) << bad;
}

TEST(HeaderTokens, WeightIsOneWithoutAQAndAbsentWhenMalformed) {
  using detail::weightOf;
  EXPECT_EQ(weightOf(""), 1.0);
  EXPECT_EQ(weightOf("level=1"), 1.0);
  EXPECT_EQ(weightOf(" Q = 0.25 "), 0.25);
  EXPECT_EQ(weightOf("version=\"0.0.4\"; q=0.3"), 0.3);
  EXPECT_EQ(weightOf("q=1.5"), std::nullopt);
  EXPECT_EQ(weightOf("q=0.5;q=x"), std::nullopt);  // any malformed q spoils the element
}

// RFC 9110 lets a parameter's value be a quoted-string (version="1.0.0"): the quotes are not part
// of the value, and a lone quote is no quoted-string at all.
TEST(HeaderTokens, AQuotedParameterValueLosesItsQuotes) {
  std::vector<std::pair<std::string, std::string>> got;
  detail::forEachParam(
      " charset=\"utf-8\" ; version = \"1.0.0\";x=\"\";y=\"",
      [&](std::string_view name, std::string_view value) { got.emplace_back(std::string(name), std::string(value)); });
  const std::vector<std::pair<std::string, std::string>> want = {
      {"charset", "utf-8"}, {"version", "1.0.0"}, {"x", ""}, {"y", "\""}};
  EXPECT_EQ(got, want);
}

TEST(Gzip, AMalformedQRefusesGzip) {
  EXPECT_FALSE(acceptsGzip("gzip;q=1.5"));  // was read as 1: not a qvalue, so a refusal
  EXPECT_FALSE(acceptsGzip("gzip;q=x, *"));
  EXPECT_TRUE(acceptsGzip("gzip;q=0.001"));
  EXPECT_TRUE(acceptsGzip("br, gzip ; q=1.000"));
}

}  // namespace
}  // namespace gw::exporter
