#include "model.hpp"

#include <cmath>
#include <stdexcept>

#include "dataset.hpp"
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

LayerSizes parse_layer_sizes(const std::string& text) {
  constexpr long kMaxWidth = 1 << 16;
  LayerSizes sizes;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find('-', start), text.size());
    const std::string field = text.substr(start, end - start);
    size_t used = 0;
    long width = 0;
    try {
      width = std::stol(field, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (field.empty() || used != field.size() || width < 1 || width > kMaxWidth) {
      throw std::invalid_argument("bad layer width '" + field + "' in '" + text +
                                  "' (expected e.g. 784-1024-1024-1024-10)");
    }
    sizes.push_back(static_cast<int>(width));
    start = end + 1;
  }
  if (sizes.size() < 2 || sizes.front() != kPixels || sizes.back() != kClasses) {
    throw std::invalid_argument("layers '" + text + "' must start at " + std::to_string(kPixels) +
                                " and end at " + std::to_string(kClasses));
  }
  return sizes;
}

std::string format_layer_sizes(const LayerSizes& sizes) {
  std::string text;
  for (size_t i = 0; i < sizes.size(); ++i) text += (i ? "-" : "") + std::to_string(sizes[i]);
  return text;
}

}  // namespace mnist
