// The block-wide products of the cluster's kernels, over operands in shared memory, and the SGD
// of the parameters they keep there.
#pragma once

#include "18_cluster_model/layout.cuh"
#include "mlp_device.cuh"

namespace mnist::cluster_model {

// ldmatrix .x2: two 8 x 8 matrices; lanes 0-15 give the row addresses (chapter 03's mma.cuh has
// the .x4 and what a lane receives).
template <bool kTranspose>
__device__ __forceinline__ void ldmatrix_x2(const __half* row_address, uint32_t (&r)[2]) {
  const auto address = static_cast<uint32_t>(__cvta_generic_to_shared(row_address));
  if (kTranspose) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];\n"
                 : "=r"(r[0]), "=r"(r[1])
                 : "r"(address));
  } else {
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];\n"
                 : "=r"(r[0]), "=r"(r[1])
                 : "r"(address));
  }
}

// A warp's 16 x 8 tile of C, as mma leaves it: v[0..1] row lane / 4, v[2..3] row lane / 4 + 8,
// columns 2 (lane % 4) and 2 (lane % 4) + 1 (chapter 03's mma.cuh).
struct Fragment {
  float v[4];
};

// One warp's 16 x 8 tile (mt, nt) of op(A) op(B), over the steps of 16 from k_first to k_steps in
// strides of k_stride. Operands in shared memory with row strides lda, ldb halves: A stored [m][k]
// (kAKMajor) or [k][m], B stored [n][k] (kBKMajor) or [k][n].
template <bool kAKMajor, bool kBKMajor>
__device__ __forceinline__ Fragment tile_product(const __half* a, int lda, const __half* b, int ldb,
                                                 int mt, int nt, int k_first, int k_steps,
                                                 int k_stride) {
  const int lane = threadIdx.x % 32, matrix = lane / 8, row = lane % 8;
  const int m = mt * kMmaM, n = nt * kMmaN;
  float acc[4] = {};
  for (int step = k_first; step < k_steps; step += k_stride) {
    const int k = step * kMmaK;
    uint32_t af[4], bf[2];
    const int mi = m + matrix % 2 * 8, ka = k + matrix / 2 * 8;  // A: 4 matrices
    if (kAKMajor) {
      mma_sync::ldmatrix_x4<false>(a + (mi + row) * lda + ka, af);
    } else {
      mma_sync::ldmatrix_x4<true>(a + (ka + row) * lda + mi, af);
    }
    const int kb = k + matrix % 2 * 8;  // B: 2 matrices, (k, n) and (k + 8, n)
    if (kBKMajor) {
      ldmatrix_x2<false>(b + (n + row) * ldb + kb, bf);
    } else {
      ldmatrix_x2<true>(b + (kb + row) * ldb + n, bf);
    }
    mma_sync::mma_m16n8k16(acc, af, bf);
  }
  return {{acc[0], acc[1], acc[2], acc[3]}};
}

// C = op(A) op(B), m x n x k (multiples of 16, 8 and 16), by the block's warps, each result pair
// handed to finish(row, col, v0, v1) for C[row][col] and C[row][col + 1] (col even). Where C has
// fewer mma tiles than the block has warps, the warps share each tile's K and add their partial
// tiles in `sums` in warp order (the same bits every run). Every thread calls it; it ends at a
// block barrier, after which every thread sees what finish wrote.
template <bool kAKMajor, bool kBKMajor, class Finish>
__device__ void block_product(const __half* a, int lda, const __half* b, int ldb, int m, int n,
                              int k, float* sums, Finish finish) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int tiles_n = n / kMmaN, tiles = m / kMmaM * tiles_n, k_steps = k / kMmaK;
  const auto finish_tile = [&](int tile, const Fragment& f) {
    const int row = tile / tiles_n * kMmaM + lane / 4, col = tile % tiles_n * kMmaN + lane % 4 * 2;
    finish(row, col, f.v[0], f.v[1]);
    finish(row + 8, col, f.v[2], f.v[3]);
  };
  if (tiles >= kWarps) {  // a warp a tile at a time, all of K
    for (int tile = warp; tile < tiles; tile += kWarps) {
      finish_tile(tile, tile_product<kAKMajor, kBKMajor>(a, lda, b, ldb, tile / tiles_n,
                                                         tile % tiles_n, 0, k_steps, 1));
    }
  } else {  // `slices` warps a tile, each every slices-th step of K
    const int slices = kWarps / tiles;
    Fragment f = {};
    if (warp < tiles * slices) {
      const int tile = warp % tiles;
      f = tile_product<kAKMajor, kBKMajor>(a, lda, b, ldb, tile / tiles_n, tile % tiles_n,
                                           warp / tiles, k_steps, slices);
    }
    for (int e = 0; e < 4; ++e) sums[(warp * 4 + e) * 32 + lane] = f.v[e];
    __syncthreads();
    if (warp < tiles) {
      Fragment sum = {};
      for (int slice = 0; slice < slices; ++slice) {
        for (int e = 0; e < 4; ++e) sum.v[e] += sums[((warp + slice * tiles) * 4 + e) * 32 + lane];
      }
      finish_tile(warp, sum);
    }
  }
  __syncthreads();
}

// The step-by-step trainer's bias update (bias_sgd_column, mlp_device.cuh) over dZ in shared
// memory, rows kDzStride apart.
__device__ inline void bias_sgd_shared(const __half* dz, float* bias, int cols, int rows,
                                       float learning_rate) {
  for (int col = threadIdx.x; col < cols; col += kThreads) {
    bias_sgd_column(dz, bias, kDzStride, col, rows, learning_rate);
  }
}

// A pair of a layer's SGD: W[r][c], W[r][c + 1] -= learning_rate (v0, v1) on the fp32 masters
// (rows `cols` floats apart), and their fp16 copy (rows cols + kPad halves apart) from them.
__device__ inline void sgd_pair(float* w32, __half* w16, int cols, int r, int c, float v0, float v1,
                                float learning_rate) {
  float* const w = w32 + r * cols + c;
  w[0] -= learning_rate * v0;
  w[1] -= learning_rate * v1;
  *reinterpret_cast<__half2*>(w16 + r * (cols + kPad) + c) = __floats2half2_rn(w[0], w[1]);
}

}  // namespace mnist::cluster_model
