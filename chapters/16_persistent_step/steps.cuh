// The persistent training kernel: every step of a train() call in one cooperative launch (the
// scheme in gemm.cuh, the barrier in grid_barrier.cuh, the rule and the launch in launch.cuh).
#pragma once

#include "16_persistent_step/grid_barrier.cuh"
#include "16_persistent_step/launch.cuh"
#include "16_persistent_step/schedule.cuh"
#include "mlp_device.cuh"
#include "step_interface.cuh"

namespace mnist::persistent_step {

// The loss phase, block 0 alone: the logits' softmax cross-entropy, dZ and the step's mean loss.
__device__ inline void loss(const Model& m, int s, int rows, const int* batch_order) {
  if (blockIdx.x != 0) return;
  const uint8_t* const labels = m.train_labels;
  const LossSums sums = softmax_cross_entropy_block<kThreads>(
      m.logits, [=](int r) { return int(labels[batch_order[r]]); }, rows, rows,
      m.layer[m.layers - 1].buffers.grad);
  if (threadIdx.x == 0) m.step_losses[s] = sums.loss / rows;
}

// bias -= learning_rate * (column sums of dZ) for the layers a backward phase updates: a thread a
// column, summed as every chapter's bias kernel does (bias_sgd_column), so the bits are the same.
__device__ inline void bias_sgd(const Model& m, const BackwardPhase& phase, int rows,
                                float learning_rate) {
  for (int i = 0; i < phase.sgd_count; ++i) {
    const LayerBuffers& y = m.layer[phase.sgd_layers[i]].buffers;
    for (int col = blockIdx.x * kThreads + threadIdx.x; col < y.out; col += gridDim.x * kThreads) {
      bias_sgd_column(y.grad, y.bias, y.out, col, rows, learning_rate);
    }
  }
}

// Backward phase j (backward_phase_of): the backward-data product, weight gradients, biases.
__device__ inline void backward_phase(const Model& m, int j, int rows, const int* batch_order,
                                      float learning_rate, uint8_t* smem) {
  const BackwardPhase phase = backward_phase_of(m.layers, j);
  if (phase.data_layer >= 1) {
    multiply<kBackwardData.a, kBackwardData.b, EpilogueKind::kReluGrad>(
        data_product(m, phase.data_layer, rows), smem);
  }
  for (int i = 0; i < phase.sgd_count; ++i) {
    multiply<kBackwardWeight.a, kBackwardWeight.b, EpilogueKind::kSgd>(
        weight_product(m, phase.sgd_layers[i], rows, batch_order, learning_rate), smem);
  }
  bias_sgd(m, phase, rows, learning_rate);
}

// Steps *step_index, ..., *step_index + steps - 1 of the epoch. Per step, each phase ends at a grid
// barrier, since the next reads what every block wrote in it:
//   forward, layer 0 .. L-2   Y = ReLU(X W^T + b)
//   forward, layer L-1        the logits
//   loss                      the softmax cross-entropy and dZ of the output layer (block 0)
//   backward, phase 0 .. L-1  dX of layer L-1-j, SGD of layer L-j (and of layer 0 in the last)
__global__ void __launch_bounds__(kThreads)
    persistent_training_kernel(const __grid_constant__ Model m, int steps, float learning_rate) {
  extern __shared__ __align__(16) uint8_t smem[];
  // Read by every block before its first barrier, written by block 0 after its last.
  const int first = *m.step_index;
  for (int s = first; s < first + steps; ++s) {
    const int rows = min(m.batch, m.train_count - s * m.batch);
    const int* const batch_order = m.order + size_t(s) * m.batch;
    for (int l = 0; l < m.layers; ++l) {
      const StepProduct x = forward_product(m, l, rows, batch_order);
      if (l < m.layers - 1) {
        multiply<kForward.a, kForward.b, EpilogueKind::kBiasRelu>(x, smem);
      } else {
        multiply<kForward.a, kForward.b, EpilogueKind::kBias>(x, smem);
      }
      grid_barrier(m.barrier);  // the layer's output, whole, before the next phase
    }
    loss(m, s, rows, batch_order);
    grid_barrier(m.barrier);  // the output layer's dZ, before the backward phases
    for (int j = 0; j < m.layers; ++j) {
      backward_phase(m, j, rows, batch_order, learning_rate, smem);
      grid_barrier(m.barrier);  // dZ and the updated weights, before the next phase or step
    }
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) *m.step_index = first + steps;
}

// The trainer's scratch (StepData::scratch) holds the grid barrier's word: one a row is plenty.
constexpr int kScratchWordsPerRow = 1;

inline void train_steps(const StepBuffers& buffers, int steps, float learning_rate,
                        cudaStream_t stream) {
  launch_steps<persistent_training_kernel, kTileSmemBytes>(buffers, steps, learning_rate, stream);
}

}  // namespace mnist::persistent_step
