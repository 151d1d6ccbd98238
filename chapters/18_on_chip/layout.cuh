// Where the on-chip kernel keeps a model in a block's shared memory, and which models fit.
//
// The cluster is kClusterBlocks blocks; block b owns rows [b R, b R + R) of every hidden layer's
// weights (R = out / kClusterBlocks), their fp16 copy and bias; the output layer (kClasses rows)
// is small enough that every block keeps all of it and updates it alike. Rows of shared operands
// are kPad halves longer than their data, so that the 8 rows one ldmatrix reads start in 8
// different 16-byte bank groups (784 + 8 halves is 1,584 bytes, 48 mod 128).
#pragma once

#include <algorithm>
#include <string>

#include "03_mma_sync/mma.cuh"
#include "15_persistent_step/schedule.cuh"
#include "dataset.hpp"

namespace mnist::on_chip {

using mma_sync::kMmaK;
using mma_sync::kMmaM;
using mma_sync::kMmaN;
using persistent_step::kMaxLayers;
using persistent_step::kThreads;
using persistent_step::kWarps;
using persistent_step::Model;

constexpr int kClusterBlocks = 16;  // the largest cluster the H100 runs (a non-portable size)
constexpr int kOnChipRows = 32;     // batch rows in shared memory: two mma tiles of M
static_assert(kOnChipRows == 32, "the softmax takes a row a lane of one warp");
constexpr int kOwnRowsMax = 16;     // a hidden layer's rows per block: widths up to 256
constexpr int kPad = 8;             // halves after each row of a shared operand
constexpr int kClassesPadded = 16;  // the output layer's rows, zeros past kClasses: one mma K step
constexpr int kDzStride = kClassesPadded + kPad;  // a dZ row: up to 16 columns, and the pad
constexpr int kOnChipSmemLimit = 224 * 1024;      // the H100's 227 KB a block, less 3 KB

// Where each buffer lies in a block's dynamic shared memory, in bytes, for one model; the host
// computes it and the kernel takes it as a parameter.
struct OnChipLayout {
  int layers;
  int in[kMaxLayers], out[kMaxLayers];
  int own_rows[kMaxLayers];  // R of each hidden layer
  int partial_cols;          // columns of a partial product's slot: the largest R of layers 0..L-3
  int batch[2];              // kOnChipRows x (kPixels + kPad) halves: this step's and the next's
  int weight16[kMaxLayers];  // fp16 rows of layer l: own rows (16, zeros past R; layer 0: R
                             // rounded up to 8), or the output layer's kClassesPadded
  int weight32[kMaxLayers];  // fp32 master rows of layer l >= 1
  int bias[kMaxLayers];      // own biases (kClassesPadded floats, zeros past R or kClasses)
  int input[kMaxLayers];     // X of layer l >= 1, whole: kOnChipRows x (in + kPad) halves
  int input_second;          // a second X of layer 1, for odd steps (see the kernel)
  int dz[kMaxLayers];        // dZ of layer l, own columns (all kClasses for the output layer):
                             // kOnChipRows x kDzStride halves, zeros past R
  int logits;                // kOnChipRows x kClasses floats
  int partial[2];            // kClusterBlocks slots of kOnChipRows x partial_cols floats
  int sums;                  // kWarps x 128 floats: the warps' partial tiles of a product split
                             // along K
  int arrivals;              // kArrivals mbarriers (input_arrival, partial_arrival)
  int bytes;
};

__host__ __device__ inline int round_up(int x, int to) {
  return (x + to - 1) / to * to;
}

// The mbarriers a block receives on: one for each X of layers 1 .. L-1 (two for layer 1), and one
// for each of the two partial-product buffers.
constexpr int kArrivals = 2 * kMaxLayers + 2;
__host__ __device__ inline int input_arrival(int l, int buffer) {
  return 2 * l + buffer;
}
__host__ __device__ inline int partial_arrival(int buffer) {
  return 2 * kMaxLayers + buffer;
}

// The layout for the model of `sizes` (layers + 1 widths); bytes > kOnChipSmemLimit where it does
// not fit.
__host__ __device__ inline OnChipLayout on_chip_layout(const int* sizes, int layers) {
  OnChipLayout s{};
  s.layers = layers;
  int bytes = 0;
  const auto take = [&](int count) {  // 16-byte aligned, for ldmatrix and cp.async
    const int at = bytes;
    bytes += round_up(count, 16);
    return at;
  };
  for (int i = 0; i < 2; ++i) s.batch[i] = take(kOnChipRows * (kPixels + kPad) * 2);
  for (int l = 0; l < layers; ++l) {
    s.in[l] = sizes[l];
    s.out[l] = sizes[l + 1];
    const bool hidden = l + 1 < layers;
    s.own_rows[l] = hidden ? s.out[l] / kClusterBlocks : kClasses;
    const int rows16 = !hidden ? kClassesPadded : l == 0 ? round_up(s.own_rows[l], 8) : 16;
    s.weight16[l] = take(rows16 * (s.in[l] + kPad) * 2);
    if (l > 0) s.weight32[l] = take(s.own_rows[l] * s.in[l] * 4);
    s.bias[l] = take(kClassesPadded * 4);
    if (l > 0) s.input[l] = take(kOnChipRows * (s.in[l] + kPad) * 2);
    if (l == 1) s.input_second = take(kOnChipRows * (s.in[l] + kPad) * 2);
    s.dz[l] = take(kOnChipRows * kDzStride * 2);
    if (l + 2 < layers) s.partial_cols = std::max(s.partial_cols, s.own_rows[l]);
  }
  s.logits = take(kOnChipRows * kClasses * 4);
  for (int i = 0; i < 2; ++i) {
    s.partial[i] = take(kClusterBlocks * kOnChipRows * s.partial_cols * 4);
  }
  s.sums = take(kWarps * kMmaM * kMmaN * 4);
  s.arrivals = take(kArrivals * 8);
  s.bytes = bytes;
  return s;
}

// Why the on-chip kernel does not take a model of `sizes` at `batch`, or empty. Asks nothing of
// the GPU; a GPU that cannot run a cluster of 16 gets chapter 16's grid kernel (gemm.cuh).
inline std::string on_chip_refusal(const LayerSizes& sizes, int batch) {
  const int layers = static_cast<int>(sizes.size()) - 1;
  if (batch > kOnChipRows) return "batches up to " + std::to_string(kOnChipRows);
  if (layers < 3 || layers > kMaxLayers) return "3 to " + std::to_string(kMaxLayers) + " layers";
  for (int l = 1; l < layers; ++l) {
    if (sizes[l] % (2 * kClusterBlocks) != 0 || sizes[l] > kClusterBlocks * kOwnRowsMax) {
      return "hidden widths that are multiples of " + std::to_string(2 * kClusterBlocks) +
             " up to " + std::to_string(kClusterBlocks * kOwnRowsMax);
    }
  }
  if (on_chip_layout(sizes.data(), layers).bytes > kOnChipSmemLimit) {
    return "models whose weights, activations and two batches fit in " +
           std::to_string(kOnChipSmemLimit / 1024) + " KB of shared memory a block";
  }
  return "";
}

}  // namespace mnist::on_chip
