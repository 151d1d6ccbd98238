#include "model.hpp"

#include <cmath>

#include "rng.hpp"

namespace mnist {

ModelParams init_params(const LayerSizes& sizes, uint64_t seed) {
  ModelParams params;
  params.sizes = sizes;
  SplitMix64 rng = stream(seed, kInitStream);
  auto uniform = [&rng](float bound) { return (2 * rng.uniform01() - 1) * bound; };
  for (size_t l = 0; l + 1 < sizes.size(); ++l) {
    const int fan_in = sizes[l], fan_out = sizes[l + 1];
    const float bound = 1.0f / std::sqrt(static_cast<float>(fan_in));
    std::vector<float> weights(static_cast<size_t>(fan_out) * fan_in);
    std::vector<float> bias(fan_out);
    for (float& w : weights) w = uniform(bound);
    for (float& b : bias) b = uniform(bound);
    params.weights.push_back(std::move(weights));
    params.biases.push_back(std::move(bias));
  }
  return params;
}

std::string format_layer_sizes(const LayerSizes& sizes) {
  std::string text;
  for (size_t i = 0; i < sizes.size(); ++i) text += (i ? "-" : "") + std::to_string(sizes[i]);
  return text;
}

}  // namespace mnist
