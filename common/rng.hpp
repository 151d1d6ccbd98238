// The one random number generator of the project, on the host, so that the GPU trainers and the
// CPU reference draw identical initial weights and identical batch orders from the same seed.
//
// SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators", 2014):
// a 64-bit counter advanced by the golden-ratio constant, then a fixed bijective mixer. It is
// tiny, passes BigCrush, and any stream can be replayed from (seed, stream id) alone.
#pragma once

#include <cstdint>
#include <numeric>
#include <vector>

namespace mnist {

class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}

  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }

  // Uniform in [0, bound) by multiply-and-shift (Lemire, 2019); the bias is below bound / 2^64.
  uint32_t below(uint32_t bound) {
    return static_cast<uint32_t>((static_cast<unsigned __int128>(next()) * bound) >> 64);
  }

  // Uniform in [0, 1) from the top 24 bits, so every value is exact in float.
  float uniform01() { return static_cast<float>(next() >> 40) * 0x1.0p-24f; }

 private:
  uint64_t state_;
};

// Independent streams of one seed: the weights use kInitStream, epoch e shuffles with
// kShuffleStream + e.
constexpr uint64_t kInitStream = 0;
constexpr uint64_t kShuffleStream = 1;

inline SplitMix64 stream(uint64_t seed, uint64_t stream_id) {
  return SplitMix64(SplitMix64(seed ^ (stream_id * 0xD1B54A32D192ED03ull)).next());
}

// The order in which epoch `epoch` visits the `count` training samples (Fisher-Yates).
inline std::vector<int> epoch_order(int count, uint64_t seed, int epoch) {
  std::vector<int> order(count);
  std::iota(order.begin(), order.end(), 0);
  SplitMix64 rng = stream(seed, kShuffleStream + static_cast<uint64_t>(epoch));
  for (int i = count - 1; i > 0; --i) {
    std::swap(order[i], order[rng.below(static_cast<uint32_t>(i) + 1)]);
  }
  return order;
}

}  // namespace mnist
