// Chunk codec: delta-of-delta timestamps and XOR-compressed doubles, in the manner of Facebook's
// Gorilla paper and Prometheus TSDB chunks, tuned for millisecond timestamps.
//
// Our own implementation (no Debian package provides one). A chunk holds up to a few hundred
// samples of one series; each sample is a timestamp and `columns` doubles (1 for raw samples,
// 4 for downsampled min/max/sum/count rows). The exact byte format is in docs/store.md.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "common/result.h"
#include "store/bit_stream.h"

namespace gw::store {

inline constexpr uint8_t kChunkFormatV1 = 1;
// The format encodeTo() writes (byte 0 of every chunk). Changing the bytes it writes needs a new
// value here, a decoder that still reads every older one, and a golden for the new one
// (tests/golden/, docs/testing.md).
inline constexpr uint8_t kChunkFormat = kChunkFormatV1;
inline constexpr int kMaxChunkColumns = 4;

// Per-column XOR state, shared by encoder and decoder so that both walk the same state machine.
struct XorColumnState {
  uint64_t prev_bits = 0;
  int leading = -1;  // window of the previous meaningful bits; -1: no window yet
  int trailing = 0;
};

class ChunkEncoder {
 public:
  explicit ChunkEncoder(int columns = 1);

  // Appends one sample. Timestamps must strictly increase: returns false (and changes nothing)
  // otherwise, or when values.size() != columns().
  bool append(int64_t ts_ms, std::span<const double> values);
  bool append(int64_t ts_ms, double value) { return append(ts_ms, std::span<const double>(&value, 1)); }

  int columns() const { return columns_; }
  uint32_t count() const { return count_; }
  bool empty() const { return count_ == 0; }
  int64_t firstTimestamp() const { return first_ts_; }
  int64_t lastTimestamp() const { return prev_ts_; }
  // Bytes encodeTo() would produce.
  size_t encodedSize() const;

  // Writes the complete-so-far chunk (header + bit stream) into `out`, replacing its contents.
  // Can be called at any time: an open chunk is flushed this way and keeps growing afterwards.
  void encodeTo(std::vector<uint8_t>& out) const;

  // Starts a new, empty chunk; keeps buffer capacity.
  void reset();

 private:
  void writeTimestamp(int64_t ts_ms);

  int columns_;
  uint32_t count_ = 0;
  int64_t first_ts_ = 0;
  int64_t prev_ts_ = 0;
  int64_t prev_delta_ = 0;
  std::array<double, kMaxChunkColumns> first_values_{};
  std::array<XorColumnState, kMaxChunkColumns> state_{};
  BitWriter bits_;  // samples 2..n; the first sample lives in the header
};

// Iterates the samples of one encoded chunk. The blob must outlive the reader. Corrupt input
// never reads out of bounds: next() returns false and status() says why.
class ChunkReader {
 public:
  static Result<ChunkReader> open(std::span<const uint8_t> blob);

  int columns() const { return columns_; }
  uint32_t count() const { return count_; }
  int64_t firstTimestamp() const { return first_ts_; }

  // Reads the next sample; values must have room for columns() doubles. False at the end or on
  // corruption (then status() is an error).
  bool next(int64_t& ts_ms, std::span<double> values);
  const Status& status() const { return status_; }

 private:
  ChunkReader() : bits_(std::span<const uint8_t>()) {}
  bool fail(const char* why);

  int columns_ = 1;
  uint32_t count_ = 0;
  uint32_t read_ = 0;
  int64_t first_ts_ = 0;
  int64_t prev_ts_ = 0;
  int64_t prev_delta_ = 0;
  std::array<double, kMaxChunkColumns> first_values_{};
  std::array<XorColumnState, kMaxChunkColumns> state_{};
  BitReader bits_;
  Status status_;
};

// Convenience for tests and compaction: decodes a one-column chunk completely.
struct Sample {
  int64_t ts_ms;
  double value;
};
Status decodeChunk(std::span<const uint8_t> blob, std::vector<Sample>& out);

}  // namespace gw::store
