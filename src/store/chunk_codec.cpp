#include "store/chunk_codec.h"

#include <bit>
#include <cstring>

namespace gw::store {
namespace {

// Header integers are LEB128 varints; the timestamp is zigzag-encoded first so that negative
// values (tests, clock bugs) stay small and valid.
void putVarint(std::vector<uint8_t>& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<uint8_t>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<uint8_t>(v));
}

bool getVarint(std::span<const uint8_t> in, size_t& pos, uint64_t& v) {
  v = 0;
  for (int shift = 0; shift < 64 && pos < in.size(); shift += 7) {
    const uint8_t byte = in[pos++];
    v |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) return true;
  }
  return false;
}

uint64_t zigzag(int64_t v) { return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63); }
int64_t unzigzag(uint64_t v) { return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1); }

size_t varintSize(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

// Delta-of-delta buckets. Millisecond timestamps from a scheduler that stamps its tick times
// repeat the same delta, so most samples cost the single '0' bit; jitter of a few ms fits the
// 7-bit bucket; a missed tick or a changed interval fits 12 or 20 bits.
struct DodBucket {
  uint64_t prefix;
  int prefix_bits;
  int value_bits;
};
constexpr DodBucket kDodBuckets[] = {{0b10, 2, 7}, {0b110, 3, 12}, {0b1110, 4, 20}};
constexpr uint64_t kDodEscape = 0b1111;  // followed by all 64 bits

bool fitsSigned(int64_t v, int bits) {
  const int64_t limit = int64_t{1} << (bits - 1);
  return v >= -limit && v < limit;
}

int64_t signExtend(uint64_t raw, int bits) { return static_cast<int64_t>(raw << (64 - bits)) >> (64 - bits); }

// Unsigned arithmetic: wraps instead of overflowing, and the decoder wraps back identically.
int64_t wrapSub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
int64_t wrapAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}

constexpr int kLeadingBits = 5;      // leading zeros stored, capped at 31
constexpr int kSignificantBits = 6;  // meaningful bit count minus one
constexpr int kWindowHeader = 1 + kLeadingBits + kSignificantBits;

void writeXor(BitWriter& w, XorColumnState& st, double value) {
  const uint64_t bits = std::bit_cast<uint64_t>(value);
  const uint64_t x = bits ^ st.prev_bits;
  st.prev_bits = bits;
  if (x == 0) {
    w.writeBit(false);
    return;
  }
  w.writeBit(true);
  int leading = std::countl_zero(x);
  const int trailing = std::countr_zero(x);
  if (leading > 31) leading = 31;
  if (st.leading >= 0 && leading >= st.leading && trailing >= st.trailing) {
    const int window = 64 - st.leading - st.trailing;
    // Reusing a wide window for a narrow value can cost more than a new window header.
    if (window <= (64 - leading - trailing) + kWindowHeader) {
      w.writeBit(false);
      w.writeBits(x >> st.trailing, window);
      return;
    }
  }
  const int significant = 64 - leading - trailing;
  w.writeBit(true);
  w.writeBits(static_cast<uint64_t>(leading), kLeadingBits);
  w.writeBits(static_cast<uint64_t>(significant - 1), kSignificantBits);
  w.writeBits(x >> trailing, significant);
  st.leading = leading;
  st.trailing = trailing;
}

bool readXor(BitReader& r, XorColumnState& st, double& value) {
  bool changed = false;
  if (!r.readBit(changed)) return false;
  if (changed) {
    bool new_window = false;
    if (!r.readBit(new_window)) return false;
    if (new_window) {
      uint64_t leading = 0, significant = 0;
      if (!r.readBits(kLeadingBits, leading) || !r.readBits(kSignificantBits, significant)) return false;
      const int trailing = 64 - static_cast<int>(leading) - static_cast<int>(significant + 1);
      if (trailing < 0) return false;
      st.leading = static_cast<int>(leading);
      st.trailing = trailing;
    } else if (st.leading < 0) {
      return false;  // window reuse before any window: corrupt
    }
    const int window = 64 - st.leading - st.trailing;
    uint64_t meaningful = 0;
    if (!r.readBits(window, meaningful)) return false;
    st.prev_bits ^= meaningful << st.trailing;
  }
  value = std::bit_cast<double>(st.prev_bits);
  return true;
}

}  // namespace

ChunkEncoder::ChunkEncoder(int columns)
    : columns_(columns < 1 ? 1 : (columns > kMaxChunkColumns ? kMaxChunkColumns : columns)) {}

bool ChunkEncoder::append(int64_t ts_ms, std::span<const double> values) {
  if (values.size() != static_cast<size_t>(columns_)) return false;
  if (count_ == 0) {
    first_ts_ = prev_ts_ = ts_ms;
    prev_delta_ = 0;
    for (int c = 0; c < columns_; ++c) {
      first_values_[c] = values[c];
      state_[c] = XorColumnState{std::bit_cast<uint64_t>(values[c]), -1, 0};
    }
    count_ = 1;
    return true;
  }
  // The second test refuses a gap so wide that it overflows int64 (the decoder checks the same).
  if (ts_ms <= prev_ts_ || wrapSub(ts_ms, prev_ts_) <= 0) return false;
  writeTimestamp(ts_ms);
  for (int c = 0; c < columns_; ++c) writeXor(bits_, state_[c], values[c]);
  ++count_;
  return true;
}

void ChunkEncoder::writeTimestamp(int64_t ts_ms) {
  const int64_t delta = wrapSub(ts_ms, prev_ts_);
  const int64_t dod = wrapSub(delta, prev_delta_);
  prev_ts_ = ts_ms;
  prev_delta_ = delta;
  if (dod == 0) {
    bits_.writeBit(false);
    return;
  }
  for (const DodBucket& b : kDodBuckets) {
    if (fitsSigned(dod, b.value_bits)) {
      bits_.writeBits(b.prefix, b.prefix_bits);
      bits_.writeBits(static_cast<uint64_t>(dod), b.value_bits);
      return;
    }
  }
  bits_.writeBits(kDodEscape, 4);
  bits_.writeBits(static_cast<uint64_t>(dod), 64);
}

size_t ChunkEncoder::encodedSize() const {
  size_t n = 2 + varintSize(count_);
  if (count_ > 0) n += varintSize(zigzag(first_ts_)) + 8 * static_cast<size_t>(columns_);
  return n + bits_.bytes().size();
}

void ChunkEncoder::encodeTo(std::vector<uint8_t>& out) const {
  out.clear();
  out.reserve(encodedSize());
  out.push_back(kChunkFormat);
  out.push_back(static_cast<uint8_t>(columns_));
  putVarint(out, count_);
  if (count_ == 0) return;
  putVarint(out, zigzag(first_ts_));
  for (int c = 0; c < columns_; ++c) {
    uint8_t raw[8];
    const uint64_t bits = std::bit_cast<uint64_t>(first_values_[c]);
    for (int i = 0; i < 8; ++i) raw[i] = static_cast<uint8_t>(bits >> (8 * i));
    out.insert(out.end(), raw, raw + 8);
  }
  out.insert(out.end(), bits_.bytes().begin(), bits_.bytes().end());
}

void ChunkEncoder::reset() {
  count_ = 0;
  first_ts_ = prev_ts_ = prev_delta_ = 0;
  bits_.clear();
}

Result<ChunkReader> ChunkReader::open(std::span<const uint8_t> blob) {
  if (blob.size() < 3) return Status::Error("chunk too short");
  if (blob[0] != kChunkFormatV1) return Status::Error("unknown chunk format " + std::to_string(blob[0]));
  ChunkReader r;
  r.columns_ = blob[1];
  if (r.columns_ < 1 || r.columns_ > kMaxChunkColumns) return Status::Error("bad chunk column count");
  size_t pos = 2;
  uint64_t count = 0;
  if (!getVarint(blob, pos, count) || count > UINT32_MAX) return Status::Error("bad chunk sample count");
  r.count_ = static_cast<uint32_t>(count);
  if (r.count_ == 0) return r;
  uint64_t ts = 0;
  if (!getVarint(blob, pos, ts)) return Status::Error("bad chunk start timestamp");
  r.first_ts_ = unzigzag(ts);
  const size_t values_bytes = 8 * static_cast<size_t>(r.columns_);
  if (blob.size() - pos < values_bytes) return Status::Error("chunk truncated in first sample");
  for (int c = 0; c < r.columns_; ++c) {
    uint64_t bits = 0;
    for (int i = 0; i < 8; ++i) bits |= static_cast<uint64_t>(blob[pos + i]) << (8 * i);
    pos += 8;
    r.first_values_[c] = std::bit_cast<double>(bits);
    r.state_[c] = XorColumnState{bits, -1, 0};
  }
  r.bits_ = BitReader(blob.subspan(pos));
  // Every sample after the first takes at least one bit for its timestamp and one per column: a
  // count the blob cannot hold is damage, found before anyone sizes a buffer by it.
  if (static_cast<uint64_t>(r.count_ - 1) * static_cast<uint64_t>(1 + r.columns_) > r.bits_.bitsLeft())
    return Status::Error("chunk sample count " + std::to_string(r.count_) + " larger than its " +
                         std::to_string(blob.size()) + " bytes can hold");
  return r;
}

bool ChunkReader::fail(const char* why) {
  status_ = Status::Error(std::string("corrupt chunk: ") + why + " at sample " + std::to_string(read_));
  read_ = count_;  // stop iterating
  return false;
}

bool ChunkReader::next(int64_t& ts_ms, std::span<double> values) {
  if (read_ >= count_) return false;
  if (values.size() < static_cast<size_t>(columns_)) return fail("caller buffer too small");
  if (read_ == 0) {
    prev_ts_ = ts_ms = first_ts_;
    for (int c = 0; c < columns_; ++c) values[c] = first_values_[c];
    ++read_;
    return true;
  }
  // Timestamp: count the prefix's leading ones (at most 4), then the bucket's payload.
  int ones = 0;
  for (bool bit = true; ones < 4; ++ones) {
    if (!bits_.readBit(bit)) return fail("truncated timestamp");
    if (!bit) break;
  }
  int64_t dod = 0;
  uint64_t raw = 0;
  if (ones == 4) {
    if (!bits_.readBits(64, raw)) return fail("truncated timestamp");
    dod = static_cast<int64_t>(raw);
  } else if (ones > 0) {
    const int width = kDodBuckets[ones - 1].value_bits;
    if (!bits_.readBits(width, raw)) return fail("truncated timestamp");
    dod = signExtend(raw, width);
  }
  prev_delta_ = wrapAdd(prev_delta_, dod);
  if (prev_delta_ <= 0) return fail("timestamps not increasing");
  // A positive delta can still carry the timestamp past INT64_MAX: the encoder never writes that
  // (it refuses such a gap), so it is damage (found by tests/fuzz/chunk_fuzz.cpp).
  const int64_t next_ts = wrapAdd(prev_ts_, prev_delta_);
  if (next_ts <= prev_ts_) return fail("timestamp overflows");
  prev_ts_ = next_ts;
  ts_ms = prev_ts_;
  for (int c = 0; c < columns_; ++c) {
    if (!readXor(bits_, state_[c], values[c])) return fail("truncated value");
  }
  ++read_;
  return true;
}

Status decodeChunk(std::span<const uint8_t> blob, std::vector<Sample>& out) {
  auto reader = ChunkReader::open(blob);
  if (!reader) return reader.status();
  if (reader->columns() != 1) return Status::Error("decodeChunk expects a one-column chunk");
  int64_t ts = 0;
  double v = 0;
  while (reader->next(ts, std::span<double>(&v, 1))) out.push_back({ts, v});
  return reader->status();
}

}  // namespace gw::store
