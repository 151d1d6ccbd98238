// What each phase of a persistent training step computes: the model as the kernel reads it, the
// products of each phase with their buffers and epilogues, and which layers a backward phase
// updates. Host and device code alike, so that a CPU test (tests/test_persistent_schedule.cu)
// checks the schedule against the order of the step-by-step trainer without a GPU.
#pragma once

#include <cstdint>

#include "16_persistent_step/tile.cuh"
#include "gemm_interface.cuh"
#include "step_interface.cuh"

namespace mnist::persistent_step {

// The rule (steps_refusal in launch.cuh): the models the persistent step takes, where its kernel
// on 32 x 32 tiles (chapter 17's) beat chapter 14's step on the H100. The grid has one block per
// SM, 132 on the H100: a phase of more 32 x 32 tiles runs in two rounds; and past hidden 1024 the
// weight gradients, width x width whatever the batch, outweigh the launches the persistent step
// saves.
constexpr int kMaxLayers = 8;  // the kernel's parameter holds this many
constexpr int kMaxWidth = 1024;
constexpr int kMaxActivationTiles = 132;  // 32 x 32 tiles of batch x widest: one per block
constexpr int kMaxStepBatch = 256;

// A layer as the kernel reads it: the trainer's buffers and whether their rows allow 16-byte
// copies.
struct Layer {
  LayerBuffers buffers;
  bool in_vectorized;   // rows of `in` halves: its input X and its weights
  bool out_vectorized;  // rows of `out` halves: its gradient dZ
};

// The trainer's StepBuffers as one kernel parameter: the layers in an array of fixed size, and
// the scratch (StepData::scratch) starting with the barrier's word.
struct Model : StepData {
  int layers;
  Layer layer[kMaxLayers];
  unsigned* barrier;  // grid_barrier's count
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
  Product x = {{rows, y.out, y.in, input_of(m, l), kForward.a, y.weight_operand, kForward.b}};
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
  Product x = {{rows, y.in, y.out, y.grad, kBackwardData.a, y.weight_operand, kBackwardData.b}};
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
  Product x = {{y.out, y.in, rows, y.grad, kBackwardWeight.a, input_of(m, l), kBackwardWeight.b}};
  x.p.epilogue.kind = EpilogueKind::kSgd;
  x.p.epilogue.master = y.weights;
  x.p.epilogue.out = y.weight_operand;
  x.p.epilogue.learning_rate = learning_rate;
  x.a_vectorized = m.layer[l].out_vectorized;
  x.b_vectorized = m.layer[l].in_vectorized;
  x.b_gathered = l == 0 ? batch_order : nullptr;
  return x;
}

// Backward phase j = 0 .. layers - 1, after the loss: the backward-data product of layer
// data_layer (where that is 1 or more), then the SGD, weights and bias, of sgd_count layers. A
// layer's SGD overwrites the fp16 weights its backward-data product reads, so it comes a phase
// later: phase j updates layer layers - j. Layer 0 has no backward-data product, so the last phase
// updates it together with layer 1.
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
