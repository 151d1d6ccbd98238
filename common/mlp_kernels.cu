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
                              const int* step, int batch, int row_width, __half* x,
                              uint8_t* batch_labels) {
  const int r = blockIdx.x;
  const size_t source = static_cast<size_t>(order[*step * batch + r]);
  for (int p = threadIdx.x; p < row_width; p += blockDim.x) {
    x[static_cast<size_t>(r) * row_width + p] = images[source * row_width + p];
  }
  if (threadIdx.x == 0) batch_labels[r] = labels[source];
}

__global__ void softmax_cross_entropy_kernel(const float* z, const uint8_t* labels, int rows,
                                             LossOutputs out) {
  __shared__ float loss_partial[kThreads];
  __shared__ int correct_partial[kThreads];
  float loss = 0.0f;
  int correct = 0;
  for (int r = threadIdx.x; r < rows; r += blockDim.x) {
    const float* logits = z + r * kClasses;
    int best = 0;
    for (int c = 1; c < kClasses; ++c) {
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
    if (out.step_losses) out.step_losses[(*out.step)++] = loss_partial[0] / rows;
    if (out.loss_sum) *out.loss_sum += loss_partial[0];
    if (out.correct) *out.correct += correct_partial[0];
  }
}

__global__ void bias_sgd_kernel(const BiasUpdate* updates, int layers, int total_cols, int rows,
                                float learning_rate) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= total_cols) return;
  int l = 0;
  while (l < layers - 1 && j >= updates[l].cols) j -= updates[l++].cols;
  const BiasUpdate u = updates[l];
  float sum = 0.0f;
  for (int r = 0; r < rows; ++r) sum += __half2float(u.grad[static_cast<size_t>(r) * u.cols + j]);
  u.bias[j] -= learning_rate * sum;
}

__global__ void to_half_kernel(const float* x, size_t count, __half* out) {
  const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < count) out[i] = __float2half_rn(x[i]);
}

}  // namespace

void gather_batch(const __half* images, const uint8_t* labels, const int* order, const int* step,
                  int batch, int rows, int row_width, __half* x, uint8_t* batch_labels,
                  cudaStream_t stream) {
  gather_kernel<<<rows, kThreads, 0, stream>>>(images, labels, order, step, batch, row_width, x,
                                               batch_labels);
  CUDA_CHECK_LAUNCH();
}

void softmax_cross_entropy(const float* logits, const uint8_t* labels, int rows,
                           const LossOutputs& out, cudaStream_t stream) {
  softmax_cross_entropy_kernel<<<1, kThreads, 0, stream>>>(logits, labels, rows, out);
  CUDA_CHECK_LAUNCH();
}

void bias_sgd(const BiasUpdate* updates, int layers, int total_cols, int rows, float learning_rate,
              cudaStream_t stream) {
  bias_sgd_kernel<<<blocks_for(total_cols), kThreads, 0, stream>>>(updates, layers, total_cols,
                                                                   rows, learning_rate);
  CUDA_CHECK_LAUNCH();
}

void to_half(const float* x, size_t count, __half* out, cudaStream_t stream) {
  to_half_kernel<<<blocks_for(count), kThreads, 0, stream>>>(x, count, out);
  CUDA_CHECK_LAUNCH();
}

}  // namespace mnist
