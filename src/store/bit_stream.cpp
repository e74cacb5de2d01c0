#include "store/bit_stream.h"

#include <algorithm>

namespace gw::store {

void BitWriter::writeBits(uint64_t value, int count) {
  if (count < 64) value &= (uint64_t{1} << count) - 1;
  // Fill the partly written last byte, then whole bytes: at most 9 iterations for 64 bits.
  while (count > 0) {
    const int used = static_cast<int>(bit_count_ % 8);
    if (used == 0) bytes_.push_back(0);
    const int free_bits = 8 - used;
    const int take = std::min(free_bits, count);
    const uint64_t part = (value >> (count - take)) & ((uint64_t{1} << take) - 1);
    bytes_.back() = static_cast<uint8_t>(bytes_.back() | (part << (free_bits - take)));
    count -= take;
    bit_count_ += static_cast<size_t>(take);
  }
}

bool BitReader::readBit(bool& bit) {
  uint64_t v = 0;
  if (!readBits(1, v)) return false;
  bit = v != 0;
  return true;
}

bool BitReader::readBits(int count, uint64_t& value) {
  if (count < 0 || count > 64 || static_cast<size_t>(count) > bitsLeft()) return false;
  uint64_t out = 0;
  while (count > 0) {
    const int offset = static_cast<int>(pos_ % 8);
    const int avail = 8 - offset;
    const int take = std::min(avail, count);
    const uint64_t byte = bytes_[pos_ / 8];
    const uint64_t part = (byte >> (avail - take)) & ((uint64_t{1} << take) - 1);
    out = (out << take) | part;
    count -= take;
    pos_ += static_cast<size_t>(take);
  }
  value = out;
  return true;
}

}  // namespace gw::store
