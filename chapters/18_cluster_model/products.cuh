// The cluster's block-wide products over shared memory, their SGD and the sum of partial products.
#pragma once

#include "18_cluster_model/layout.cuh"
#include "mlp_device.cuh"

namespace mnist::cluster_model {

using mma_sync::ldmatrix_x4;

// acc += a warp's 16 x 8 tile (mt, nt) of op(A) op(B), K = k (a multiple of 16). A is stored [m][k]
// (kAKMajor) or [k][m], rows lda halves apart; B [n][k] (kBKMajor) or [k][n], ldb apart.
template <bool kAKMajor, bool kBKMajor>
__device__ __forceinline__ void tile_product(const __half* a, int lda, const __half* b, int ldb,
                                             int mt, int nt, int k, float (&acc)[4]) {
  const int lane = threadIdx.x % 32, matrix = lane / 8, row = lane % 8;
  const int m = mt * kMmaM, n = nt * kMmaN;
  for (int k0 = 0; k0 < k; k0 += kMmaK) {
    const int mi = m + matrix % 2 * 8, ka = k0 + matrix / 2 * 8;  // A: 4 matrices
    const int kb = k0 + matrix % 2 * 8;  // B: (k0, n), (k0 + 8, n); lanes 16-31 repeat 0-15's rows
    uint32_t af[4], bf[4];
    ldmatrix_x4<!kAKMajor>(kAKMajor ? a + (mi + row) * lda + ka : a + (ka + row) * lda + mi, af);
    ldmatrix_x4<!kBKMajor>(kBKMajor ? b + (n + row) * ldb + kb : b + (kb + row) * ldb + n, bf);
    mma_sync::mma_m16n8k16(acc, af, {bf[0], bf[1]});
  }
}

// C = op(A) op(B), m x n x k (multiples of 16, 8, 16), a 16 x 8 tile a warp, over all of K:
// finish(row, col, v0, v1) takes C[row][col, col + 1]. Every thread calls it; it ends at a barrier.
template <bool kAKMajor, bool kBKMajor, class Finish>
__device__ void block_product(const __half* a, int lda, const __half* b, int ldb, int m, int n,
                              int k, Finish finish) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, tiles_n = n / kMmaN;
  for (int tile = warp; tile < m / kMmaM * tiles_n; tile += kWarps) {
    float acc[4] = {};
    tile_product<kAKMajor, kBKMajor>(a, lda, b, ldb, tile / tiles_n, tile % tiles_n, k, acc);
    const int row = tile / tiles_n * kMmaM + lane / 4, col = tile % tiles_n * kMmaN + lane % 4 * 2;
    finish(row, col, acc[0], acc[1]);
    finish(row + 8, col, acc[2], acc[3]);
  }
  __syncthreads();
}

// The output layer's logits X W^T + b, all of them, in every block; rows in + kPad halves apart.
__device__ inline void output_logits(const __half* x, const __half* w16, const float* bias, int in,
                                     float* logits) {
  block_product<true, true>(x, in + kPad, w16, in + kPad, kOnChipRows, kClassesPadded, in,
                            [&](int r, int c, float v0, float v1) {
                              if (c < kClasses) logits[r * kClasses + c] = v0 + bias[c];
                              if (c + 1 < kClasses) logits[r * kClasses + c + 1] = v1 + bias[c + 1];
                            });
}

// A layer's SGD for its first `own` rows: W -= learning_rate dZ^T X into the fp32 masters w32, then
// the fp16 copy w16; b -= learning_rate (the sum of dZ over `rows` rows) (mlp_device.cuh).
__device__ inline void layer_sgd(const __half* dz, const __half* x, int in, int own, int rows,
                                 float* w32, __half* w16, float* bias, float learning_rate) {
  block_product<false, false>(
      dz, kDzStride, x, in + kPad, kMmaM, in, kOnChipRows, [&](int r, int c, float v0, float v1) {
        if (r >= own) return;
        float* const w = w32 + r * in + c;
        w[0] -= learning_rate * v0;
        w[1] -= learning_rate * v1;
        *reinterpret_cast<__half2*>(w16 + r * (in + kPad) + c) = __floats2half2_rn(w[0], w[1]);
      });
  for (int col = threadIdx.x; col < own; col += kThreads) {
    bias_sgd_column(dz, bias, kDzStride, col, rows, learning_rate);
  }
}

// dZ below, own columns: the slots added in block order (the same bits every run), masked by ReLU'.
__device__ inline void add_partials(const float* partial, int cols, const __half* x, int in, int me,
                                    int below_own, __half* dz_below) {
  const int slot = kOnChipRows * cols;
  for (int i = threadIdx.x; i < kOnChipRows * below_own; i += kThreads) {
    const int r = i / below_own, j = i % below_own;
    float sum = 0.0f;
    for (int from = 0; from < kClusterBlocks; ++from) sum += partial[from * slot + r * cols + j];
    const bool on = __half2float(x[r * (in + kPad) + me * below_own + j]) > 0.0f;
    dz_below[r * kDzStride + j] = __float2half_rn(on ? sum : 0.0f);
  }
  __syncthreads();
}

}  // namespace mnist::cluster_model
