// Bit-level writer and reader for the chunk codec (chunk_codec.h).
//
// Written here on purpose: no Debian package offers a Gorilla-style bit stream or time-series
// chunk codec, and the format is small enough that owning it is cheaper than a dependency.
// Bits are written most-significant first, so a stream reads in the order it was written.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace gw::store {

class BitWriter {
 public:
  void writeBit(bool bit) { writeBits(bit ? 1 : 0, 1); }
  // Writes the low `count` bits of `value` (count in 0..64).
  void writeBits(uint64_t value, int count);

  size_t bitCount() const { return bit_count_; }
  const std::vector<uint8_t>& bytes() const { return bytes_; }
  // Keeps the capacity, so a reused writer does not allocate in the steady state.
  void clear() {
    bytes_.clear();
    bit_count_ = 0;
  }
  void reserve(size_t bytes) { bytes_.reserve(bytes); }

 private:
  std::vector<uint8_t> bytes_;
  size_t bit_count_ = 0;
};

// Reads what BitWriter wrote. Every read is bounds-checked: a truncated or corrupt blob makes a
// read return false, never read past the buffer.
class BitReader {
 public:
  explicit BitReader(std::span<const uint8_t> bytes) : bytes_(bytes) {}

  bool readBit(bool& bit);
  // Reads `count` bits (0..64) into the low bits of `value`.
  bool readBits(int count, uint64_t& value);
  size_t bitsLeft() const { return bytes_.size() * 8 - pos_; }

 private:
  std::span<const uint8_t> bytes_;
  size_t pos_ = 0;  // in bits
};

}  // namespace gw::store
