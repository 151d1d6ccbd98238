// Chapter 06: the fused step. The GEMM finishes the MLP's work on each element itself.
//
// After chapter 05 the products of a small training step take a few microseconds each, and the
// step is mostly everything around them: at batch 32 a step of 784-h-h-h-10 was 25 kernels, 11 of
// them GEMMs; the other 14 read a product that a GEMM had just written to memory, did one or two
// operations per element and wrote the result back. Each of those costs a launch and a round
// trip of the product through memory (for the weight gradient at hidden 8192, 256 MiB written and
// read again). Here each product's accumulator goes through the MLP's epilogue while it is still
// in registers, a thread's two neighbouring columns at a time (finish_pair in
// common/epilogue.cuh; the kind of epilogue is a template parameter of the kernel, so that each
// kernel holds only its own: docs/06_fused_step.md measures both choices):
//
//   product          before (kernel, then a pass over C)        now (in the GEMM's store)
//   forward hidden   Z = X W^T; Y = fp16(ReLU(Z + b))             Y = fp16(ReLU(acc + b))
//   forward output   Z = X W^T; logits = Z + b                    logits = acc + b
//   backward data    G = dZ W;  dZ' = fp16(G * (Y > 0))           dZ' = fp16(Y > 0 ? acc : 0)
//   backward weight  dW = dZ^T X; W -= lr dW; W16 = fp16(W)       W -= lr acc; W16 = fp16(W)
//
// so the float matrices Z, G and dW are never written at all: the weight gradient exists only in
// registers. With split-K the partial sums still go to the workspace and sum_splits applies the
// epilogue to their total. The arithmetic is the same, operation for operation, as the separate
// pass, so the trainer's results do not change.
//
// With a handful of kernels left per step, the launches themselves become the cost, so this
// chapter also asks the trainer to record each step once as a CUDA graph and replay it
// (kReplayStepAsGraph): one launch from the host per step instead of one per kernel.
//
// The rest is chapter 05's (docs/05_split_k.md). The kernel and its launch are in this header,
// which chapters 07-11 include for the products their own kernels leave; gemm.cuh is the chapter's
// GEMM interface.
#pragma once

#include <algorithm>
#include <cstdint>

#include "02_smem_tiling/smem_tile.cuh"
#include "03_mma_sync/mma.cuh"
#include "04_cp_async/cp_async.cuh"
#include "05_split_k/split_k.cuh"
#include "cuda_check.cuh"
#include "epilogue.cuh"
#include "gemm_interface.cuh"
#include "occupancy.cuh"

namespace mnist::fused_step {

using namespace cp_async;
using namespace mma_sync;
using namespace split_k;
using smem_tiling::SmemTile;
using smem_tiling::vectorizable;

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

template <Op kOpA, Op kOpB, EpilogueKind kKind>
__global__ void __launch_bounds__(kThreads)
    fused_gemm_kernel(GemmProblem p, bool a_vectorized, bool b_vectorized, int k_tiles_per_split) {
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

  // One split finishes its elements through the epilogue; several write their partial tiles to
  // the workspace, one M x N slab each, and sum_splits finishes them. The epilogue's inputs are
  // loaded for a row of mma tiles at a time, before any of its stores (see epilogue_input), and
  // each thread's two neighbouring columns go as one access where they can (see finish_pair).
  const bool finish = gridDim.z == 1;
  GemmProblem slab = p;  // a split's partial tile: a plain store into its own M x N slab
  slab.c = p.workspace + static_cast<size_t>(blockIdx.z) * p.m * p.n;
  const bool paired =
      finish ? columns_paired<kKind>(p) : columns_paired<EpilogueKind::kStore>(slab);
  const int group = lane / 4, pair = lane % 4 * 2;  // the accumulator fragment layout
  // Elements 2 h and 2 h + 1 of mma tile (i, j): row group (+ 8 for h = 1), columns pair, pair + 1.
  const auto row_of = [&](int i, int h) {
    return block_row + warp_row + i * kMmaM + group + h * 8;
  };
  const auto col_of = [&](int j) { return block_col + warp_col + j * kMmaN + pair; };
#pragma unroll
  for (int i = 0; i < kMmaTilesM; ++i) {
    float2 input[kMmaTilesN][2];
#pragma unroll
    for (int j = 0; j < kMmaTilesN; ++j) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int row = row_of(i, h), col = col_of(j);
        input[j][h] = finish && row < p.m && col < p.n
                          ? epilogue_input_pair<kKind>(p, row, col, paired)
                          : float2{0.0f, 0.0f};
      }
    }
#pragma unroll
    for (int j = 0; j < kMmaTilesN; ++j) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int row = row_of(i, h), col = col_of(j);
        if (row >= p.m || col >= p.n) continue;
        const float2 v = {acc[i][j][2 * h], acc[i][j][2 * h + 1]};
        if (finish) {
          finish_pair<kKind>(p, row, col, v, input[j][h], paired);
        } else {
          finish_pair<EpilogueKind::kStore>(slab, row, col, v, float2{}, paired);
        }
      }
    }
  }
}

// Every element: the sum of the splits' partial matrices, added in the order z = 0, 1, ... so that
// the result does not depend on which block finished first, through the epilogue.
template <EpilogueKind kKind>
__global__ void sum_splits_kernel(GemmProblem p, int splits) {
  const size_t count = static_cast<size_t>(p.m) * p.n;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count;
       i += size_t(gridDim.x) * blockDim.x) {
    float sum = p.workspace[i];
    for (int z = 1; z < splits; ++z) sum += p.workspace[z * count + i];
    const int row = static_cast<int>(i / p.n), col = static_cast<int>(i % p.n);
    finish_element<kKind>(p, row, col, sum, epilogue_input<kKind>(p, row, col));
  }
}

// How many blocks of the kernel for these layouts and epilogue the GPU runs at once; chapters 07-11
// ask it too, to learn whether this chapter would split a product.
template <Op kOpA, Op kOpB, EpilogueKind kKind>
int resident() {
  static const int blocks =
      resident_blocks(fused_gemm_kernel<kOpA, kOpB, kKind>, kThreads, RingFor<kOpA, kOpB>::kBytes);
  return blocks;
}

template <Op kOpA, Op kOpB, EpilogueKind kKind>
Split split_of(const GemmProblem& p) {
  return choose_split<kBlockTileM, kBlockTileN, kBlockTileK>(p, resident<kOpA, kOpB, kKind>());
}

template <Op kOpA, Op kOpB, EpilogueKind kKind>
void launch(const GemmProblem& p, cudaStream_t stream) {
  const bool a_vectorized = vectorizable(p.a, kOpA == Op::N ? p.k : p.m);
  const bool b_vectorized = vectorizable(p.b, kOpB == Op::N ? p.n : p.k);
  const Split split = split_of<kOpA, kOpB, kKind>(p);
  const dim3 grid((p.n + kBlockTileN - 1) / kBlockTileN, (p.m + kBlockTileM - 1) / kBlockTileM,
                  split.splits);
  fused_gemm_kernel<kOpA, kOpB, kKind><<<grid, kThreads, RingFor<kOpA, kOpB>::kBytes, stream>>>(
      p, a_vectorized, b_vectorized, split.k_tiles_per_split);
  if (split.splits > 1) {
    CUDA_CHECK_LAUNCH();
    const size_t count = static_cast<size_t>(p.m) * p.n;
    const int sum_blocks = static_cast<int>(
        std::min<size_t>((count + kThreads - 1) / kThreads, resident<kOpA, kOpB, kKind>()));
    sum_splits_kernel<kKind><<<sum_blocks, kThreads, 0, stream>>>(p, split.splits);
  }
}

}  // namespace mnist::fused_step
