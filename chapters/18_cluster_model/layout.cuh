// Where the cluster's kernels keep a model in shared memory, which models fit, how the model and
// batch come in, the launch. Block b owns rows [b R, b R + R) of each hidden layer (R = out / 16).
#pragma once

#include <algorithm>
#include <string>
#include <utility>

#include "16_persistent_step/launch.cuh"

namespace mnist::cluster_model {

using namespace persistent_step;  // chapter 16's tile, copies, barrier and schedule
using smem_tiling::kPad;

constexpr int kClusterBlocks = 16;  // the largest cluster the H100 runs (a non-portable size)
constexpr int kOnChipRows = 32;     // batch rows in shared memory: two mma tiles of M
constexpr int kOwnRowsMax = 16;     // a hidden layer's rows per block: widths up to 256
constexpr int kClassesPadded = 16;  // the output layer's rows, zeros past kClasses: one mma K step
constexpr int kDzStride = kClassesPadded + kPad;  // a dZ row: up to 16 columns, and the pad
constexpr int kOnChipSmemLimit = 224 * 1024;      // the H100's 227 KiB a block, less 3 KiB

__host__ __device__ inline int round_up(int x, int to) {
  return (x + to - 1) / to * to;
}

// Where each buffer lies in a block's dynamic shared memory, in bytes: the kernel's parameter.
struct ModelLayout {
  int layers;
  int in[kMaxLayers], out[kMaxLayers];
  int own_rows[kMaxLayers];  // R of each hidden layer, kClasses for the output layer
  int partial_cols;          // columns of a partial product's slot: the largest R of layers 0..L-3
  int weight16[kMaxLayers];  // fp16 rows: 16 (zeros past R; layer 0: R up to 8s), kClassesPadded
  int weight32[kMaxLayers];  // fp32 master rows of layer l >= 1
  int bias[kMaxLayers];      // own biases (kClassesPadded floats, zeros past R or kClasses)
  int input[kMaxLayers];     // X of layer l, whole (l = 0: the batch): kOnChipRows x (in + kPad)
  int dz[kMaxLayers];        // dZ, own columns (output: all): kOnChipRows x kDzStride halves
  int logits;                // kOnChipRows x kClasses floats
  int partial[2];            // by layer parity: kClusterBlocks x kOnChipRows x partial_cols floats
  int grad;                  // kOnChipRows x kClasses halves: the softmax's dZ, rows unpadded
  int bytes;

  // The offset of n more bytes at the end, 16-byte aligned (ldmatrix, cp.async).
  int take(int n) { return std::exchange(bytes, bytes + round_up(n, 16)); }
};

// The layout for the model of `sizes`; bytes > kOnChipSmemLimit where it does not fit.
inline ModelLayout model_layout(const LayerSizes& sizes) {
  ModelLayout s{};
  s.layers = static_cast<int>(sizes.size()) - 1;
  for (int l = 0; l < s.layers; ++l) {
    s.in[l] = sizes[l], s.out[l] = sizes[l + 1];
    const bool hidden = l + 1 < s.layers;
    s.own_rows[l] = hidden ? s.out[l] / kClusterBlocks : kClasses;
    const int rows16 = !hidden ? kClassesPadded : l == 0 ? round_up(s.own_rows[l], 8) : 16;
    s.weight16[l] = s.take(rows16 * (s.in[l] + kPad) * 2);
    if (l > 0) s.weight32[l] = s.take(s.own_rows[l] * s.in[l] * 4);
    s.bias[l] = s.take(kClassesPadded * 4);
    s.input[l] = s.take(kOnChipRows * (s.in[l] + kPad) * 2);
    s.dz[l] = s.take(kOnChipRows * kDzStride * 2);
    if (l + 2 < s.layers) s.partial_cols = std::max(s.partial_cols, s.own_rows[l]);
  }
  s.logits = s.take(kOnChipRows * kClasses * 4);
  for (int& p : s.partial) p = s.take(kClusterBlocks * kOnChipRows * s.partial_cols * 4);
  s.grad = s.take(kOnChipRows * kClasses * 2);
  return s;
}

// Why the cluster's kernel does not take a model of `sizes` at `batch`, or empty.
inline std::string model_refusal(const LayerSizes& sizes, int batch) {
  const int layers = static_cast<int>(sizes.size()) - 1;
  if (batch > kOnChipRows) return "batches up to " + std::to_string(kOnChipRows);
  if (layers < 3 || layers > kMaxLayers) return "3 to " + std::to_string(kMaxLayers) + " layers";
  for (int l = 1; l < layers; ++l) {
    if (sizes[l] % (2 * kClusterBlocks) != 0 || sizes[l] > kClusterBlocks * kOwnRowsMax) {
      return "hidden widths that are multiples of " + std::to_string(2 * kClusterBlocks) +
             " up to " + std::to_string(kClusterBlocks * kOwnRowsMax);
    }
  }
  if (model_layout(sizes).bytes > kOnChipSmemLimit) {
    return "models whose weights, activations and batch fit in " +
           std::to_string(kOnChipSmemLimit / 1024) + " KiB of shared memory a block";
  }
  return "";
}

// Launches kKernel on one cluster for `steps` steps where this GPU runs a cluster of 16 blocks of
// it with the most shared memory a block may take (asked once); false where it does not.
template <auto kKernel, class Layout>
bool launch_cluster(const StepBuffers& buffers, const Layout& layout, int steps,
                    float learning_rate, cudaStream_t stream) {
  static const bool runs = [] {
    CUDA_CHECK(cudaFuncSetAttribute(kKernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
    allow_shared_memory(kKernel, kOnChipSmemLimit);
    const ClusterLaunch launch(kClusterBlocks, kClusterBlocks, kThreads, kOnChipSmemLimit, nullptr);
    int clusters = 0;
    const cudaError_t asked = cudaOccupancyMaxActiveClusters(&clusters, kKernel, &launch.config);
    if (asked != cudaSuccess) (void)cudaGetLastError();  // a GPU without clusters: not ours to keep
    return asked == cudaSuccess && clusters >= 1;
  }();
  if (!runs) return false;
  const ClusterLaunch launch(kClusterBlocks, kClusterBlocks, kThreads, layout.bytes, stream);
  CUDA_CHECK(
      cudaLaunchKernelEx(&launch.config, kKernel, model_of(buffers), layout, steps, learning_rate));
  return true;
}

// Step `step`'s batch into `rows`, zeros past its last row: one cp.async group, not waited for.
__device__ inline void load_batch_async(const Model& m, int step, __half* rows) {
  constexpr int kPieces = kPixels * 2 / 16, kPerRow = kThreads / kOnChipRows;
  static_assert(kThreads % kOnChipRows == 0, "whole threads a row");
  const int r = threadIdx.x / kPerRow;
  const bool inside = r < min(m.batch, m.train_count - step * m.batch);
  const __half* image = m.train_images;
  if (inside) image += size_t(m.order[size_t(step) * m.batch + r]) * kPixels;
  for (int p = threadIdx.x % kPerRow; p < kPieces; p += kPerRow) {
    cp_async::cp_async_16(rows + r * (kPixels + kPad) + p * 8, image + p * 8, inside ? 16 : 0);
  }
  cp_async::cp_async_commit();
}

// The block's parameters into shared memory at the launch's start (to_shared), or back at its end
// (the output layer from block 0); the first layer's fp32 masters stay in global memory.
__device__ inline void move_parameters(const Model& m, const ModelLayout& s, uint8_t* smem, int me,
                                       bool to_shared) {
  const auto move = [&](auto& shared, auto& global) {  // in or out, as to_shared says
    (to_shared ? shared : global) = to_shared ? global : shared;
  };
  for (int l = 0; l < s.layers; ++l) {
    const LayerBuffers& y = m.layer[l].buffers;
    const bool hidden = l + 1 < s.layers;
    if (!hidden && !to_shared && me != 0) continue;
    const int rows = s.own_rows[l], row0 = hidden ? me * rows : 0, in = s.in[l];
    __half* w16 = reinterpret_cast<__half*>(smem + s.weight16[l]);
    float* w32 = reinterpret_cast<float*>(smem + s.weight32[l]);
    float* bias = reinterpret_cast<float*>(smem + s.bias[l]);
    for (int i = threadIdx.x; i < rows * in; i += kThreads) {  // element i: row i / in
      move(w16[i + i / in * kPad], y.weight_operand[size_t(row0) * in + i]);
      if (l > 0) move(w32[i], y.weights[size_t(row0) * in + i]);
    }
    for (int r = threadIdx.x; r < rows; r += kThreads) move(bias[r], y.bias[row0 + r]);
  }
}

}  // namespace mnist::cluster_model
