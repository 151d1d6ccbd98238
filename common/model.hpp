// The MLP's shape and its initial parameters, shared by the GPU trainers and the CPU reference.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mnist {

// Layer widths from input to output, e.g. {784, 1024, 1024, 1024, 10}.
using LayerSizes = std::vector<int>;

struct ModelParams {
  LayerSizes sizes;
  // Layer l maps sizes[l] -> sizes[l+1]; its weights are sizes[l+1] x sizes[l], row-major
  // (PyTorch's nn.Linear layout), its bias has sizes[l+1] entries.
  std::vector<std::vector<float>> weights;
  std::vector<std::vector<float>> biases;

  int layers() const { return static_cast<int>(weights.size()); }
};

// PyTorch's nn.Linear default: weights and bias uniform in +-1/sqrt(fan_in) (that is
// kaiming_uniform_ with a = sqrt(5)), drawn from the seed's init stream layer by layer,
// weights before bias.
ModelParams init_params(const LayerSizes& sizes, uint64_t seed);

std::string format_layer_sizes(const LayerSizes& sizes);

// What evaluating a model on a split gives, on the GPU (Trainer) or the CPU (ReferenceTrainer).
struct Evaluation {
  double mean_loss = 0;
  double accuracy = 0;  // fraction of the split classified correctly
};

}  // namespace mnist
