// Chapter 05: parallel K (split-K) for products with few tiles of C and a long K.
//
// Chapters 01-04 give each block tile of C to one block, which walks the whole of K alone. At
// batch 32 the trainer's forward and backward-data products are M = 32 rows by N = 10..8192
// columns, K = 784..8192 deep: 32 x 1024 x 1024 has ceil(32 / 128) x ceil(1024 / 128) = 8 tiles of
// C, so 8 blocks for an H100's 132 SMs, each stepping through 32 K tiles one after another while
// 124 SMs idle. Smaller tiles of C cannot fix that (M is 32); the long dimension is K, so we cut
// it. Block (x, y, z) of a grid of ceil(N / 128) x ceil(M / 128) x splits computes tile (y, x) over
// the z-th range of whole K tiles, exactly as chapter 04 computes it over all of K (same ring,
// same loop, from k_tile_begin to k_tile_end), and since C = sum over z of A[:, range z] .
// B[range z, :], adding the partial tiles gives C:
//
//          K ->   range 0      range 1      range 2
//   A  [ M x K ] |==========|============|==========|      block z = 0, 1, 2 each multiply one
//   B  [ K x N ]  (the same ranges of rows)                range: partial_z = A_z . B_z (M x N)
//   C  = partial_0 + partial_1 + partial_2                 then one pass adds them up
//
// How the partial tiles meet: a second pass, in a fixed order. Each block stores its partial tile
// to the workspace (GemmProblem::workspace, splits x M x N floats, from the caller's arena), and
// a second kernel, sum_splits, adds the splits of every element in the order z = 0, 1, 2, ...
// and writes C. The alternative, atomicAdd of every partial result into a zeroed C, needs no
// workspace, but floating-point addition is not associative and the order in which the blocks'
// atomics land changes from run to run: the result would differ in its last bits between two
// runs on the same inputs, and so would a whole training run. With a fixed order the result is
// the same, bit for bit, every time (the GEMM test checks it). Both ways cost one more launch:
// the atomics need C zeroed first. The partial tiles are written and read once each, at L2
// speed, and the extra traffic is splits x M x N x 8 bytes: 6.4 MB for 32 x 784 with 32 splits.
// How many splits: choose_split in split_k.cuh.
//
// A second, smaller step serves the same M = 32 products: warps whose whole warp tile lies below
// C skip their MMAs (warp_inside_c in the kernel; docs/05_split_k.md measures it on its own).
//
// The rest is chapter 04's (docs/04_cp_async.md).
#pragma once

#include <algorithm>
#include <cstdint>

#include "02_smem_tiling/smem_tile.cuh"
#include "03_mma_sync/mma.cuh"
#include "04_cp_async/cp_async.cuh"
#include "05_split_k/split_k.cuh"
#include "cuda_check.cuh"
#include "gemm_interface.cuh"
#include "occupancy.cuh"

namespace mnist::split_k {

using namespace cp_async;
using namespace mma_sync;
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
constexpr int kBlockTileK = 32;   // depth of the tiles staged through shared memory at a time
constexpr int kWarpTileM = 64;    // rows of C per warp
constexpr int kWarpTileN = 32;    // columns of C per warp
constexpr int kWarpsM = kBlockTileM / kWarpTileM;  // 2
constexpr int kWarpsN = kBlockTileN / kWarpTileN;  // 4
constexpr int kThreads = kWarpsM * kWarpsN * 32;   // 256 threads, 8 warps, per block
constexpr int kMmaTilesM = kWarpTileM / kMmaM;     // 4 mma tiles down a warp tile
constexpr int kMmaTilesN = kWarpTileN / kMmaN;     // 4 across
constexpr int kStages = 4;                         // block tiles in the shared-memory ring

template <Op kOpA, Op kOpB>
using RingFor = Ring<SmemTile<kBlockTileM, kBlockTileK, kOpA == Op::N>,
                     SmemTile<kBlockTileN, kBlockTileK, kOpB == Op::T>, kStages>;

template <Op kOpA, Op kOpB>
__global__ void __launch_bounds__(kThreads)
    split_k_gemm_kernel(GemmProblem p, bool a_vectorized, bool b_vectorized,
                        int k_tiles_per_split) {
  using ATile = typename RingFor<kOpA, kOpB>::A;
  using BTile = typename RingFor<kOpA, kOpB>::B;
  constexpr int kStageElements = RingFor<kOpA, kOpB>::kStageElements;
  // kStages stages: more than the 48 KB a static array may take, so the size is given at launch
  // (dynamic shared memory).
  extern __shared__ __align__(16) __half ring[];

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int block_row = blockIdx.y * kBlockTileM, block_col = blockIdx.x * kBlockTileN;
  const int warp_row = warp / kWarpsN * kWarpTileM, warp_col = warp % kWarpsN * kWarpTileN;

  // This block's K range: tiles [k_tile_begin, k_tile_end), never empty (see choose_split).
  const int k_tiles = (p.k + kBlockTileK - 1) / kBlockTileK;
  const int k_tile_begin = blockIdx.z * k_tiles_per_split;
  const int k_tile_end = min(k_tile_begin + k_tiles_per_split, k_tiles);

  // Starts loading block tile t (K from t * kBlockTileK) into stage t % kStages, as one group. Past
  // the range's last tile the group is empty: every step then commits exactly one group, so "tile
  // t has landed" is always the same wait_group count, and the last kStages - 1 steps drain the
  // ring.
  const auto load_stage = [&](int t) {
    if (t < k_tile_end) {
      __half* stage = ring + t % kStages * kStageElements;
      const int k0 = t * kBlockTileK;
      load_tile_async<ATile, kThreads>(p.a, p.m, p.k, block_row, k0, a_vectorized, stage);
      load_tile_async<BTile, kThreads>(p.b, p.n, p.k, block_col, k0, b_vectorized,
                                       stage + ATile::kElements);
    }
    cp_async_commit();
  };

  // Prologue: the range's first kStages - 1 tiles in flight before the first MMA.
  for (int t = k_tile_begin; t < k_tile_begin + kStages - 1; ++t) load_stage(t);

  // At M = 32 the lower half of a 128-row block tile lies below C: its warps would only multiply
  // the zeros the loads put there, so they skip their MMAs (and still load and wait with the
  // others). One test per K step; finer skips, per mma tile, cost more in the inner loop than
  // they saved (measured: docs/05_split_k.md).
  const bool warp_inside_c = block_row + warp_row < p.m && block_col + warp_col < p.n;

  float acc[kMmaTilesM][kMmaTilesN][4] = {};
  for (int t = k_tile_begin; t < k_tile_end; ++t) {
    // Counting from k_tile_begin, kStages - 1 + (t - k_tile_begin) groups are committed and that
    // group holds tile t: allowing the kStages - 2 newest to be pending means this thread's
    // copies of tile t have landed.
    cp_async_wait<kStages - 2>();
    // One barrier per step does two jobs. (1) After it, every thread's part of tile t is in shared
    // memory. (2) Every thread has finished step t - 1, whose MMAs read stage (t - 1) % kStages,
    // which is exactly the stage the load below overwrites, (t + kStages - 1) % kStages. The stage
    // computed on now, t % kStages, is overwritten only at step t + 1, after the next barrier.
    __syncthreads();
    load_stage(t + kStages - 1);  // in flight during this step's MMAs and the next kStages - 2

    if (!warp_inside_c) continue;
    const __half* a_tile = ring + t % kStages * kStageElements;
    const __half* b_tile = a_tile + ATile::kElements;
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
  }

  // One split writes C; several write their partial tiles to the workspace, one M x N slab each.
  float* const out_matrix =
      gridDim.z == 1 ? p.c : p.workspace + static_cast<size_t>(blockIdx.z) * p.m * p.n;
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
        float* out = out_matrix + static_cast<size_t>(row) * p.n + col;
        if (col < p.n) out[0] = acc[i][j][2 * h];
        if (col + 1 < p.n) out[1] = acc[i][j][2 * h + 1];
      }
    }
  }
}

// C = the sum of the splits' partial matrices, added in the order z = 0, 1, ... for every element,
// so that the result does not depend on which block finished first.
__global__ void sum_splits_kernel(const float* partials, int splits, size_t count, float* c) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count;
       i += size_t(gridDim.x) * blockDim.x) {
    float sum = partials[i];
    for (int z = 1; z < splits; ++z) sum += partials[z * count + i];
    c[i] = sum;
  }
}

template <Op kOpA, Op kOpB>
void launch(const GemmProblem& p, cudaStream_t stream) {
  const bool a_vectorized = vectorizable(p.a, kOpA == Op::N ? p.k : p.m);
  const bool b_vectorized = vectorizable(p.b, kOpB == Op::N ? p.n : p.k);
  constexpr int kSmemBytes = RingFor<kOpA, kOpB>::kBytes;
  static const int resident =
      resident_blocks(split_k_gemm_kernel<kOpA, kOpB>, kThreads, kSmemBytes);
  const Split split = choose_split<kBlockTileM, kBlockTileN, kBlockTileK>(p, resident);
  const dim3 grid((p.n + kBlockTileN - 1) / kBlockTileN, (p.m + kBlockTileM - 1) / kBlockTileM,
                  split.splits);
  split_k_gemm_kernel<kOpA, kOpB><<<grid, kThreads, kSmemBytes, stream>>>(
      p, a_vectorized, b_vectorized, split.k_tiles_per_split);
  if (split.splits > 1) {
    CUDA_CHECK_LAUNCH();
    const size_t count = static_cast<size_t>(p.m) * p.n;
    const int sum_blocks =
        static_cast<int>(std::min<size_t>((count + kThreads - 1) / kThreads, resident));
    sum_splits_kernel<<<sum_blocks, kThreads, 0, stream>>>(p.workspace, split.splits, count, p.c);
  }
}

inline void launch_gemm(const GemmProblem& p, cudaStream_t stream) {
  with_operand_ops(p, [&](auto op_a, auto op_b) {
    launch<decltype(op_a)::value, decltype(op_b)::value>(p, stream);
  });
}

}  // namespace mnist::split_k
