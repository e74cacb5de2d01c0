// Properties of the chunk codec (chunk_codec.h), seeded and deterministic: every delta-of-delta
// bucket edge and one step either side of it, the 64-bit escape up to the int64 extremes, value
// patterns that must come back bit for bit, a chunk built by hand from the table in docs/store.md,
// and what decoding does with a chunk truncated at every length or with any single bit flipped.
// The committed goldens (tests/golden/) pin the bytes; these tests pin the behaviour around them.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "store/bit_stream.h"
#include "store/chunk_codec.h"

namespace gw::store {
namespace {

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

struct Row {
  int64_t ts;
  std::vector<double> values;
};

uint64_t bits(double v) { return std::bit_cast<uint64_t>(v); }
double fromBits(uint64_t b) { return std::bit_cast<double>(b); }

std::vector<uint8_t> encode(int columns, const std::vector<Row>& rows) {
  ChunkEncoder enc(columns);
  for (const Row& r : rows) EXPECT_TRUE(enc.append(r.ts, r.values)) << "ts " << r.ts;
  std::vector<uint8_t> blob;
  enc.encodeTo(blob);
  return blob;
}

// Everything a reader gives, the samples before an error included (the store keeps those).
struct Decoded {
  bool opened = false;
  bool ok = false;
  uint32_t header_count = 0;
  int columns = 0;
  std::vector<Row> rows;
};

Decoded decodeAll(std::span<const uint8_t> blob) {
  Decoded d;
  auto reader = ChunkReader::open(blob);
  if (!reader) return d;
  d.opened = true;
  d.header_count = reader->count();
  d.columns = reader->columns();
  double v[kMaxChunkColumns];
  int64_t ts = 0;
  while (reader->next(ts, v)) d.rows.push_back({ts, std::vector<double>(v, v + d.columns)});
  d.ok = reader->status().ok();
  return d;
}

bool sameRow(const Row& a, const Row& b) {
  if (a.ts != b.ts || a.values.size() != b.values.size()) return false;
  for (size_t c = 0; c < a.values.size(); ++c)
    if (bits(a.values[c]) != bits(b.values[c])) return false;
  return true;
}

void expectExact(const std::vector<Row>& got, const std::vector<Row>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(got[i].ts, want[i].ts) << what << ", sample " << i;
    ASSERT_EQ(got[i].values.size(), want[i].values.size()) << what << ", sample " << i;
    for (size_t c = 0; c < want[i].values.size(); ++c)
      ASSERT_EQ(bits(got[i].values[c]), bits(want[i].values[c])) << what << ", sample " << i << " column " << c;
  }
}

void expectRoundTrip(int columns, const std::vector<Row>& rows, const std::string& what) {
  const std::vector<uint8_t> blob = encode(columns, rows);
  const Decoded d = decodeAll(blob);
  ASSERT_TRUE(d.opened && d.ok) << what;
  EXPECT_EQ(d.header_count, rows.size()) << what;
  expectExact(d.rows, rows, what);
}

// Timestamps from a list of delta-of-deltas: the second sample's dod is `first_delta` itself.
std::vector<Row> fromDods(int64_t t0, int64_t first_delta, const std::vector<int64_t>& dods) {
  std::vector<Row> rows{{t0, {0.0}}, {t0 + first_delta, {1.0}}};
  int64_t delta = first_delta;
  for (int64_t dod : dods) {
    delta += dod;
    rows.push_back({rows.back().ts + delta, {static_cast<double>(rows.size())}});
  }
  return rows;
}

// The edges of the three bucket ranges in docs/store.md (-64..63, -2048..2047, -524288..524287);
// past the last one the 64-bit escape takes over.
constexpr int64_t kBucketEdges[] = {-64, 63, -2048, 2047, -524288, 524287};

TEST(CodecProperties, EveryDodBucketEdgeAndOneStepEitherSideRoundTrips) {
  for (int64_t edge : kBucketEdges) {
    for (int64_t dod : {edge - 1, edge, edge + 1}) {
      // dod, 0, -dod: the delta goes back to where it was, so both signs of every edge are met.
      expectRoundTrip(1, fromDods(1'767'225'600'000, 10'000'000, {dod, 0, -dod, 0, dod}), "dod " + std::to_string(dod));
    }
  }
}

TEST(CodecProperties, EscapeUpToTheInt64ExtremesRoundTrips) {
  // The second sample's dod is the whole delta: INT64_MAX is the largest one a chunk can hold.
  expectRoundTrip(1, {{kMin, {1.0}}, {-1, {2.0}}}, "dod INT64_MAX");
  expectRoundTrip(1, {{0, {1.0}}, {kMax, {2.0}}}, "0 then INT64_MAX");
  // After a delta of INT64_MAX - 1 a delta of 1 is a dod of INT64_MIN + 3, and back again.
  expectRoundTrip(1, {{kMin, {1.0}}, {kMin + 1, {2.0}}, {-1, {3.0}}, {0, {4.0}}, {kMax - 1, {5.0}}, {kMax, {6.0}}},
                  "from INT64_MIN to INT64_MAX");
  expectRoundTrip(1, fromDods(0, 1, {int64_t{1} << 40, -(int64_t{1} << 40), (int64_t{1} << 62), -(int64_t{1} << 62)}),
                  "2^40 and 2^62");
  // Negative timestamps (zigzag in the header) and the smallest start.
  expectRoundTrip(1, {{kMin, {0.0}}}, "INT64_MIN alone");
  expectRoundTrip(1, {{-5, {0.0}}, {-4, {0.0}}, {-2, {0.0}}}, "negative");
}

TEST(CodecProperties, GapsThatOverflowInt64AreRefusedNotWrapped) {
  ChunkEncoder enc;
  ASSERT_TRUE(enc.append(kMin, 1.0));
  EXPECT_FALSE(enc.append(kMax, 2.0));  // the gap is 2^64 - 1: no int64 delta holds it
  EXPECT_FALSE(enc.append(kMin, 2.0));  // not after the last one
  ASSERT_TRUE(enc.append(kMin + 1, 2.0));
  EXPECT_FALSE(enc.append(kMax, 3.0));      // 2^64 - 2
  EXPECT_FALSE(enc.append(kMax - 1, 3.0));  // 2^64 - 3
  ASSERT_TRUE(enc.append(-1, 3.0));         // INT64_MAX - 1
  ASSERT_TRUE(enc.append(kMax - 1, 4.0));   // INT64_MAX
  ASSERT_TRUE(enc.append(kMax, 5.0));
  EXPECT_FALSE(enc.append(kMax, 6.0));
  EXPECT_EQ(enc.count(), 5u);
  std::vector<uint8_t> blob;
  enc.encodeTo(blob);
  const Decoded d = decodeAll(blob);
  ASSERT_TRUE(d.ok);
  expectExact(d.rows, {{kMin, {1.0}}, {kMin + 1, {2.0}}, {-1, {3.0}}, {kMax - 1, {4.0}}, {kMax, {5.0}}},
              "kept samples");
}

TEST(CodecProperties, DecoderRefusesTimestampsThatWouldOverflow) {
  // {0, INT64_MAX} is valid; starting it at 1 instead (zigzag(0) = 0 -> zigzag(1) = 2, the one
  // header byte at offset 3) makes the second timestamp INT64_MAX + 1: an error, not a wrap.
  std::vector<uint8_t> blob = encode(1, {{0, {1.0}}, {kMax, {2.0}}});
  ASSERT_EQ(blob[3], 0x00);
  blob[3] = 0x02;
  const Decoded d = decodeAll(blob);
  EXPECT_TRUE(d.opened);
  EXPECT_FALSE(d.ok);
  ASSERT_EQ(d.rows.size(), 1u);
  EXPECT_EQ(d.rows[0].ts, 1);
}

TEST(CodecProperties, ValuePatternsRoundTripBitExactly) {
  std::mt19937_64 rng(20260101);
  const std::vector<std::pair<std::string, std::function<uint64_t(int)>>> patterns = {
      {"constant", [](int) { return bits(67.0); }},
      {"alternating", [](int i) { return bits(i % 2 ? 1.0 : 2.0); }},
      {"small changes", [](int i) { return bits(250.0 + 0.25 * (i % 9)); }},
      {"random bits", [&](int) { return rng(); }},
      {"NaN payloads", [&](int) { return 0x7ff0000000000000u | (rng() >> 12) | 1u | (rng() & (1ull << 63)); }},
      {"denormals", [&](int) { return (rng() >> 12) | (rng() & (1ull << 63)); }},
      {"signed zeros", [](int i) { return bits(i % 3 ? 0.0 : -0.0); }},
      {"infinities",
       [](int i) {
         return bits(i % 2 ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity());
       }},
      {"large jumps", [&](int i) { return bits(i % 2 ? 1e300 * static_cast<double>(rng() % 7) : -1e-300); }},
      {"extremes",
       [](int i) {
         const double v[] = {std::numeric_limits<double>::max(), std::numeric_limits<double>::lowest(),
                             std::numeric_limits<double>::min(), std::numeric_limits<double>::denorm_min(),
                             std::numeric_limits<double>::epsilon()};
         return bits(v[i % 5]);
       }},
  };
  for (const auto& [name, next] : patterns) {
    std::vector<Row> rows;
    for (int i = 0; i < 200; ++i) rows.push_back({1000LL * i, {fromBits(next(i))}});
    expectRoundTrip(1, rows, name);
  }
  // Four columns (the downsampled rows), each column its own pattern.
  std::vector<Row> rows;
  for (int i = 0; i < 200; ++i)
    rows.push_back({60'000LL * i,
                    {fromBits(patterns[3].second(i)), fromBits(patterns[4].second(i)), fromBits(patterns[6].second(i)),
                     static_cast<double>(i % 60)}});
  expectRoundTrip(4, rows, "four columns");
}

TEST(CodecProperties, RandomChunksNearTheBucketEdgesRoundTrip) {
  std::mt19937_64 rng(42);
  for (int chunk = 0; chunk < 300; ++chunk) {
    const int columns = 1 + static_cast<int>(rng() % kMaxChunkColumns);
    const size_t n = 1 + rng() % 150;
    std::vector<Row> rows;
    int64_t ts = static_cast<int64_t>(rng() >> 20) - (int64_t{1} << 43);
    int64_t delta = 1 + static_cast<int64_t>(rng() % 2'000'000);
    for (size_t i = 0; i < n; ++i) {
      Row r{ts, {}};
      for (int c = 0; c < columns; ++c) r.values.push_back(rng() % 4 == 0 ? fromBits(rng()) : double(rng() % 50));
      rows.push_back(std::move(r));
      // The next dod: an edge, one step beside it, zero, or anything within ±2^21.
      int64_t dod = 0;
      switch (rng() % 4) {
        case 0:
          dod = kBucketEdges[rng() % 6] + static_cast<int64_t>(rng() % 3) - 1;
          break;
        case 1:
          dod = 0;
          break;
        default:
          dod = static_cast<int64_t>(rng() % (1u << 22)) - (1 << 21);
      }
      if (delta + dod < 1) dod = 1 - delta;
      delta += dod;
      ts += delta;
    }
    expectRoundTrip(columns, rows, "random chunk " + std::to_string(chunk));
  }
}

// A chunk written bit by bit from the table in docs/store.md, not by the encoder: if the codec
// drifts from its documentation (a bucket width, a prefix, the header), this stops decoding.
TEST(CodecProperties, ChunkBuiltFromTheDocumentedLayoutDecodes) {
  const int64_t t0 = 1000;
  // dods of samples 2.. (sample 2's dod is its delta): each bucket at both ends, and the escape.
  const std::vector<int64_t> dods = {600'000, 0, 63, -64, 64, -2048, 2048, -524288, 524288, -524289, 524287, 2047, -65};
  std::vector<uint8_t> blob = {1, 1, static_cast<uint8_t>(dods.size() + 1)};  // format 1, one column, count
  blob.push_back(0xD0);  // zigzag(1000) = 2000 as a LEB128 varint: 0x50 | 0x80, then 0x0F
  blob.push_back(0x0F);
  for (int i = 0; i < 8; ++i) blob.push_back(static_cast<uint8_t>(bits(42.0) >> (8 * i)));  // little-endian
  BitWriter w;
  std::vector<Row> want = {{t0, {42.0}}};
  int64_t delta = 0;
  for (size_t i = 0; i < dods.size(); ++i) {
    const int64_t dod = dods[i];
    if (dod == 0) {
      w.writeBit(false);
    } else if (dod >= -64 && dod <= 63) {
      w.writeBits(0b10, 2);
      w.writeBits(static_cast<uint64_t>(dod), 7);
    } else if (dod >= -2048 && dod <= 2047) {
      w.writeBits(0b110, 3);
      w.writeBits(static_cast<uint64_t>(dod), 12);
    } else if (dod >= -524288 && dod <= 524287) {
      w.writeBits(0b1110, 4);
      w.writeBits(static_cast<uint64_t>(dod), 20);
    } else {
      w.writeBits(0b1111, 4);
      w.writeBits(static_cast<uint64_t>(dod), 64);
    }
    delta += dod;
    // Values: 43.0 after 42.0 is x = 0x0000800000000000: 16 leading zeros, 1 significant bit, a new
    // window ('11' + 5 + 6 bits + the bit); 42.0 again reuses it ('10' + the bit); else repeats.
    double v = want.back().values[0];
    if (i == 2) {
      w.writeBits(0b11, 2);
      w.writeBits(16, 5);
      w.writeBits(0, 6);
      w.writeBits(1, 1);
      v = 43.0;
    } else if (i == 3) {
      w.writeBits(0b10, 2);
      w.writeBits(1, 1);
      v = 42.0;
    } else {
      w.writeBit(false);
    }
    want.push_back({want.back().ts + delta, {v}});
  }
  blob.insert(blob.end(), w.bytes().begin(), w.bytes().end());
  const Decoded d = decodeAll(blob);
  ASSERT_TRUE(d.opened && d.ok);
  expectExact(d.rows, want, "hand-built chunk");
  // And the encoder writes exactly these bytes for these samples.
  EXPECT_EQ(encode(1, want), blob);
}

// Chunks for the damage properties below. Fewer than 128 samples each, so the count is one
// varint byte and the header has the same length for every prefix of a chunk.
std::vector<std::pair<int, std::vector<Row>>> damageChunks() {
  std::mt19937_64 rng(1234);
  std::vector<std::pair<int, std::vector<Row>>> out;
  std::vector<Row> telemetry, edges, rollup;
  for (int i = 0; i < 100; ++i)
    telemetry.push_back({1'767'225'600'000 + 1000LL * i + static_cast<int64_t>(rng() % 5),
                         {i % 10 == 0 ? fromBits(rng()) : 60.0 + static_cast<double>(rng() % 3)}});
  out.emplace_back(1, telemetry);
  std::vector<int64_t> dods;
  for (int64_t e : kBucketEdges)
    for (int64_t d : {e - 1, e, e + 1}) dods.insert(dods.end(), {d, 0, -d});
  out.emplace_back(1, fromDods(-1'000'000'000, 3'000'000, dods));
  for (int i = 0; i < 60; ++i)
    rollup.push_back(
        {60'000LL * i, {static_cast<double>(i % 7), 10.0 + i, 0.1 * i, i % 4 == 0 ? -0.0 : static_cast<double>(i)}});
  out.emplace_back(4, rollup);
  return out;
}

// Truncating a chunk anywhere must be an error, and what was decoded before the error must be the
// chunk's own first samples, exactly. (Every byte of an encoded chunk carries at least one bit of
// it: the writer adds a byte only for a bit, so no shorter length is complete.)
TEST(CodecProperties, TruncationAtEveryLengthIsAnErrorAfterAnExactPrefix) {
  for (const auto& [columns, rows] : damageChunks()) {
    const std::vector<uint8_t> blob = encode(columns, rows);
    for (size_t len = 0; len < blob.size(); ++len) {
      const Decoded d = decodeAll(std::span(blob.data(), len));
      ASSERT_FALSE(d.opened && d.ok) << "a chunk cut to " << len << " of " << blob.size() << " bytes decoded";
      ASSERT_LT(d.rows.size(), rows.size()) << len;
      expectExact(d.rows, std::vector<Row>(rows.begin(), rows.begin() + static_cast<long>(d.rows.size())),
                  "truncated to " + std::to_string(len));
    }
  }
}

// Format v1 has no checksum, so a flipped bit often still decodes. What we assert, for every single
// bit of every byte of each chunk:
//  1. No crash and no undefined behaviour (this runs under ASan and UBSan).
//  2. The decoded timestamps strictly increase (the decoder checks every delta and refuses a wrap).
//  3. Never more samples than the header's count, and a count that does not fit the bytes is refused.
//  4. A flip in the bit stream (after the header): never more samples than were encoded, and every
//     sample whose bits all lie before the flipped bit comes back exactly. What follows the flip
//     may be wrong values or timestamps: without a checksum nothing can tell them from real ones.
//  5. A flip in the header other than the count: never more samples than were encoded (the count
//     is unchanged); the format byte (0) and the column byte (1) are refused or change the columns.
//  6. A flip in the count byte: a smaller count is an exact prefix; a larger one can read the
//     last byte's zero padding as samples ('0' dod, '0' per column: the last value repeated one
//     delta later), so at most 7 / (1 + columns) extra samples, each exactly that repeat, then an
//     error or the end. Nothing in v1 can tell those from real repeats.
TEST(CodecProperties, SingleBitFlipsGiveAnErrorOrAnHonestPrefix) {
  for (const auto& [columns, rows] : damageChunks()) {
    const std::vector<uint8_t> blob = encode(columns, rows);
    const size_t header = encode(columns, {rows.front()}).size();  // same for every prefix (count < 128)
    // stream_end[k]: bytes of bit stream that samples 0..k need; sample k is whole before bit 8 * stream_end[k].
    std::vector<size_t> stream_end(rows.size());
    for (size_t k = 0; k < rows.size(); ++k)
      stream_end[k] =
          encode(columns, std::vector<Row>(rows.begin(), rows.begin() + static_cast<long>(k) + 1)).size() - header;
    const size_t count_byte = 2;
    for (size_t byte = 0; byte < blob.size(); ++byte) {
      for (int bit = 0; bit < 8; ++bit) {
        std::vector<uint8_t> bad = blob;
        bad[byte] ^= static_cast<uint8_t>(1u << bit);
        const std::string where = "byte " + std::to_string(byte) + " bit " + std::to_string(bit);
        const Decoded d = decodeAll(bad);
        if (!d.opened) continue;  // refused outright
        for (size_t i = 1; i < d.rows.size(); ++i) ASSERT_GT(d.rows[i].ts, d.rows[i - 1].ts) << where;  // 2
        ASSERT_LE(d.rows.size(), d.header_count) << where;                                              // 3
        if (byte == 0) FAIL() << where << ": an unknown format byte was accepted";
        if (byte == 1) {
          ASSERT_NE(d.columns, columns) << where;
          continue;
        }
        if (byte == count_byte && bit == 7) continue;  // a continuation bit: the header shifts, 2 and 3 hold
        if (byte == count_byte) {                      // 6
          const size_t n = std::min(d.rows.size(), rows.size());
          expectExact(std::vector<Row>(d.rows.begin(), d.rows.begin() + static_cast<long>(n)),
                      std::vector<Row>(rows.begin(), rows.begin() + static_cast<long>(n)), where);
          ASSERT_LE(d.rows.size(), rows.size() + 7 / static_cast<size_t>(1 + columns)) << where;
          for (size_t i = rows.size(); i < d.rows.size(); ++i) {
            const int64_t last_delta = rows.back().ts - rows[rows.size() - 2].ts;
            ASSERT_EQ(d.rows[i].ts - d.rows[i - 1].ts, last_delta) << where;
            ASSERT_TRUE(sameRow(Row{d.rows[i].ts, rows.back().values}, d.rows[i])) << where;
          }
          continue;
        }
        ASSERT_LE(d.rows.size(), rows.size()) << where;  // 4, 5
        if (byte < header) continue;                     // 5: the first timestamp or values changed
        const size_t flipped_bit = (byte - header) * 8 + static_cast<size_t>(7 - bit);  // MSB first
        size_t intact = 1;  // the first sample lives in the header
        while (intact < rows.size() && stream_end[intact] * 8 <= flipped_bit) ++intact;
        ASSERT_GE(d.rows.size(), intact) << where;
        expectExact(std::vector<Row>(d.rows.begin(), d.rows.begin() + static_cast<long>(intact)),
                    std::vector<Row>(rows.begin(), rows.begin() + static_cast<long>(intact)), where);
      }
    }
  }
}

}  // namespace
}  // namespace gw::store
