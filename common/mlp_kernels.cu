#include "cuda_check.cuh"
#include "dataset.hpp"
#include "mlp_device.cuh"
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
  const LossSums sums = softmax_cross_entropy_block<kThreads>(
      z, [&](int r) { return int(labels[r]); }, rows, rows, out.grad);
  if (threadIdx.x == 0) {
    if (out.step_losses) out.step_losses[(*out.step)++] = sums.loss / rows;
    if (out.loss_sum) *out.loss_sum += sums.loss;
    if (out.correct) *out.correct += sums.correct;
  }
}

__global__ void bias_sgd_kernel(const BiasUpdate* updates, int layers, int total_cols, int rows,
                                float learning_rate) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= total_cols) return;
  int l = 0;
  while (l < layers - 1 && j >= updates[l].cols) j -= updates[l++].cols;
  const BiasUpdate u = updates[l];
  bias_sgd_column(u.grad, u.bias, u.cols, j, rows, learning_rate);
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
