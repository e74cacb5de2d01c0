// Deterministic noise: a hash of (seed, gpu, signal, step), so a value depends only on the
// scenario and the simulated time, never on how often or in which order it was read.
#pragma once

#include <cstdint>

namespace gw::sim {

enum class Signal : std::uint64_t {
  kUtil = 1,
  kMemUtil,
  kPower,
  kMemTemp,
  kPcieTx,
  kPcieRx,
  kBurst,
  kUuid,
  kSerial,
  kPage,
  kNvlink,
};

inline std::uint64_t mix64(std::uint64_t x) {
  // splitmix64's finaliser: every input bit affects every output bit.
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

inline std::uint64_t hash(std::uint64_t seed, std::uint64_t gpu, Signal signal, std::uint64_t step) {
  std::uint64_t h = mix64(seed);
  h = mix64(h ^ (gpu * 0x100000001B3ULL));
  h = mix64(h ^ static_cast<std::uint64_t>(signal));
  return mix64(h ^ step);
}

// Uniform in [-1, 1).
inline double noise(std::uint64_t seed, std::uint64_t gpu, Signal signal, std::int64_t step) {
  std::uint64_t h = hash(seed, gpu, signal, static_cast<std::uint64_t>(step));
  return static_cast<double>(h >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

}  // namespace gw::sim
