// Everything an MLP step does besides the GEMMs. These kernels are the same in every chapter
// (chapter 06 fuses them into the GEMM); each launcher checks its launch.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace mnist {

// x[r] = images[order[first + r]], labels likewise, for r < rows.
void gather_batch(const __half* images, const uint8_t* labels, const int* order, int first,
                  int rows, int row_width, __half* x, uint8_t* batch_labels, cudaStream_t stream);

// out = fp16(max(z + bias, 0)); z is rows x cols, bias has cols entries.
void bias_relu_to_half(const float* z, const float* bias, int rows, int cols, __half* out,
                       cudaStream_t stream);

// Softmax cross-entropy of logits = z + bias (rows x kClasses). Every output is optional:
//   grad:       fp16((softmax - one_hot) / rows), the gradient of the mean loss
//   mean_loss:  the mean loss of these rows
//   loss_sum, correct:  added to (for evaluation over several chunks)
// One block does all rows in a fixed order, so the result is deterministic.
struct LossOutputs {
  __half* grad = nullptr;
  float* mean_loss = nullptr;
  double* loss_sum = nullptr;
  int* correct = nullptr;
};
void softmax_cross_entropy(const float* z, const float* bias, const uint8_t* labels, int rows,
                           const LossOutputs& out, cudaStream_t stream);

// out = fp16(grad * (activation > 0)): the gradient through ReLU.
void relu_backward_to_half(const float* grad, const __half* activation, size_t count, __half* out,
                           cudaStream_t stream);

// sums[j] = sum over rows of x[r][j], in fp32: the bias gradient.
void column_sums(const __half* x, int rows, int cols, float* sums, cudaStream_t stream);

// master -= learning_rate * grad; if operand is not null it receives fp16(master).
void sgd_update(float* master, const float* grad, size_t count, float learning_rate,
                __half* operand, cudaStream_t stream);

void to_half(const float* x, size_t count, __half* out, cudaStream_t stream);

}  // namespace mnist
