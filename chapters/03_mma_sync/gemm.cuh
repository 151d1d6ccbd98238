// Chapter 03: tensor cores, one warp-wide mma.sync at a time. A block still computes a 128 x 128
// tile of C from fp16 tiles like chapter 02's; now each warp computes a 64 x 32 piece of it.
//
// Chapter 02 did every multiply-add with an FFMA, one per thread per instruction. A tensor core
// does a whole small matrix product per instruction: `mma.sync.aligned.m16n8k16` has the 32
// threads of a warp multiply a 16 x 16 tile of A by a 16 x 8 tile of B (fp16 in, fp32 sums) and add
// it to a 16 x 8 tile of C, 2048 multiply-adds at once. The work now splits into three levels of
// tiles, named as in CUTLASS:
//   block tile  128 x 128, stepping K by 64: staged through shared memory as in chapter 02;
//   warp tile    64 x  32: each of the 8 warps owns one, a 2 x 4 grid of warps;
//   mma tile     16 x   8 x 16: the instruction's shape; a warp tile is 4 x 4 of them, so each
//               warp keeps 16 accumulator tiles = 64 floats per thread in registers, as many as
//               chapter 02's threads did.
//
//            block tile of C, 128 x 128
//   +--------+--------+--------+--------+     warp w owns rows 64 (w / 4) .. + 63 and
//   | warp 0 | warp 1 | warp 2 | warp 3 |     columns 32 (w % 4) .. + 31, as 4 x 4 mma tiles
//   +--------+--------+--------+--------+     of 16 x 8
//   | warp 4 | warp 5 | warp 6 | warp 7 |
//   +--------+--------+--------+--------+
//
// The instruction wants its operands in registers, spread over the warp in a fixed pattern, the
// "fragment", and `ldmatrix` reads a tile into exactly that pattern, transposing it on the way
// where the tile is MN-major: mma.cuh draws the fragment and wraps both instructions. Per 16 of K a
// warp issues 6 ldmatrix.x4 (4 for its A fragments, 2 for its B fragments) and 16 mma: each A
// fragment serves 4 mma and each B fragment 4.
//
// Why these sizes: each K step still loads, waits at the barrier, then multiplies, as in chapter
// 02, with the same K tile of 64 and so the same 2 x 128 x 72 halves = 36 KB of tiles. Two blocks
// per SM, as in chapter 02, let one multiply while the other waits: with 256 threads a block that
// caps the registers at 128 a thread, where the unrolled K step would otherwise take 160
// (docs/03_mma_sync.md measures both).
//
// The rest is chapter 02's (docs/02_smem_tiling.md): the same padded tiles, the same load_tile,
// the same barriers, the same guarded stores.
#pragma once

#include <cstdint>

#include "02_smem_tiling/smem_tile.cuh"
#include "03_mma_sync/mma.cuh"
#include "gemm_interface.cuh"

namespace mnist::mma_sync {

using smem_tiling::load_tile;
using smem_tiling::SmemTile;
using smem_tiling::vectorizable;

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
constexpr int kWarpTileM = 64;    // rows of C per warp
constexpr int kWarpTileN = 32;    // columns of C per warp
constexpr int kWarpsM = kBlockTileM / kWarpTileM;  // 2
constexpr int kWarpsN = kBlockTileN / kWarpTileN;  // 4
constexpr int kThreads = kWarpsM * kWarpsN * 32;   // 256 threads, 8 warps, per block
constexpr int kMmaTilesM = kWarpTileM / kMmaM;     // 4 mma tiles down a warp tile
constexpr int kMmaTilesN = kWarpTileN / kMmaN;     // 4 across
constexpr int kBlocksPerSm = 2;                    // see "Why these sizes" above

template <Op kOpA, Op kOpB>
__global__ void __launch_bounds__(kThreads, kBlocksPerSm)
    mma_sync_gemm_kernel(GemmProblem p, bool a_vectorized, bool b_vectorized) {
  using ATile = SmemTile<kBlockTileM, kBlockTileK, kOpA == Op::N>;
  using BTile = SmemTile<kBlockTileN, kBlockTileK, kOpB == Op::T>;
  __shared__ alignas(16) __half a_tile[ATile::kElements];
  __shared__ alignas(16) __half b_tile[BTile::kElements];

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int block_row = blockIdx.y * kBlockTileM, block_col = blockIdx.x * kBlockTileN;
  const int warp_row = warp / kWarpsN * kWarpTileM, warp_col = warp % kWarpsN * kWarpTileN;

  float acc[kMmaTilesM][kMmaTilesN][4] = {};
  for (int k0 = 0; k0 < p.k; k0 += kBlockTileK) {
    load_tile<ATile, kThreads>(p.a, p.m, p.k, block_row, k0, a_vectorized, a_tile);
    load_tile<BTile, kThreads>(p.b, p.n, p.k, block_col, k0, b_vectorized, b_tile);
    __syncthreads();  // the tiles are complete before anyone reads them

#pragma unroll
    for (int k = 0; k < kBlockTileK; k += kMmaK) {
      uint32_t a[kMmaTilesM][4], b[kMmaTilesN][2];
#pragma unroll
      for (int i = 0; i < kMmaTilesM; ++i) {
        load_a_fragment<ATile>(a_tile, warp_row + i * kMmaM, k, lane, a[i]);
      }
#pragma unroll
      for (int j = 0; j < kMmaTilesN; j += 2) {
        load_b_fragments<BTile>(b_tile, k, warp_col + j * kMmaN, lane, b[j], b[j + 1]);
      }
#pragma unroll
      for (int i = 0; i < kMmaTilesM; ++i) {
#pragma unroll
        for (int j = 0; j < kMmaTilesN; ++j) mma_m16n8k16(acc[i][j], a[i], b[j]);
      }
    }
    __syncthreads();  // everyone is done reading before the next step overwrites the tiles
  }

  const int group = lane / 4, pair = lane % 4 * 2;  // the accumulator fragment layout
#pragma unroll
  for (int i = 0; i < kMmaTilesM; ++i) {
#pragma unroll
    for (int j = 0; j < kMmaTilesN; ++j) {
      const int col = block_col + warp_col + j * kMmaN + pair;
#pragma unroll
      for (int h = 0; h < 2; ++h) {  // h = 0: row group, acc[0..1]; h = 1: row group + 8, acc[2..3]
        const int row = block_row + warp_row + i * kMmaM + group + h * 8;
        if (row >= p.m) continue;
        float* out = p.c + static_cast<size_t>(row) * p.n + col;
        if (col < p.n) out[0] = acc[i][j][2 * h];
        if (col + 1 < p.n) out[1] = acc[i][j][2 * h + 1];
      }
    }
  }
}

template <Op kOpA, Op kOpB>
void launch(const GemmProblem& p, cudaStream_t stream) {
  const dim3 grid((p.n + kBlockTileN - 1) / kBlockTileN, (p.m + kBlockTileM - 1) / kBlockTileM);
  const bool a_vectorized = vectorizable(p.a, kOpA == Op::N ? p.k : p.m);
  const bool b_vectorized = vectorizable(p.b, kOpB == Op::N ? p.n : p.k);
  mma_sync_gemm_kernel<kOpA, kOpB><<<grid, kThreads, 0, stream>>>(p, a_vectorized, b_vectorized);
}

inline void launch_gemm(const GemmProblem& p, cudaStream_t stream) {
  with_operand_ops(p, [&](auto op_a, auto op_b) {
    launch<decltype(op_a)::value, decltype(op_b)::value>(p, stream);
  });
}

}  // namespace mnist::mma_sync
