// Chapter 02: shared-memory tiling. A block computes a 128 x 128 tile of C, each thread a 16 x 8
// piece of it.
//
// In chapter 01 every thread read a whole row of op(A) and a whole column of op(B) by itself: 2
// loads from memory (or cache) for every fused multiply-add. But the threads that share a row of C
// all need that same row of A, and those that share a column the same column of B. Here the block
// cooperates instead. It walks K in steps of kBlockTileK = 64, and at each step
//   1. all 128 threads together copy a 128 x 64 tile of op(A) and a 64 x 128 tile of op(B) from
//      global memory into shared memory (fast on-chip memory that every thread of the block sees),
//      each element read from global memory once, 16 bytes per thread per load, neighbouring
//      threads at neighbouring addresses so that the loads coalesce (load_tile in smem_tile.cuh);
//   2. every thread multiplies out of shared memory: for each k it takes the 16 values of A in its
//      16 rows and the 8 values of B in its 8 columns into registers and does 16 x 8 = 128
//      multiply-adds with them, an "outer product".
// Reuse happens twice. Through shared memory, each element fetched from global memory serves the
// 8 threads of a block row or the 16 of a block column. Through registers, each value read from
// shared memory serves 8 or 16 multiply-adds. That ratio, arithmetic per byte moved, is the
// arithmetic intensity; raising it is what every later chapter keeps doing, with bigger tiles at
// every level.
//
//            block tile of C, 128 x 128            thread (ty, tx), ty in 0..7, tx in 0..15:
//   +----+----+----+ ... +----+                    rows    A K-major   ty, ty + 8, ..., ty + 120
//   |    |    |    |     |    |  8 x 16 threads,           A MN-major  16 ty, ..., 16 ty + 15
//   |    |    |    |     |    |  each 16 x 8 of C  columns B K-major   tx, tx + 16, ..., tx + 112
//   +----+----+----+ ... +----+                            B MN-major  8 tx, ..., 8 tx + 7
//
// Layouts as template parameters. The tiles stay in fp16, stored as the operands are in global
// memory (smem_tile.cuh), and the layout of each operand is a template parameter, so that each of
// the trainer's three products gets its own kernel with its own reading pattern. A thread reads
// its operands from shared memory kKPerRead = 4 values of K at a time, in either layout:
//   K-major tile ([mn][k]):  one 8-byte read gives 4 values of K of one of its rows (or columns),
//                            so it owns rows 8 (columns 16) apart: the threads that read at once
//                            read neighbouring rows, 144 bytes apart;
//   MN-major tile ([k][mn]): one 16-byte read gives 8 neighbouring rows (columns) at one k, so it
//                            owns runs of 8 neighbouring ones: a half-warp reads 256 contiguous
//                            bytes.
// Either way a thread reads 16 + 8 halves per value of k, for 128 multiply-adds, and converts each
// half to float once per use: 24 conversions per 128 FMAs, the price of keeping the tiles in the
// format that chapter 03's tensor cores read.
//
// Why these sizes: the multiply-adds are not the only instructions a thread issues, and the others
// (conversions, shared-memory reads, the loop) share the same issue slots. A 16 x 8 piece spends
// 24 conversions on 128 FMAs where an 8 x 8 one spends 16 on 64, and its 128 accumulators and 24
// values of k fit in the 255 registers a thread can have. Two blocks of 128 threads then fill an
// SM's 65536 registers: while one block waits at its barrier for its next tiles, the other
// multiplies. A K step of 64 rather than 32 pays that wait half as often for the same
// multiply-adds; the two fp16 tiles take 2 x 128 x 72 halves = 36 KB of shared memory. The loop
// over one block tile's K is not unrolled: unrolled, the compiler hoists the next reads, runs out
// of the 255 registers and spills. docs/02_smem_tiling.md measures these choices against an 8 x 8
// piece per thread. Elements outside the matrices (the tiles at the right and bottom edges, or past
// the end of K) are loaded as zeros, which add nothing to the sums, and the stores to C are
// guarded: any M, N, K works.
#pragma once

#include <cstdint>

#include "02_smem_tiling/smem_tile.cuh"
#include "gemm_interface.cuh"

namespace mnist::smem_tiling {

// The kernels store C only: gemm() applies the epilogue (gemm_interface.cuh) in a second pass over
// C, and the trainer launches every kernel of a step from the host. Chapter 06 changes both.
constexpr bool kFusedEpilogue = false;
constexpr bool kReplayStepAsGraph = false;

// Runs on any GPU of compute capability 8.0 or newer (common/gpu_requirements.hpp); chapter 07 is
// the first to need an H100.
constexpr bool kNeedsSm90a = false;

constexpr int kBlockTileM = 128;  // rows of C per block
constexpr int kBlockTileN = 128;  // columns of C per block
constexpr int kBlockTileK = 64;   // depth of the tiles staged through shared memory at a time
constexpr int kThreadTileM = 16;  // rows of C per thread: two 16-byte MN-major reads
constexpr int kThreadTileN = 8;   // columns of C per thread: one 16-byte MN-major read
constexpr int kKPerRead = 4;      // values of K per K-major read (8 bytes) and per multiply step
constexpr int kThreadsM = kBlockTileM / kThreadTileM;  // 8: thread / kThreadsN
constexpr int kThreadsN = kBlockTileN / kThreadTileN;  // 16: thread % kThreadsN
constexpr int kThreads = kThreadsM * kThreadsN;        // 128 threads per block
constexpr int kBlocksPerSm = 2;                        // see "Why these sizes" above
static_assert(kThreadTileM % kVector == 0 && kThreadTileN % kVector == 0 &&
                  kBlockTileK % kKPerRead == 0,
              "see above");

// An operand's piece of the thread's tile for kKPerRead values of K: kThreadTile rows (columns) x
// kKPerRead halves, as 32-bit words of two halves each.
template <int kThreadTile>
using Words = uint32_t[kThreadTile * kKPerRead / 2];

// Row (or column) i of a thread's kThreadTile within the block tile; t is the thread's coordinate
// along M (or N). See the top of the file.
template <bool kKMajor, int kThreadTile, int kThreadsAlong>
__device__ __forceinline__ int owned(int t, int i) {
  return kKMajor ? t + i * kThreadsAlong : t * kThreadTile + i;
}

// The thread's kThreadTile x kKPerRead halves of a tile for k in [k0, k0 + kKPerRead): K-major,
// row (column) i's values of k from word i * kKPerRead / 2; MN-major, the rows' values at k0 + kk
// from word kk * kThreadTile / 2, one 16-byte read per run of 8 rows.
template <class Tile, int kThreadTile, int kThreadsAlong>
__device__ __forceinline__ void read_operand(const __half* tile, int t, int k0,
                                             Words<kThreadTile>& words) {
  if (Tile::kKMajor) {
#pragma unroll
    for (int r = 0; r < kThreadTile; ++r) {
      const int offset = owned<true, kThreadTile, kThreadsAlong>(t, r) * Tile::kStride + k0;
      const uint2 v = *reinterpret_cast<const uint2*>(tile + offset);
      words[2 * r] = v.x, words[2 * r + 1] = v.y;
    }
  } else {
#pragma unroll
    for (int kk = 0; kk < kKPerRead; ++kk) {
#pragma unroll
      for (int run = 0; run < kThreadTile; run += kVector) {
        const int offset =
            (k0 + kk) * Tile::kStride + owned<false, kThreadTile, kThreadsAlong>(t, run);
        const uint4 v = *reinterpret_cast<const uint4*>(tile + offset);
        const int w = (kk * kThreadTile + run) / 2;
        words[w] = v.x, words[w + 1] = v.y, words[w + 2] = v.z, words[w + 3] = v.w;
      }
    }
  }
}

// Row (column) i's value at k0 + kk among read_operand's words, as a float. With the loops
// unrolled every index is a constant, so this is one register and one conversion.
template <bool kKMajor, int kThreadTile>
__device__ __forceinline__ float value(const Words<kThreadTile>& words, int i, int kk) {
  const int e = kKMajor ? i * kKPerRead + kk : kk * kThreadTile + i;  // which half
  return __half2float(
      __ushort_as_half(static_cast<unsigned short>(words[e / 2] >> (16 * (e % 2)))));
}

template <Op kOpA, Op kOpB>
__global__ void __launch_bounds__(kThreads, kBlocksPerSm)
    smem_tiling_gemm_kernel(GemmProblem p, bool a_vectorized, bool b_vectorized) {
  using ATile = SmemTile<kBlockTileM, kBlockTileK, kOpA == Op::N>;
  using BTile = SmemTile<kBlockTileN, kBlockTileK, kOpB == Op::T>;
  __shared__ alignas(16) __half a_tile[ATile::kElements];
  __shared__ alignas(16) __half b_tile[BTile::kElements];

  const int ty = threadIdx.x / kThreadsN, tx = threadIdx.x % kThreadsN;
  const int block_row = blockIdx.y * kBlockTileM, block_col = blockIdx.x * kBlockTileN;

  float acc[kThreadTileM][kThreadTileN] = {};
  for (int k0 = 0; k0 < p.k; k0 += kBlockTileK) {
    load_tile<ATile, kThreads>(p.a, p.m, p.k, block_row, k0, a_vectorized, a_tile);
    load_tile<BTile, kThreads>(p.b, p.n, p.k, block_col, k0, b_vectorized, b_tile);
    __syncthreads();  // the tiles are complete before anyone reads them

#pragma unroll 1  // see "Why these sizes" above
    for (int k = 0; k < kBlockTileK; k += kKPerRead) {
      Words<kThreadTileM> a;
      Words<kThreadTileN> b;
      read_operand<ATile, kThreadTileM, kThreadsM>(a_tile, ty, k, a);
      read_operand<BTile, kThreadTileN, kThreadsN>(b_tile, tx, k, b);
#pragma unroll
      for (int kk = 0; kk < kKPerRead; ++kk) {
        float a_k[kThreadTileM], b_k[kThreadTileN];
#pragma unroll
        for (int i = 0; i < kThreadTileM; ++i)
          a_k[i] = value<ATile::kKMajor, kThreadTileM>(a, i, kk);
#pragma unroll
        for (int j = 0; j < kThreadTileN; ++j)
          b_k[j] = value<BTile::kKMajor, kThreadTileN>(b, j, kk);
#pragma unroll
        for (int i = 0; i < kThreadTileM; ++i) {
#pragma unroll
          for (int j = 0; j < kThreadTileN; ++j) acc[i][j] = fmaf(a_k[i], b_k[j], acc[i][j]);
        }
      }
    }
    __syncthreads();  // everyone is done reading before the next step overwrites the tiles
  }

#pragma unroll
  for (int i = 0; i < kThreadTileM; ++i) {
    const int row = block_row + owned<ATile::kKMajor, kThreadTileM, kThreadsM>(ty, i);
#pragma unroll
    for (int j = 0; j < kThreadTileN; ++j) {
      const int col = block_col + owned<BTile::kKMajor, kThreadTileN, kThreadsN>(tx, j);
      if (row < p.m && col < p.n) p.c[static_cast<size_t>(row) * p.n + col] = acc[i][j];
    }
  }
}

template <Op kOpA, Op kOpB>
void launch(const GemmProblem& p, cudaStream_t stream) {
  const dim3 grid((p.n + kBlockTileN - 1) / kBlockTileN, (p.m + kBlockTileM - 1) / kBlockTileM);
  const bool a_vectorized = vectorizable(p.a, kOpA == Op::N ? p.k : p.m);
  const bool b_vectorized = vectorizable(p.b, kOpB == Op::N ? p.n : p.k);
  smem_tiling_gemm_kernel<kOpA, kOpB><<<grid, kThreads, 0, stream>>>(p, a_vectorized, b_vectorized);
}

inline void launch_gemm(const GemmProblem& p, cudaStream_t stream) {
  with_operand_ops(p, [&](auto op_a, auto op_b) {
    launch<decltype(op_a)::value, decltype(op_b)::value>(p, stream);
  });
}

}  // namespace mnist::smem_tiling
