// Everything an MLP step does besides the GEMMs and their epilogues (common/epilogue.cuh), the same
// in every chapter; each launcher checks its launch.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace mnist {

// x[r] = images[order[*step * batch + r]], labels likewise, for r < rows: the rows of step *step.
// The step index lives on the device so that a step recorded once in a CUDA graph trains on the
// next batch at every replay.
void gather_batch(const __half* images, const uint8_t* labels, const int* order, const int* step,
                  int batch, int rows, int row_width, __half* x, uint8_t* batch_labels,
                  cudaStream_t stream);

// Softmax cross-entropy of the logits (rows x kClasses). Every output is optional:
//   grad:         fp16((softmax - one_hot) / rows), the gradient of the mean loss
//   step_losses:  step_losses[*step] = the mean loss of these rows; then *step += 1 (the loss is
//                 the last thing a step does with its index)
//   loss_sum, correct:  added to (for evaluation over several chunks)
// One block does all rows in a fixed order, so the result is deterministic.
struct LossOutputs {
  __half* grad = nullptr;
  float* step_losses = nullptr;
  int* step = nullptr;
  double* loss_sum = nullptr;
  int* correct = nullptr;
};
void softmax_cross_entropy(const float* logits, const uint8_t* labels, int rows,
                           const LossOutputs& out, cudaStream_t stream);

// One SGD step of every layer's bias: bias -= learning_rate * (column sums of the layer's dZ over
// `rows` rows, in fp32, in row order). One launch for all layers; `layers` entries of `updates`.
struct BiasUpdate {
  const __half* grad;  // dZ, rows x cols
  float* bias;         // cols
  int cols;
};
void bias_sgd(const BiasUpdate* updates, int layers, int total_cols, int rows, float learning_rate,
              cudaStream_t stream);

void to_half(const float* x, size_t count, __half* out, cudaStream_t stream);

}  // namespace mnist
