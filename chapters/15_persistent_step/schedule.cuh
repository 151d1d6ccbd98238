// What each phase of a persistent training step computes: the model as the kernel reads it, the
// products of each phase with their buffers and epilogues, and which layers a backward phase
// updates. Host and device code alike, so that a CPU test (tests/test_persistent_schedule.cu)
// checks the schedule against the order of the step-by-step trainer without a GPU.
#pragma once

#include <cstdint>

#include "15_persistent_step/grid_barrier.cuh"
#include "15_persistent_step/tile.cuh"
#include "gemm_interface.cuh"
#include "step_interface.cuh"

namespace mnist::persistent_step {

// The rule: the models and batches the persistent step takes (steps_refusal in steps.cuh); the
// trainer runs every other one a step at a time on chapter 09's kernels. Where the persistent step
// stops paying, measured on the H100 against chapter 09's graph (tools/ab_train.sh, 2026-11-24):
//   - the batch times the widest hidden layer, in the 32 x 32 tiles of its forward and
//     backward-data phases: up to 128 tiles the persistent step took 0.69-0.98 of chapter 09's
//     step time (batch 256 x hidden 512, 128 x 1024), from 144 on 1.02-1.29 (192 x 768, 96 x 1536,
//     256 x 1024; docs/results/session23/call1 and call2, 25 shapes from batch 32 to 256, hidden
//     512 to 3072). The grid has one block per SM, 132 on the H100: a phase of more tiles runs in
//     two rounds, and its 32 x 32 mma.sync tiles lose to chapter 09's wgmma;
//   - the widest hidden layer: up to 1024 the step took 0.77-0.93 of chapter 09's at batch 32, 64
//     and 96, at 1536 1.05-1.06 and at 2048 1.13 (docs/results/session24/call6), where the weight
//     gradients, width x width tiles whatever the batch, outweigh the launches the persistent step
//     saves: chapter 09 runs those on its weight update at a batch of at most 64.
// (Session 23's bound, hidden up to 2048, was measured before chapter 09's weight update: at batch
// 32, hidden 2048 the step then took 0.97 of chapter 09's, and now 1.13.)
constexpr int kMaxLayers = 8;  // the kernel's parameter holds this many
constexpr int kMaxWidth = 1024;
constexpr int kMaxActivationTiles = 132;  // 32 x 32 tiles of batch x widest: one per block
constexpr int kMaxBatch = 256;

// A layer as the kernel reads it: the trainer's buffers and whether their rows allow 16-byte
// copies.
struct Layer {
  LayerBuffers buffers;
  bool in_vectorized;   // rows of `in` halves: its input X and its weights
  bool out_vectorized;  // rows of `out` halves: its gradient dZ
};

// The trainer's StepBuffers as one kernel parameter: the layers in an array of fixed size.
struct Model {
  int layers;
  Layer layer[kMaxLayers];
  const __half* train_images;
  const uint8_t* train_labels;
  const int* order;
  int* step_index;
  int batch, train_count;
  float* logits;
  float* step_losses;
  float* loss_partials;  // a loss sum per row tile of the output layer, summed by block 0
  unsigned* barrier;     // grid_barrier's count (both in StepData::scratch)
};

// Layer l's input X: the batch (the training images, gathered through the order) for layer 0,
// the output of layer l - 1 above it.
__host__ __device__ inline const __half* input_of(const Model& m, int l) {
  return l == 0 ? m.train_images : m.layer[l - 1].buffers.output;
}

// The forward product of layer l: X W^T + bias, through ReLU below the output layer; the output
// layer's result is the logits.
__host__ __device__ inline Product forward_product(const Model& m, int l, int rows,
                                                   const int* batch_order) {
  const LayerBuffers& y = m.layer[l].buffers;
  Product x;
  x.p.m = rows;
  x.p.n = y.out;
  x.p.k = y.in;
  x.p.a = input_of(m, l);
  x.p.op_a = kForward.a;
  x.p.b = y.weight_operand;
  x.p.op_b = kForward.b;
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

// The backward-data product of layer l >= 1: dZ W, masked by ReLU' of its input; the result is dZ
// of layer l - 1.
__host__ __device__ inline Product data_product(const Model& m, int l, int rows) {
  const LayerBuffers& y = m.layer[l].buffers;
  Product x;
  x.p.m = rows;
  x.p.n = y.in;
  x.p.k = y.out;
  x.p.a = y.grad;
  x.p.op_a = kBackwardData.a;
  x.p.b = y.weight_operand;
  x.p.op_b = kBackwardData.b;
  x.p.epilogue.kind = EpilogueKind::kReluGrad;
  x.p.epilogue.activation = input_of(m, l);
  x.p.epilogue.out = m.layer[l - 1].buffers.grad;
  x.a_vectorized = m.layer[l].out_vectorized;
  x.b_vectorized = m.layer[l].in_vectorized;
  return x;
}

// The backward-weight product of layer l, dZ^T X, through the SGD epilogue: the fp32 master weights
// and their fp16 copy.
__host__ __device__ inline Product weight_product(const Model& m, int l, int rows,
                                                  const int* batch_order, float learning_rate) {
  const LayerBuffers& y = m.layer[l].buffers;
  Product x;
  x.p.m = y.out;
  x.p.n = y.in;
  x.p.k = rows;
  x.p.a = y.grad;
  x.p.op_a = kBackwardWeight.a;
  x.p.b = input_of(m, l);
  x.p.op_b = kBackwardWeight.b;
  x.p.epilogue.kind = EpilogueKind::kSgd;
  x.p.epilogue.master = y.weights;
  x.p.epilogue.out = y.weight_operand;
  x.p.epilogue.learning_rate = learning_rate;
  x.a_vectorized = m.layer[l].out_vectorized;
  x.b_vectorized = m.layer[l].in_vectorized;
  x.b_gathered = l == 0 ? batch_order : nullptr;
  return x;
}

// Backward phase j of a model of `layers` layers, j = 0 .. layers - 1, after the loss: the
// backward-data product of layer data_layer (where that is 1 or more), then the SGD, weights and
// bias, of sgd_count layers. A layer's SGD overwrites the fp16 weights its backward-data product
// reads, so it comes one phase after it: phase j updates layer layers - j, whose backward-data
// product ran in phase j - 1. Layer 0 has no backward-data product; its dZ is complete after phase
// layers - 2, so the last phase updates it together with layer 1.
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
