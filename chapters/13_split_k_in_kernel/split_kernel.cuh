// Chapter 13: split K in the kernel. Chapter 12's kernel, with K cut into splits that the blocks
// add up themselves.
//
// A product with fewer tiles than SMs leaves SMs idle. Where K is long enough to pay for it
// (plan_split), it is cut into splits, one unit of work per (tile, split). Chapter 05 added the
// partial tiles in a second kernel; here the blocks do it, with no second launch:
//   every split   stores its fp32 partial tile to the workspace, then (one thread, after a
//                 warpgroup barrier and a fence) adds 1 to the tile's arrival counter
//   the last one  to arrive (the counter was splits - 1) reads every partial tile back in the
//                 order 0, 1, ..., splits - 1, applies the epilogue once, and sets the counter to 0
// The order of the sum is fixed, so the result is the same, bit for bit, in every run. The
// counters (tile_arrivals) are zero when the module loads and every launch leaves them zero, so a
// CUDA graph can replay the launch; two split products must not run at the same time (the trainer,
// the tests and the benchmark run one stream). Memory order, in PTX's terms: the stores, a
// warpgroup barrier, then in the counting thread a fence and the atomic add: a release; the add, a
// fence, the barrier, then loads that bypass L1 (ld.global.cg, another SM wrote the data): an
// acquire.
//
// Unsplit products run on chapter 12's kernel, split ones on a kernel of their own name, so that a
// profile, or a test, tells which ran. This header holds both launches for the later chapters.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "10_tile_scheduler/tma_store.cuh"
#include "12_swap_ab/swap_ab.cuh"
#include "12_swap_ab/tiles.cuh"
#include "gemm_interface.cuh"
#include "occupancy.cuh"
#include "race_stress.cuh"

namespace mnist::split_k_in_kernel {

using namespace swap_ab;

constexpr int kMinKTilesToSplit = 32;   // K tiles of 64 a product needs before K is split
constexpr int kMinKTilesEachSplit = 8;  // K tiles of 64 each split walks at least
constexpr int kMostSplits = 16;         // most ranges K is cut into
// Arrival counters, one per consumer warpgroup of a tile: the most a split product may have (split
// products have fewer tiles than the GPU has SMs).
constexpr int kArrivalCounters = 1024;
constexpr int kSumChunk = 4;  // float4s per thread the last block loads at a time

// How K is cut: `splits` ranges of k_tiles_per_split K tiles of 64 (the last may be shorter). Split
// s of a tile writes its fp32 partial tile to `partials` (in the workspace, from a 16-byte
// boundary); null where splits is 1.
struct SplitPlan {
  int splits;
  int k_tiles_per_split;
  float* partials;
};

// Chapter 05's rule, with what a split costs here (docs/13_split_k_in_kernel.md measures it): K is
// split only where it has at least kMinKTilesToSplit K tiles; into no more (tile, split) units than
// the GPU has SMs; every split at least kMinKTilesEachSplit K tiles long; at most kMostSplits; no
// more than the workspace and the counters hold. And the last block of a tile reads the other
// splits' partial tiles back alone, so those fp32 bytes may be no more than the operand bytes one
// split reads. Each split then gets ceil(k_tiles / splits) K tiles, so that none is left empty.
inline SplitPlan plan_split(const GemmProblem& p, SwapAbTile tile, int sms) {
  const int k_tiles = (p.k + kTileK - 1) / kTileK;
  const int tiles = tiles_of(p, tile);
  const size_t partial_floats = size_t(tile.rows) * tile.batch;  // one split's partial tile
  const size_t stage_bytes = size_t(tile.rows + tile.batch) * kTileK * sizeof(__half);
  float* const partials =
      reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(p.workspace) + 15) & ~uintptr_t(15));
  const size_t skipped = size_t(partials - p.workspace);
  const size_t room = p.workspace && p.workspace_floats > skipped
                          ? (p.workspace_floats - skipped) / (tiles * partial_floats)
                          : 0;
  int splits = static_cast<int>(std::min<size_t>(
      {size_t(sms / tiles), size_t(k_tiles / kMinKTilesEachSplit), size_t(kMostSplits), room}));
  const auto sum_fits = [&](int s) {
    const size_t k_tiles_per_split = (k_tiles + s - 1) / s;
    return (s - 1) * partial_floats * sizeof(float) <= k_tiles_per_split * stage_bytes;
  };
  while (splits > 1 && !sum_fits(splits)) --splits;
  if (splits <= 1 || k_tiles < kMinKTilesToSplit ||
      tiles * consumers_for(tile.batch) > kArrivalCounters) {
    return {1, k_tiles, nullptr};
  }
  const int k_tiles_per_split = (k_tiles + splits - 1) / splits;
  return {(k_tiles + k_tiles_per_split - 1) / k_tiles_per_split, k_tiles_per_split, partials};
}

// One arrival counter per consumer warpgroup of a tile of C^T: zero when the module loads, and zero
// again when a launch ends.
__device__ unsigned int tile_arrivals[kArrivalCounters];

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)

// This warpgroup's partial tile of split `split` goes to the workspace and is counted on counter
// `tile`. Returns whether the warpgroup arrived last, and then `acc` holds the sum of the splits.
// The partial tiles are stored as the accumulators lie, float4 v of every thread together (512
// contiguous bytes a warp), so each thread reads back only what it stored itself, its own split's
// included: the sum needs no second copy of the accumulators in registers.
template <int kCount>
__device__ __forceinline__ bool sum_splits_if_last(float (&acc)[kCount], const SplitPlan& plan,
                                                   int tile, int split, int consumer,
                                                   int* arrived_last) {
  constexpr int kVectors = kCount / 4;
  constexpr int kChunk = kVectors < kSumChunk ? kVectors : kSumChunk;
  const int thread = threadIdx.x % kWarpgroupThreads;
  float4* const partials = reinterpret_cast<float4*>(plan.partials) +
                           size_t(tile) * plan.splits * kVectors * kWarpgroupThreads;
  const auto at = [&](int s, int v) {
    return partials + (size_t(s) * kVectors + v) * kWarpgroupThreads + thread;
  };
#pragma unroll
  for (int v = 0; v < kVectors; ++v) {
    __stcg(at(split, v), make_float4(acc[4 * v], acc[4 * v + 1], acc[4 * v + 2], acc[4 * v + 3]));
  }
  tile_scheduler::warpgroup_sync(consumer);  // every thread's stores come before the count
  if (thread == 0) {
    stress_delay(tile);  // arrivals in another order
    __threadfence();  // release: whoever sees this arrival sees the stores above
    const bool last = atomicAdd(&tile_arrivals[tile], 1) == unsigned(plan.splits - 1);
    if (last) tile_arrivals[tile] = 0;  // every split has arrived: ready for the next launch
    __threadfence();  // acquire: the loads below see the stores of every arrival counted
    *arrived_last = last;
  }
  tile_scheduler::warpgroup_sync(consumer);
  if (!*arrived_last) return false;
#pragma unroll
  for (int v0 = 0; v0 < kVectors; v0 += kChunk) {
#pragma unroll
    for (int i = 0; i < 4 * kChunk; ++i) acc[4 * v0 + i] = 0.0f;
    for (int s = 0; s < plan.splits; ++s) {  // the fixed order, not the order of arrival
      float4 x[kChunk];
#pragma unroll
      for (int i = 0; i < kChunk; ++i) x[i] = __ldcg(at(s, v0 + i));
#pragma unroll
      for (int i = 0; i < kChunk; ++i) {
        float* const sum = &acc[4 * (v0 + i)];
        sum[0] += x[i].x;
        sum[1] += x[i].y;
        sum[2] += x[i].z;
        sum[3] += x[i].w;
      }
    }
  }
  return true;
}

struct SplitUnit : Unit {
  int split;  // K tiles [k_begin, k_end) are split `split` of the tile's K
};

// Chapter 12's units cut along K: unit i is split i % splits of tile i / splits (the splits of a
// tile run side by side), ready once the splits are summed.
template <class Block>
struct SplitTiles {
  const GemmProblem& p;
  SplitPlan plan;
  int* arrived_last;  // shared memory, one flag per consumer
  __device__ int count() const {
    return tiles_of(p, {Block::kTileRows, Block::kBatchTile}) * plan.splits;
  }
  __device__ SplitUnit unit(int unit) const {
    SplitUnit u = {WholeTiles<Block>{p}.unit(unit / plan.splits), unit % plan.splits};
    u.k_begin = u.split * plan.k_tiles_per_split;
    u.k_end = min(u.k_begin + plan.k_tiles_per_split, u.k_end);
    return u;
  }
  template <int kCount>
  __device__ bool ready(float (&acc)[kCount], const SplitUnit& u, int consumer) const {
    return sum_splits_if_last(acc, plan, u.tile * Block::kConsumers + consumer, u.split, consumer,
                              arrived_last + consumer);
  }
};

#endif  // sm_90a

// K split: the last split of each tile to arrive adds them up and finishes the tile.
template <Op kOpA, Op kOpB, EpilogueKind kKind, int kTileRows, int kBatchTile>
__global__ void __launch_bounds__(Block<kOpA, kOpB, kTileRows, kBatchTile>::kThreads,
                                  Block<kOpA, kOpB, kTileRows, kBatchTile>::kBlocksPerSm)
    swap_ab_split_k_gemm_kernel(const __grid_constant__ CUtensorMap map_a,
                                const __grid_constant__ CUtensorMap map_b,
                                const __grid_constant__ GemmProblem p, const SplitPlan plan) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using B = Block<kOpA, kOpB, kTileRows, kBatchTile>;
  __shared__ int arrived_last[B::kConsumers];
  swap_ab_gemm<B, kKind>(map_a, map_b, p, SplitTiles<B>{p, plan, arrived_last});
#else
  __trap();  // built without sm_90a: see wgmma.cuh
#endif
}

// The block tile's product, on this kernel where plan_split cuts K, on chapter 12's elsewhere. Both
// kernels have the same block, so the GPU runs as many of one as of the other at once.
template <Op kOpA, Op kOpB, EpilogueKind kKind, int kTileRows, int kBatchTile>
void launch_split_k_in_kernel(const GemmProblem& p, cudaStream_t stream) {
  using B = Block<kOpA, kOpB, kTileRows, kBatchTile>;
  static const int sms = multiprocessors();
  const SplitPlan plan = plan_split(p, {kTileRows, kBatchTile}, sms);
  if (plan.splits == 1) return launch_swap_ab<kOpA, kOpB, kKind, kTileRows, kBatchTile>(p, stream);
  const auto kernel = swap_ab_split_k_gemm_kernel<kOpA, kOpB, kKind, kTileRows, kBatchTile>;
  [[maybe_unused]] static const bool opted_in = allow_shared_memory(kernel, B::Ring::kSmemBytes);
  const TensorMaps<typename B::Ring::A, typename B::Ring::B> maps(swapped(p));
  const int units = tiles_of(p, {kTileRows, kBatchTile}) * plan.splits;
  const int resident = resident_swap_ab_blocks<kOpA, kOpB, kKind>({kTileRows, kBatchTile});
  kernel<<<std::min(units, resident), B::kThreads, B::Ring::kSmemBytes, stream>>>(maps.a, maps.b, p,
                                                                                  plan);
}

// Chapter 13's GEMM: its kernels where chapter 12's takes the product, the square kernel elsewhere.
// Chapter 14 sends it the products its own kernel leaves.
// Compiled once, in split_kernel.cu (chapters/meson.build).
void launch_split_k_in_kernel_or_fall_back(const GemmProblem& p, cudaStream_t stream);

}  // namespace mnist::split_k_in_kernel
