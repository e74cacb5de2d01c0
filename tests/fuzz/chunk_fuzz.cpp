// libFuzzer target for the history store's chunk codec (src/store/chunk_codec.h), two ways:
//  - decode: any bytes given to ChunkReader either fail to open or iterate at most count() samples
//    with strictly increasing timestamps, never reading out of bounds (ASan) and stopping with an
//    error status when they stop early;
//  - round trip: the bytes also drive an encoder (timestamps, values, column count), and what it
//    encodes must decode to exactly the same samples, bit for bit (NaN payloads included).
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "store/chunk_codec.h"

namespace {

using gw::store::ChunkEncoder;
using gw::store::ChunkReader;
using gw::store::kMaxChunkColumns;

void decodeAnything(std::span<const uint8_t> blob) {
  auto r = ChunkReader::open(blob);
  if (!r) {
    if (r.error().empty()) __builtin_trap();
    return;
  }
  if (r->columns() < 1 || r->columns() > kMaxChunkColumns) __builtin_trap();
  int64_t ts = 0, prev = 0;
  double v[kMaxChunkColumns];
  uint32_t n = 0;
  while (r->next(ts, v)) {
    if (n > 0 && ts <= prev) __builtin_trap();
    prev = ts;
    ++n;
    if (n > r->count()) __builtin_trap();
  }
  if (n < r->count() && r->status().ok()) __builtin_trap();  // stopped early without saying why
  if (n == r->count() && !r->status().ok()) __builtin_trap();
}

struct Input {
  const uint8_t* p;
  std::size_t left;
  template <typename T>
  bool take(T& out) {
    if (left < sizeof(T)) return false;
    std::memcpy(&out, p, sizeof(T));
    p += sizeof(T);
    left -= sizeof(T);
    return true;
  }
};

void roundTrip(const uint8_t* data, std::size_t size) {
  Input in{data, size};
  uint8_t cols = 0;
  if (!in.take(cols)) return;
  const int columns = 1 + cols % kMaxChunkColumns;
  ChunkEncoder enc(columns);
  struct S {
    int64_t ts;
    uint64_t bits[kMaxChunkColumns];
  };
  std::vector<S> want;
  int64_t ts = 0;
  for (;;) {
    uint8_t kind = 0;
    if (!in.take(kind)) break;
    // Mostly regular steps (the codec's common case), sometimes any 64-bit timestamp.
    if (kind & 1) {
      int64_t any = 0;
      if (!in.take(any)) break;
      ts = any;
    } else {
      uint16_t step = 0;
      if (!in.take(step)) break;
      ts = static_cast<int64_t>(static_cast<uint64_t>(ts) + step);
    }
    S s{ts, {}};
    double values[kMaxChunkColumns];
    for (int c = 0; c < columns; ++c) {
      if (kind & (2 << c)) {
        if (!in.take(s.bits[c])) return;
      } else {
        s.bits[c] = want.empty() ? 0 : want.back().bits[c];  // repeated value: the 1-bit case
      }
      values[c] = std::bit_cast<double>(s.bits[c]);
    }
    const bool accepted = enc.append(ts, std::span<const double>(values, static_cast<std::size_t>(columns)));
    const bool should = want.empty() || (ts > want.back().ts);
    // The encoder refuses only non-increasing timestamps and gaps that overflow int64.
    if (accepted && !should) __builtin_trap();
    if (accepted) want.push_back(s);
  }
  std::vector<uint8_t> blob;
  enc.encodeTo(blob);
  if (blob.size() != enc.encodedSize()) __builtin_trap();
  auto r = ChunkReader::open(blob);
  if (!r || r->count() != want.size() || r->columns() != columns) __builtin_trap();
  double v[kMaxChunkColumns];
  int64_t got_ts = 0;
  for (const S& s : want) {
    if (!r->next(got_ts, v)) __builtin_trap();
    if (got_ts != s.ts) __builtin_trap();
    for (int c = 0; c < columns; ++c)
      if (std::bit_cast<uint64_t>(v[c]) != s.bits[c]) __builtin_trap();
  }
  if (r->next(got_ts, v) || !r->status().ok()) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  decodeAnything(std::span<const uint8_t>(data, size));
  roundTrip(data, size);
  return 0;
}
