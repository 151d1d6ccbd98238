// Chapter 02: shared-memory tiling. A block computes a 64 x 64 tile of C, each thread a 4 x 4
// piece of it.
//
// In chapter 01 every thread read a whole row of op(A) and a whole column of op(B) by itself: 2
// loads from memory (or cache) for every fused multiply-add. But the 16 threads that share a row of
// C all need that same row of A, and the 16 that share a column all need the same column of B.
// Here the block cooperates instead. It walks K in steps of kBlockTileK = 16, and at each step
//   1. all 256 threads together copy a 64 x 16 tile of op(A) and a 16 x 64 tile of op(B) from
//      global memory into shared memory (fast on-chip memory that every thread of the block sees),
//      each element read from global memory once, by neighbouring threads at neighbouring
//      addresses so that the loads coalesce;
//   2. every thread multiplies out of shared memory: for each of the 16 values of k it reads 4
//      values of A (a column of its 4 rows) and 4 of B (a row of its 4 columns) into registers and
//      does 4 x 4 = 16 multiply-adds with them, its "outer product".
// Reuse happens twice. Through shared memory, each element fetched from global memory serves the
// 16 threads of a block row or column. Through registers, each value read from shared memory
// serves 4 multiply-adds: 16 FMAs per 8 shared loads, against 1 FMA per 2 loads before. That ratio,
// arithmetic per byte moved, is the arithmetic intensity; raising it is what every later chapter
// keeps doing, with bigger tiles at every level.
//
// Why these sizes: a 64 x 64 block tile still gives a grid of many blocks for the MLP's small
// products (batch 32, 10 outputs); 4 x 4 per thread makes 256 threads, 16 accumulators each, and
// kBlockTileK = 16 keeps both tiles in 2 x 16 x 68 floats = 8.5 KB of shared memory. Elements
// outside the matrices (the tiles at the right and bottom edges, or past the end of K) are loaded
// as zeros, which add nothing to the sums, and the stores to C are guarded: any M, N, K works.
#pragma once

#include "gemm_interface.cuh"

namespace mnist {

// The kernels store C only: gemm() applies the epilogue (gemm_interface.cuh) in a second pass over
// C. Chapter 06 moves it into the kernel.
constexpr bool kFusedEpilogue = false;

namespace {

constexpr int kBlockTileM = 64;  // rows of C per block
constexpr int kBlockTileN = 64;  // columns of C per block
constexpr int kBlockTileK = 16;  // depth of the tiles staged through shared memory at a time
constexpr int kThreadTileM = 4;  // rows of C per thread
constexpr int kThreadTileN = 4;  // columns of C per thread
constexpr int kThreadsM = kBlockTileM / kThreadTileM;  // 16: threadIdx.y
constexpr int kThreadsN = kBlockTileN / kThreadTileN;  // 16: threadIdx.x
constexpr int kThreads = kThreadsM * kThreadsN;        // 256 threads per block

// Shared tiles are stored k-major, tile[k][i] with i along M (for A) or N (for B), so that for
// one k a thread finds its 4 values side by side. 4 floats of padding per row: when the loads walk
// along k (see below) consecutive threads write tile[k][i], tile[k + 1][i], ..., and without
// padding these are 64 floats apart, all in the same one of the 32 shared-memory banks, and the
// writes would be served one after another (16-way bank conflict). A row of 68 floats shifts each
// row by 4 banks, leaving at most 2-way conflicts, and keeps rows 16-byte aligned.
constexpr int kPad = 4;

// Copies the kBlockTileK x kTileMn tile of an operand starting at (k0, mn0) into tile[k][mn], as
// floats, zero outside the matrix. An operand is stored either with k contiguous (A: N, B: T; the
// matrix is mn_extent x k_extent) or with mn contiguous (A: T, B: N; it is k_extent x mn_extent).
// Consecutive threads take consecutive elements along the contiguous dimension, so a warp's loads
// fall on neighbouring addresses. Halves become floats once, here, not at every use.
template <int kTileMn>
__device__ __forceinline__ void load_tile(const __half* x, bool k_contiguous, int mn_extent,
                                          int k_extent, int mn0, int k0, int thread,
                                          float (&tile)[kBlockTileK][kTileMn + kPad]) {
  for (int e = thread; e < kBlockTileK * kTileMn; e += kThreads) {
    const int k = k_contiguous ? e % kBlockTileK : e / kTileMn;
    const int mn = k_contiguous ? e / kBlockTileK : e % kTileMn;
    const size_t gk = k0 + k, gmn = mn0 + mn;
    float value = 0.0f;
    if (gk < size_t(k_extent) && gmn < size_t(mn_extent)) {
      value = __half2float(k_contiguous ? x[gmn * k_extent + gk] : x[gk * mn_extent + gmn]);
    }
    tile[k][mn] = value;
  }
}

__global__ void __launch_bounds__(kThreads) smem_tiling_gemm_kernel(GemmProblem p) {
  __shared__ float a_tile[kBlockTileK][kBlockTileM + kPad];  // op(A) tile, transposed: [k][m]
  __shared__ float b_tile[kBlockTileK][kBlockTileN + kPad];  // op(B) tile: [k][n]

  const int thread = threadIdx.y * kThreadsN + threadIdx.x;
  const int block_row = blockIdx.y * kBlockTileM, block_col = blockIdx.x * kBlockTileN;
  const int thread_row = threadIdx.y * kThreadTileM, thread_col = threadIdx.x * kThreadTileN;

  float acc[kThreadTileM][kThreadTileN] = {};
  for (int k0 = 0; k0 < p.k; k0 += kBlockTileK) {
    load_tile<kBlockTileM>(p.a, p.op_a == Op::N, p.m, p.k, block_row, k0, thread, a_tile);
    load_tile<kBlockTileN>(p.b, p.op_b == Op::T, p.n, p.k, block_col, k0, thread, b_tile);
    __syncthreads();  // the tiles are complete before anyone reads them

#pragma unroll
    for (int k = 0; k < kBlockTileK; ++k) {
      float a[kThreadTileM], b[kThreadTileN];
#pragma unroll
      for (int i = 0; i < kThreadTileM; ++i) a[i] = a_tile[k][thread_row + i];
#pragma unroll
      for (int j = 0; j < kThreadTileN; ++j) b[j] = b_tile[k][thread_col + j];
#pragma unroll
      for (int i = 0; i < kThreadTileM; ++i) {
#pragma unroll
        for (int j = 0; j < kThreadTileN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
      }
    }
    __syncthreads();  // everyone is done reading before the next step overwrites the tiles
  }

#pragma unroll
  for (int i = 0; i < kThreadTileM; ++i) {
    const int row = block_row + thread_row + i;
#pragma unroll
    for (int j = 0; j < kThreadTileN; ++j) {
      const int col = block_col + thread_col + j;
      if (row < p.m && col < p.n) p.c[static_cast<size_t>(row) * p.n + col] = acc[i][j];
    }
  }
}

}  // namespace

void launch_gemm(const GemmProblem& p, cudaStream_t stream) {
  const dim3 block(kThreadsN, kThreadsM);
  const dim3 grid((p.n + kBlockTileN - 1) / kBlockTileN, (p.m + kBlockTileM - 1) / kBlockTileM);
  smem_tiling_gemm_kernel<<<grid, block, 0, stream>>>(p);
}

}  // namespace mnist
