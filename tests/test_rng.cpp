// The generator behind initialisation and batch order: known answers, and the reproducibility
// the CPU reference relies on to replay a GPU run.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "check.hpp"
#include "model.hpp"
#include "rng.hpp"

using namespace mnist;

int main() {
  // Published SplitMix64 outputs for seed 1234567 (the reference implementation splitmix64.c).
  SplitMix64 known(1234567);
  const uint64_t expected[] = {6457827717110365317ull, 3203168211198807973ull,
                               9817491932198370423ull, 4593380528125082431ull,
                               16408922859458223821ull};
  for (uint64_t value : expected) CHECK(known.next() == value);

  SplitMix64 rng(7);
  bool in_range = true;
  for (int i = 0; i < 10000; ++i) in_range &= rng.below(10) < 10u;
  CHECK(in_range);
  float low = 1, high = 0;
  for (int i = 0; i < 10000; ++i) {
    const float u = rng.uniform01();
    low = std::min(low, u);
    high = std::max(high, u);
  }
  CHECK(low >= 0 && low < 0.01f && high < 1 && high > 0.99f);

  const std::vector<int> order = epoch_order(60000, 42, 0);
  std::vector<int> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  bool permutation = true;
  for (int i = 0; i < 60000; ++i) permutation &= sorted[i] == i;
  CHECK_MSG(permutation, "an epoch visits every sample exactly once");
  CHECK_MSG(order == epoch_order(60000, 42, 0), "same seed and epoch, same order");
  CHECK_MSG(order != epoch_order(60000, 42, 1), "each epoch has its own order");
  CHECK_MSG(order != epoch_order(60000, 43, 0), "each seed has its own order");
  int fixed_points = 0;
  for (int i = 0; i < 60000; ++i) fixed_points += order[i] == i;
  CHECK_MSG(fixed_points < 20, "the order is shuffled (about one fixed point expected)");

  const ModelParams a = init_params({784, 16, 10}, 5), b = init_params({784, 16, 10}, 5);
  const ModelParams c = init_params({784, 16, 10}, 6);
  CHECK(a.weights == b.weights && a.biases == b.biases);
  CHECK(a.weights != c.weights);
  const float bound = 1.0f / 28.0f;  // 1 / sqrt(fan_in = 784)
  float largest = 0;
  for (float w : a.weights[0]) largest = std::max(largest, std::abs(w));
  CHECK_MSG(largest <= bound && largest > 0.99f * bound, "weights uniform in +-1/sqrt(fan_in)");
  CHECK(a.weights[1].size() == 160u && a.biases[1].size() == 10u);
  return testing::finish("rng");
}
