#include "cuda_check.cuh"
#include "dataset.hpp"
#include "mlp_kernels.cuh"

namespace mnist {
namespace {

constexpr int kThreads = 256;

int blocks_for(size_t count) {
  return static_cast<int>((count + kThreads - 1) / kThreads);
}

__global__ void gather_kernel(const __half* images, const uint8_t* labels, const int* order,
                              int first, int rows, int row_width, __half* x,
                              uint8_t* batch_labels) {
  const int r = blockIdx.x;
  const size_t source = static_cast<size_t>(order[first + r]);
  for (int p = threadIdx.x; p < row_width; p += blockDim.x) {
    x[static_cast<size_t>(r) * row_width + p] = images[source * row_width + p];
  }
  if (threadIdx.x == 0) batch_labels[r] = labels[source];
}

__global__ void bias_relu_kernel(const float* z, const float* bias, int rows, int cols,
                                 __half* out) {
  const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= static_cast<size_t>(rows) * cols) return;
  out[i] = __float2half_rn(fmaxf(z[i] + bias[i % cols], 0.0f));
}

__global__ void softmax_cross_entropy_kernel(const float* z, const float* bias,
                                             const uint8_t* labels, int rows, LossOutputs out) {
  __shared__ float loss_partial[kThreads];
  __shared__ int correct_partial[kThreads];
  float loss = 0.0f;
  int correct = 0;
  for (int r = threadIdx.x; r < rows; r += blockDim.x) {
    float logits[kClasses];
    int best = 0;
    for (int c = 0; c < kClasses; ++c) {
      logits[c] = z[r * kClasses + c] + bias[c];
      if (logits[c] > logits[best]) best = c;  // first maximum, like std::max_element
    }
    float sum = 0.0f;
    for (int c = 0; c < kClasses; ++c) sum += expf(logits[c] - logits[best]);
    const int label = labels[r];
    loss += logf(sum) - (logits[label] - logits[best]);
    correct += best == label;
    if (out.grad) {
      for (int c = 0; c < kClasses; ++c) {
        const float p = expf(logits[c] - logits[best]) / sum;
        out.grad[r * kClasses + c] = __float2half_rn((p - (c == label ? 1.0f : 0.0f)) / rows);
      }
    }
  }
  loss_partial[threadIdx.x] = loss;
  correct_partial[threadIdx.x] = correct;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {  // fixed-order tree: deterministic
    if (threadIdx.x < stride) {
      loss_partial[threadIdx.x] += loss_partial[threadIdx.x + stride];
      correct_partial[threadIdx.x] += correct_partial[threadIdx.x + stride];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    if (out.mean_loss) *out.mean_loss = loss_partial[0] / rows;
    if (out.loss_sum) *out.loss_sum += loss_partial[0];
    if (out.correct) *out.correct += correct_partial[0];
  }
}

__global__ void relu_backward_kernel(const float* grad, const __half* activation, size_t count,
                                     __half* out) {
  const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= count) return;
  out[i] = __float2half_rn(__half2float(activation[i]) > 0.0f ? grad[i] : 0.0f);
}

__global__ void column_sums_kernel(const __half* x, int rows, int cols, float* sums) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= cols) return;
  float sum = 0.0f;
  for (int r = 0; r < rows; ++r) sum += __half2float(x[static_cast<size_t>(r) * cols + j]);
  sums[j] = sum;
}

__global__ void sgd_kernel(float* master, const float* grad, size_t count, float learning_rate,
                           __half* operand) {
  const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= count) return;
  const float updated = master[i] - learning_rate * grad[i];
  master[i] = updated;
  if (operand) operand[i] = __float2half_rn(updated);
}

__global__ void to_half_kernel(const float* x, size_t count, __half* out) {
  const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < count) out[i] = __float2half_rn(x[i]);
}

}  // namespace

void gather_batch(const __half* images, const uint8_t* labels, const int* order, int first,
                  int rows, int row_width, __half* x, uint8_t* batch_labels, cudaStream_t stream) {
  gather_kernel<<<rows, kThreads, 0, stream>>>(images, labels, order, first, rows, row_width, x,
                                               batch_labels);
  CUDA_CHECK_LAUNCH();
}

void bias_relu_to_half(const float* z, const float* bias, int rows, int cols, __half* out,
                       cudaStream_t stream) {
  bias_relu_kernel<<<blocks_for(static_cast<size_t>(rows) * cols), kThreads, 0, stream>>>(
      z, bias, rows, cols, out);
  CUDA_CHECK_LAUNCH();
}

void softmax_cross_entropy(const float* z, const float* bias, const uint8_t* labels, int rows,
                           const LossOutputs& out, cudaStream_t stream) {
  softmax_cross_entropy_kernel<<<1, kThreads, 0, stream>>>(z, bias, labels, rows, out);
  CUDA_CHECK_LAUNCH();
}

void relu_backward_to_half(const float* grad, const __half* activation, size_t count, __half* out,
                           cudaStream_t stream) {
  relu_backward_kernel<<<blocks_for(count), kThreads, 0, stream>>>(grad, activation, count, out);
  CUDA_CHECK_LAUNCH();
}

void column_sums(const __half* x, int rows, int cols, float* sums, cudaStream_t stream) {
  column_sums_kernel<<<blocks_for(cols), kThreads, 0, stream>>>(x, rows, cols, sums);
  CUDA_CHECK_LAUNCH();
}

void sgd_update(float* master, const float* grad, size_t count, float learning_rate,
                __half* operand, cudaStream_t stream) {
  sgd_kernel<<<blocks_for(count), kThreads, 0, stream>>>(master, grad, count, learning_rate,
                                                         operand);
  CUDA_CHECK_LAUNCH();
}

void to_half(const float* x, size_t count, __half* out, cudaStream_t stream) {
  to_half_kernel<<<blocks_for(count), kThreads, 0, stream>>>(x, count, out);
  CUDA_CHECK_LAUNCH();
}

}  // namespace mnist
