// The device code of the MLP's loss and bias update, one block or one column at a time: the
// kernels of mlp_kernels.cu are built on these, and so are the chapters that run whole training
// steps inside one kernel (chapters 16 on), so that both compute the same values the same way.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "dataset.hpp"

namespace mnist {

// What one block's softmax cross-entropy adds up over its rows: valid in thread 0.
struct LossSums {
  float loss = 0.0f;  // sum of the rows' losses
  int correct = 0;    // rows whose largest logit is their label's
};

// One row of the softmax cross-entropy, from its kClasses logits at `logits`: adds the row's loss
// to `loss` and 1 to `correct` if its largest logit is its label's; where grad is not null, writes
// fp16((softmax - one_hot) / mean_over) at grad[0 .. kClasses), the gradient of the mean loss over
// mean_over rows: the rows themselves, or the whole batch where they are only part of it.
__device__ __forceinline__ void softmax_cross_entropy_row(const float* logits, int label,
                                                          int mean_over, __half* grad, float& loss,
                                                          int& correct) {
  // The row's logits, read once into registers. Every index below is a constant once the loops
  // are unrolled; an index known only at run time (logit[best], logit[label]) would send the
  // thread back to memory for each use, one wait after another.
  float logit[kClasses];
#pragma unroll
  for (int c = 0; c < kClasses; ++c) logit[c] = logits[c];
  int best = 0;  // the first maximum, like std::max_element
  float top = logit[0];
#pragma unroll
  for (int c = 1; c < kClasses; ++c) {
    if (logit[c] > top) best = c, top = logit[c];
  }
  float sum = 0.0f;
#pragma unroll
  for (int c = 0; c < kClasses; ++c) sum += expf(logit[c] - top);
  float label_logit = logit[0];
#pragma unroll
  for (int c = 1; c < kClasses; ++c) label_logit = c == label ? logit[c] : label_logit;
  loss += logf(sum) - (label_logit - top);
  correct += best == label;
  if (grad) {
#pragma unroll
    for (int c = 0; c < kClasses; ++c) {
      const float p = expf(logit[c] - top) / sum;
      grad[c] = __float2half_rn((p - (c == label ? 1.0f : 0.0f)) / mean_over);
    }
  }
}

// Softmax cross-entropy of the logits z (rows x kClasses) by one block of kThreads threads: thread
// t takes rows t, t + kThreads, ...; label_of(r) is row r's label, grad (where not null) gets row
// r's gradient at grad[r * kClasses]. The rows' losses and correct counts are added up in a fixed
// tree, so the result is the same in every run. Every thread of the block must call it; the sums
// it returns are those of thread 0 alone (the others get zeros), which is the only thread that
// reads the tree's root, so a block may call it again without a barrier.
template <int kThreads, class LabelOf>
__device__ LossSums softmax_cross_entropy_block(const float* z, LabelOf label_of, int rows,
                                                int mean_over, __half* grad) {
  __shared__ float loss_partial[kThreads];
  __shared__ int correct_partial[kThreads];
  float loss = 0.0f;
  int correct = 0;
  for (int r = threadIdx.x; r < rows; r += kThreads) {
    softmax_cross_entropy_row(z + r * kClasses, label_of(r), mean_over,
                              grad ? grad + r * kClasses : nullptr, loss, correct);
  }
  loss_partial[threadIdx.x] = loss;
  correct_partial[threadIdx.x] = correct;
  __syncthreads();
  for (int stride = kThreads / 2; stride > 0; stride /= 2) {  // fixed-order tree: deterministic
    if (threadIdx.x < stride) {
      loss_partial[threadIdx.x] += loss_partial[threadIdx.x + stride];
      correct_partial[threadIdx.x] += correct_partial[threadIdx.x + stride];
    }
    __syncthreads();
  }
  if (threadIdx.x != 0) return {};
  return {loss_partial[0], correct_partial[0]};
}

// One SGD step of bias[col]: bias[col] -= learning_rate * (the sum of column col of dZ over `rows`
// rows, in fp32, in row order). dZ is rows x cols, fp16. The loads go out 16 rows at a time, all
// before their sum, so that a column of 32 rows waits for memory twice rather than 32 times; the
// rows past the end add 0, which leaves the sum as it is.
__device__ __forceinline__ void bias_sgd_column(const __half* grad, float* bias, int cols, int col,
                                                int rows, float learning_rate) {
  constexpr int kRowsInFlight = 16;
  float sum = 0.0f;
  for (int r0 = 0; r0 < rows; r0 += kRowsInFlight) {
    __half v[kRowsInFlight];
#pragma unroll
    for (int i = 0; i < kRowsInFlight; ++i) {
      v[i] = r0 + i < rows ? grad[static_cast<size_t>(r0 + i) * cols + col] : __half(0.0f);
    }
#pragma unroll
    for (int i = 0; i < kRowsInFlight; ++i) sum += __half2float(v[i]);
  }
  bias[col] -= learning_rate * sum;
}

}  // namespace mnist
