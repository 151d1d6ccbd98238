// Chapter 01: the naive GEMM. One thread computes one element of C.
//
// Thread (x, y) of block (bx, by) owns C[row][col] with
//   row = by * 16 + y,   col = bx * 16 + x,
// and walks the whole K dimension alone:
//   C[row][col] = sum_i A[row][i] * B[i][col].
//
// Threads with consecutive x share a row of C, so their stores to C, and their loads of B when B
// is stored K x N, touch consecutive addresses and coalesce into few memory transactions. Nothing
// is reused through shared memory or registers: each operand element is re-read from memory (or
// cache) by every thread that needs it. Chapter 02 fixes exactly that.
#pragma once

#include "gemm_interface.cuh"

namespace mnist::naive {

// The kernels store C only: gemm() applies the epilogue (gemm_interface.cuh) in a second pass over
// C, and the trainer launches every kernel of a step from the host. Chapter 06 changes both.
constexpr bool kFusedEpilogue = false;
constexpr bool kReplayStepAsGraph = false;

// Runs on any GPU of compute capability 8.0 or newer (common/gpu_requirements.hpp); chapter 07 is
// the first to need an H100.
constexpr bool kNeedsSm90a = false;

constexpr int kBlockSide = 16;  // 16 x 16 = 256 threads per block

// Element (i, j) of op(X), where op(X) has `cols` columns, stored as `op` says. size_t because
// i * cols overflows int at 4096 x 8192 x ... sizes.
__device__ __forceinline__ float element(const __half* x, Op op, size_t i, size_t j, size_t rows,
                                         size_t cols) {
  return __half2float(op == Op::N ? x[i * cols + j] : x[j * rows + i]);
}

__global__ void naive_gemm_kernel(GemmProblem p) {
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= p.m || col >= p.n) return;  // the grid is rounded up to whole blocks

  float sum = 0.0f;
  for (int i = 0; i < p.k; ++i) {
    // fp16 x fp16 products are exact in fp32, so only the additions round.
    sum = fmaf(element(p.a, p.op_a, row, i, p.m, p.k), element(p.b, p.op_b, i, col, p.k, p.n), sum);
  }
  p.c[static_cast<size_t>(row) * p.n + col] = sum;
}

inline void launch_gemm(const GemmProblem& p, cudaStream_t stream) {
  const dim3 block(kBlockSide, kBlockSide);
  const dim3 grid((p.n + kBlockSide - 1) / kBlockSide, (p.m + kBlockSide - 1) / kBlockSide);
  naive_gemm_kernel<<<grid, block, 0, stream>>>(p);
}

}  // namespace mnist::naive
