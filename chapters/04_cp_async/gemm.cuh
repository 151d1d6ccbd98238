// Chapter 04: asynchronous copies (`cp.async`) and a multi-stage shared-memory ring.
//
// Chapter 03's K loop was strictly serial: load a tile, barrier, multiply it, barrier, load the
// next. While a tile travels from global memory (hundreds of cycles) the tensor cores wait, and
// while they work nothing travels. Here the loads of the next kStages - 1 tiles are in flight
// while the MMAs of the current one run. Shared memory holds a ring of kStages stages, each one
// block tile of A and one of B; with kStages = 4, at K step t:
//
//              step t        step t+1      step t+2      step t+3      step t+4
//   stage 0    mma t         load t+4 ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~> mma t+4
//   stage 1    ~~~~~~~~~~~>  mma t+1       load t+5 ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~>
//   stage 2    ~~~~~~~~~~~~~~~~~~~~~~~~~>  mma t+2       load t+6 ~~~~~~~~~~~~~~~~~~~~>
//   stage 3    load t+3 ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~> mma t+3       load t+7 ~~~~~~>
//
// (t a multiple of 4; ~~> is a copy in flight). Each step starts the load of the tile kStages - 1
// ahead into the stage the previous step computed on, then computes on a stage whose copy has
// landed: a tile has kStages - 1 steps of MMAs to arrive in. Only an asynchronous copy allows
// that, one that the thread issues and leaves: cp.async, wrapped in cp_async.cuh with the tile
// copy built on it and the reasons for its qualifiers.
//
// Why the K step is back to chapter 02's 32: chapter 03 took 64, with a cap of 128 registers for
// two blocks per SM, to pay its wait for memory half as often. Here the wait hides behind the
// MMAs of kStages - 1 steps; 4 stages of 32 take 80 KB, two blocks fit, and the kernels need 124
// to 128 registers without a cap. (3 stages of 64 under the cap: docs/04_cp_async.md.)
//
// The rest is chapter 03's (docs/03_mma_sync.md): the tiles, the warp tiles, the fragments and
// the stores.
#pragma once

#include <cstdint>

#include "02_smem_tiling/smem_tile.cuh"
#include "03_mma_sync/mma.cuh"
#include "04_cp_async/cp_async.cuh"
#include "cuda_check.cuh"
#include "gemm_interface.cuh"
#include "occupancy.cuh"

namespace mnist::cp_async {

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
    cp_async_gemm_kernel(GemmProblem p, bool a_vectorized, bool b_vectorized) {
  using ATile = typename RingFor<kOpA, kOpB>::A;
  using BTile = typename RingFor<kOpA, kOpB>::B;
  constexpr int kStageElements = RingFor<kOpA, kOpB>::kStageElements;
  // kStages stages: more than the 48 KB a static array may take, so the size is given at launch
  // (dynamic shared memory).
  extern __shared__ __align__(16) __half ring[];

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int block_row = blockIdx.y * kBlockTileM, block_col = blockIdx.x * kBlockTileN;
  const int warp_row = warp / kWarpsN * kWarpTileM, warp_col = warp % kWarpsN * kWarpTileN;

  // Starts loading block tile t (K from t * kBlockTileK) into stage t % kStages, as one group. Past
  // the last tile the group is empty: every step then commits exactly one group, so "tile t has
  // landed" is always the same wait_group count, and the last kStages - 1 steps drain the ring.
  const int k_tiles = (p.k + kBlockTileK - 1) / kBlockTileK;
  const auto load_stage = [&](int t) {
    if (t < k_tiles) {
      __half* stage = ring + t % kStages * kStageElements;
      const int k0 = t * kBlockTileK;
      load_tile_async<ATile, kThreads>(p.a, p.m, p.k, block_row, k0, a_vectorized, stage);
      load_tile_async<BTile, kThreads>(p.b, p.n, p.k, block_col, k0, b_vectorized,
                                       stage + ATile::kElements);
    }
    cp_async_commit();
  };

  // Prologue: tiles 0 .. kStages - 2 in flight before the first MMA.
  for (int t = 0; t < kStages - 1; ++t) load_stage(t);

  float acc[kMmaTilesM][kMmaTilesN][4] = {};
  for (int t = 0; t < k_tiles; ++t) {
    // kStages - 1 + t groups are committed and group t holds tile t: allowing the kStages - 2
    // newest to be pending means this thread's copies of tile t have landed.
    cp_async_wait<kStages - 2>();
    // One barrier per step does two jobs. (1) After it, every thread's part of tile t is in shared
    // memory. (2) Every thread has finished step t - 1, whose MMAs read stage (t - 1) % kStages,
    // which is exactly the stage the load below overwrites, (t + kStages - 1) % kStages. The stage
    // computed on now, t % kStages, is overwritten only at step t + 1, after the next barrier.
    __syncthreads();
    load_stage(t + kStages - 1);  // in flight during this step's MMAs and the next kStages - 2

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
  constexpr int kSmemBytes = RingFor<kOpA, kOpB>::kBytes;
  [[maybe_unused]] static const bool opted_in =
      allow_shared_memory(cp_async_gemm_kernel<kOpA, kOpB>, kSmemBytes);
  cp_async_gemm_kernel<kOpA, kOpB>
      <<<grid, kThreads, kSmemBytes, stream>>>(p, a_vectorized, b_vectorized);
}

inline void launch_gemm(const GemmProblem& p, cudaStream_t stream) {
  with_operand_ops(p, [&](auto op_a, auto op_b) {
    launch<decltype(op_a)::value, decltype(op_b)::value>(p, stream);
  });
}

}  // namespace mnist::cp_async
