// What each phase of a persistent training step computes: the model as the kernel reads it, the
// products of each phase with their buffers and epilogues, and which layers a backward phase
// updates. Host and device code alike, so that a CPU test (tests/test_persistent_schedule.cu)
// checks the schedule against the order of the step-by-step trainer without a GPU.
#pragma once

#include <cstdint>

#include "15_small_tile/tile.cuh"
#include "dataset.hpp"
#include "gemm_interface.cuh"
#include "step_interface.cuh"

namespace mnist::persistent_step {

using namespace small_tile;  // chapter 15's tile: its constants, copies and multiply_tile

// The rule (steps_refusal in launch.cuh), where chapter 17's kernel beat chapter 14's step on the
// H100: a grid of one block per SM (132) runs a phase of more tiles in two rounds, and past hidden
// 1024 the weight gradients outweigh the launches saved.
constexpr int kMaxLayers = 8;  // the kernel's parameter holds this many
constexpr int kMaxWidth = 1024;
constexpr int kMaxActivationTiles = 132;  // 32 x 32 tiles of batch x widest: one per block
constexpr int kMaxStepBatch = 256;

// A layer as the kernel reads it: its buffers and whether their rows allow 16-byte copies.
struct Layer {
  LayerBuffers buffers;
  bool in_vectorized;   // rows of `in` halves: its input X and its weights
  bool out_vectorized;  // rows of `out` halves: its gradient dZ
};

// The trainer's StepBuffers as one kernel parameter, the layers in an array of fixed size.
struct Model : StepData {
  int layers;
  Layer layer[kMaxLayers];
  unsigned* barrier;  // grid_barrier's count
};

// Layer l's input X: the batch (the images, through the order) for layer 0, else layer l - 1's Y.
__host__ __device__ inline const __half* input_of(const Model& m, int l) {
  return l == 0 ? m.train_images : m.layer[l - 1].buffers.output;
}

// A product of the step. The batch (A of the first layer's forward product, B of its weight
// gradient) is read straight from the training images: where not null, its row r is gathered[r].
struct StepProduct : Product {
  const int* a_gathered = nullptr;
  const int* b_gathered = nullptr;
};

// Chapter 15's copies, or the batch's rows from the images; chapter 15's load_stage calls it.
template <class Tile, bool kA>
__device__ __forceinline__ void load_operand_async(const StepProduct& x, int mn0, int k0,
                                                   __half* tile) {
  static_assert(kPixels % smem_tiling::kVector == 0, "image rows of whole 16-byte pieces");
  const int* const gathered = kA ? x.a_gathered : x.b_gathered;
  if (!gathered) return small_tile::load_operand_async<Tile, kA>(x, mn0, k0, tile);
  const __half* const images = kA ? x.p.a : x.p.b;
  smem_tiling::for_each_piece<Tile, kThreads>(
      kA ? x.p.m : x.p.n, x.p.k, mn0, k0, tile,
      [&](int row, int col, int rows, int cols, __half* dst) {
        const bool inside = row < rows && col < cols;
        cp_async::cp_async_16(dst, inside ? images + size_t(gathered[row]) * cols + col : images,
                              inside ? 16 : 0);
      });
}

// The forward product of layer l: X W^T + bias, through ReLU below the output layer (the logits).
__host__ __device__ inline StepProduct forward_product(const Model& m, int l, int rows,
                                                       const int* batch_order) {
  const LayerBuffers& y = m.layer[l].buffers;
  StepProduct x = {{{rows, y.out, y.in, input_of(m, l), kForward.a, y.weight_operand, kForward.b}}};
  x.p.epilogue.bias = y.bias;
  if (l + 1 < m.layers) {
    x.p.epilogue.kind = EpilogueKind::kBiasRelu;
    x.p.epilogue.out = y.output;
  } else {
    x.p.epilogue.kind = EpilogueKind::kBias;
    x.p.c = m.logits;
  }
  x.a_vectorized = x.b_vectorized = m.layer[l].in_vectorized;
  x.a_gathered = l == 0 ? batch_order : nullptr;
  return x;
}

// The backward-data product of layer l >= 1: dZ W, masked by ReLU' of its input: dZ of layer l - 1.
__host__ __device__ inline StepProduct data_product(const Model& m, int l, int rows) {
  const LayerBuffers& y = m.layer[l].buffers;
  StepProduct x = {
      {{rows, y.in, y.out, y.grad, kBackwardData.a, y.weight_operand, kBackwardData.b}}};
  x.p.epilogue.kind = EpilogueKind::kReluGrad;
  x.p.epilogue.activation = input_of(m, l);
  x.p.epilogue.out = m.layer[l - 1].buffers.grad;
  x.a_vectorized = m.layer[l].out_vectorized;
  x.b_vectorized = m.layer[l].in_vectorized;
  return x;
}

// The backward-weight product of layer l, dZ^T X, through the SGD epilogue.
__host__ __device__ inline StepProduct weight_product(const Model& m, int l, int rows,
                                                      const int* batch_order, float learning_rate) {
  const LayerBuffers& y = m.layer[l].buffers;
  StepProduct x = {
      {{y.out, y.in, rows, y.grad, kBackwardWeight.a, input_of(m, l), kBackwardWeight.b}}};
  x.p.epilogue.kind = EpilogueKind::kSgd;
  x.p.epilogue.master = y.weights;
  x.p.epilogue.out = y.weight_operand;
  x.p.epilogue.learning_rate = learning_rate;
  x.a_vectorized = m.layer[l].out_vectorized;
  x.b_vectorized = m.layer[l].in_vectorized;
  x.b_gathered = l == 0 ? batch_order : nullptr;
  return x;
}

// Backward phase j = 0 .. layers - 1: the backward-data product of layer data_layer (if >= 1),
// then the SGD, weights and bias, of sgd_count layers. A layer's SGD overwrites the fp16 weights
// its backward-data product reads, so it comes a phase later: phase j updates layer layers - j,
// and the last phase layer 0 too (which has no backward-data product).
struct BackwardPhase {
  int data_layer;
  int sgd_layers[2];
  int sgd_count;
};

__host__ __device__ inline BackwardPhase backward_phase_of(int layers, int j) {
  BackwardPhase phase = {layers - 1 - j, {0, 0}, 0};
  if (j >= 1) phase.sgd_layers[phase.sgd_count++] = layers - j;
  if (phase.data_layer == 0) phase.sgd_layers[phase.sgd_count++] = 0;
  return phase;
}

}  // namespace mnist::persistent_step
