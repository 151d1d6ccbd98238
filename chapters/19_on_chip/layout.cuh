// Where the on-chip kernel keeps a model in a block's shared memory: chapter 18's layout
// (18_cluster_model/layout.cuh) and, after it, what waiting only for the data a block reads adds:
// the batch of odd steps (the next step's is copied during this one), X of layer 1 of odd steps
// (on_chip.cuh says why) and the mbarriers that the other blocks' stores count off.
#pragma once

#include <string>

#include "18_cluster_model/layout.cuh"

namespace mnist::on_chip {

using namespace cluster_model;

struct OnChipLayout : ModelLayout {
  int batch_second;  // kOnChipRows x (kPixels + kPad) halves: the batch of odd steps
  int input_second;  // X of layer 1 of odd steps
  int arrivals;      // kArrivals mbarriers (input_arrival, partial_arrival)
};

// The mbarriers a block receives on: one for each X of layers 1 .. L-1 (two for layer 1), and one
// for each of the two partial-product buffers.
constexpr int kArrivals = 2 * kMaxLayers + 2;
__host__ __device__ inline int input_arrival(int l, int buffer) {
  return 2 * l + buffer;
}
__host__ __device__ inline int partial_arrival(int buffer) {
  return 2 * kMaxLayers + buffer;
}

// The layout for the model of `sizes`; bytes > kOnChipSmemLimit where it does not fit.
inline OnChipLayout on_chip_layout(const LayerSizes& sizes) {
  OnChipLayout s{model_layout(sizes), 0, 0, 0};  // the offsets that follow
  s.batch_second = s.take(kOnChipRows * (kPixels + kPad) * 2);
  s.input_second = s.take(kOnChipRows * (s.in[1] + kPad) * 2);
  s.arrivals = s.take(kArrivals * 8);
  return s;
}

// Why the on-chip kernel does not take a model of `sizes` at `batch`, or empty: chapter 18's rule,
// with the second batch and X in the bytes. Asks nothing of the GPU (gemm.cuh).
inline std::string on_chip_refusal(const LayerSizes& sizes, int batch) {
  const std::string refusal = model_refusal(sizes, batch);
  if (!refusal.empty()) return refusal;
  if (on_chip_layout(sizes).bytes > kOnChipSmemLimit) {
    return "models whose weights, activations and two batches fit in " +
           std::to_string(kOnChipSmemLimit / 1024) + " KiB of shared memory a block";
  }
  return "";
}

}  // namespace mnist::on_chip
