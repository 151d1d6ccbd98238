// Chapter 09: the trainer's own products. Chapter 08's producer and consumers, with the batch on
// wgmma's N (swap AB) and K split inside the kernel.
//
// The MLP's forward and backward-data products have M = batch: 32 or 256 rows of C, against
// N = 784..8192 columns and K = 784..8192. Chapter 08's tile is 128 x 256, so at batch 32 three
// quarters of every wgmma multiply rows of zeros, and a product has few tiles (256 x 8192 x 8192:
// 64 tiles for 132 SMs); chapter 07's rule then hands the product to chapter 06's split-K
// mma.sync kernel, at a third of cuBLAS's speed (docs/09_swap_ab_split_k.md). Two changes:
//
// Swap AB. C^T = op(B)^T . op(A)^T is the same product with the operands' roles exchanged: its
// rows are C's columns (the weights' rows, thousands of them) and its columns are the batch. The
// warpgroup's 64 rows go to the weights and wgmma's N to the batch: a batch tile of N = 32, 64,
// 128 or 256 columns of C^T, as many batch tiles as M needs. The operands are copied as stored, as
// before: swapped() below describes C^T to chapter 07's tensor maps and ring, and only the
// epilogue knows that element (r, q) of the accumulators is C[q][r].
//
//   C (M x N)         C^T (N x M)             block tile of C^T: 64 (or 128) rows x batch tile
//   +--------------+  +---+---+               rows: op(B)^T, the weights, wgmma's "A"
//   |  batch x N   |  |   |   | N rows        columns: op(A)^T, the batch, wgmma's "B" (N <= 256)
//   +--------------+  |   |   |
//                     +---+---+ M columns, in batch tiles
//
// Which batch tile (dispatch.cuh): the smallest whose tiles the GPU runs all at once. At batch
// 256 a batch tile of 32 makes 8 tiles of every 64 weight rows, each reading those rows again
// (from L2), where one of 256 would leave most SMs idle at hidden 2048 and below, or cut K into
// splits whose partial tiles of 128 x 256 floats one block reads back alone.
//
// Split K in the kernel. With fewer tiles than SMs and K long enough to pay for it, K is cut into
// splits (dispatch.cuh), one block per (tile, split). Chapter 05 added the partial tiles in a
// second kernel; here the blocks do it themselves, and no second launch is needed:
//   every split   stores its fp32 partial tile to the workspace, then (one thread, after a
//                 warpgroup barrier and a fence) adds 1 to the tile's arrival counter
//   the last one  to arrive (the counter was splits - 1) reads every partial tile back in the
//                 order 0, 1, ..., splits - 1, whichever split it computed itself, applies the
//                 epilogue once, and sets the counter back to 0
// The order of the sum is fixed, so the result is the same, bit for bit, in every run (as chapter
// 05's). The counters live in device memory of their own (tile_arrivals, zero when the module
// loads) and every launch leaves them zero, so a CUDA graph can replay the launch; two of this
// chapter's split products must not run at the same time (the trainer, the tests and the benchmark
// run one stream). Memory order, in PTX's terms: the partial tile's stores, a barrier of the
// warpgroup, then in the counting thread a fence and the atomic add: a release, so a block that
// sees the count sees the stores; the atomic add, a fence, the barrier, then loads that bypass L1
// (ld.global.cg, since another SM wrote the data): an acquire.
//
// The block. Chapter 08's producer warpgroup and its two mbarriers per stage, with one consumer
// warpgroup (64 rows of C^T) for batch tiles of 32 and 64 and two, as in chapter 08, for 128 and
// 256: the batch operand's tile is then 16 or 32 KB per K tile, and two consumers halve how often
// it is read (consumers_for in dispatch.cuh has the measurement); they share a tile by its weight
// rows, or, in a tile of 64 rows by 128 batch columns, by its columns (dispatch.cuh, BlockTile). A
// block walks its (tile, split) units persistently, as chapter 08 walks tiles; with one consumer
// two blocks share an SM. The ring is as deep as 192 KB of shared memory per SM allows, up to
// kMaxStages: at batch 32 a K tile is 12 KB, of which 8 KB are weights read once from memory, and
// 8 stages keep up to 84 KB of weights in flight per block.
//
// When: swap_ab_takes() in dispatch.cuh (M <= 256 with A not transposed; K <= 256 with A
// transposed, the weight gradients, where a batch tile of 64 or 128 fits; both operands readable
// by TMA). Every other product goes to chapter 08's launch_gemm, included here. Before both, the
// weight gradients at a batch of at most 64 go to weight_update.cuh's kernel, whose lesson is its
// own: there the product is the stream of the master weights.
//
// Edges. TMA writes zeros past every edge of the operands: the rows of the last batch tile past M,
// the rows of the tile past N, the K tail. The epilogue skips what lies outside C.
#pragma once

#include <algorithm>
#include <cstdint>

#include "07_wgmma/tma.cuh"
#include "07_wgmma/wgmma.cuh"
#include "08_warp_specialized/gemm.cuh"
#include "09_swap_ab_split_k/dispatch.cuh"
#include "09_swap_ab_split_k/weight_update.cuh"
#include "epilogue.cuh"
#include "gemm_interface.cuh"
#include "occupancy.cuh"

namespace mnist::swap_ab_split_k {

using namespace wgmma;

// The kernels apply the epilogue (gemm_interface.cuh) themselves, and the trainer replays each
// step as a CUDA graph, as from chapter 06 on.
constexpr bool kFusedEpilogue = true;
constexpr bool kReplayStepAsGraph = true;

// Chapter 07's instructions and chapter 08's setmaxnreg: an H100-class GPU and a build with sm_90a
// code.
constexpr bool kNeedsSm90a = true;

constexpr int kMaxStages = 8;                // K tiles in the shared-memory ring, at most
constexpr int kRingBytesPerSm = 192 * 1024;  // shared memory the rings of an SM's blocks take
constexpr int kSumChunk = 4;                 // float4s per thread the last block loads at a time

constexpr Op flipped(Op op) {
  return op == Op::N ? Op::T : Op::N;
}

// C^T = op(B)^T . op(A)^T as a problem: m and n exchanged, and the operands, each read the other
// way (an operand op(X) stored as X is op(X)^T stored as X, with the other Op).
inline GemmProblem swapped(const GemmProblem& p) {
  GemmProblem t = p;
  t.m = p.n;
  t.n = p.m;
  t.a = p.b;
  t.op_a = flipped(p.op_b);
  t.b = p.a;
  t.op_b = flipped(p.op_a);
  return t;
}

// The block for a tile of kTileRows weight rows by kBatchTile columns of C^T (wgmma's N).
template <Op kOpA, Op kOpB, int kTileRowsOf, int kBatchTileOf>
struct Block {
  static constexpr int kTileRows = kTileRowsOf;
  static constexpr int kBatchTile = kBatchTileOf;
  static constexpr int kConsumers = consumers_for(kBatchTile);                // consumer warpgroups
  static constexpr int kThreads = (1 + kConsumers) * kWarpgroupThreads;       // the producer first
  static constexpr int kConsumerWarps = kConsumers * kWarpgroupThreads / 32;  // empty a stage
  static constexpr int kBlocksPerSm = kConsumers == 1 ? 2 : 1;
  // Each consumer's part: 64 rows of the tile, or, in a tile of 64 rows, a share of its columns.
  static constexpr bool kConsumersSplitBatch = kTileRows < kConsumers * kWgmmaM;
  static constexpr int kConsumerColumns = kBatchTile / (kConsumersSplitBatch ? kConsumers : 1);
  static_assert(kTileRows == kWgmmaM || kTileRows == kConsumers * kWgmmaM, "64 rows a consumer");
  static constexpr int kAccumulators = kWgmmaM * kConsumerColumns / kWarpgroupThreads;  // a thread
  static constexpr int kStageBytes = (kTileRows + kBatchTile) * kTileK * int(sizeof(__half));
  static constexpr int kStages = std::min(kMaxStages, kRingBytesPerSm / kBlocksPerSm / kStageBytes);
  // Stages of the A tile (op(B)^T: kTileRows rows) then the B tile (op(A)^T: the batch), and two
  // barriers per stage, full[kStages] and empty[kStages], as in chapter 08.
  using Ring = wgmma::Ring<kTileRows, kBatchTile, flipped(kOpB), flipped(kOpA), kStages, 2>;
  static_assert(Ring::kStageBytes == kStageBytes, "the stage is the two tiles");
};

// One arrival counter per consumer warpgroup of a tile of C^T: zero when the module loads, and zero
// again when a launch ends (see the top of the file).
__device__ unsigned int tile_arrivals[kArrivalCounters];

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)

template <class Block>
__device__ __forceinline__ int unit_count(const GemmProblem& p, int splits) {
  return tiles_of(p, Block::kTileRows, Block::kBatchTile) * splits;
}

// A block's unit of work: tile `tile` of C^T, rows [row0, row0 + kTileRows) (the weights) and
// columns [batch0, batch0 + kBatchTile) (the batch), over K tiles [k_begin, k_end). Units go
// split by split, then batch tile by batch tile, then weight tile by weight tile: the blocks that
// run at once share the weight rows they read.
struct Unit {
  int tile, split, row0, batch0, k_begin, k_end;
};

template <class Block>
__device__ __forceinline__ Unit unit_of(const GemmProblem& p, const SplitPlan& plan, int unit) {
  const int batch_tiles = batch_tiles_of(p.m, Block::kBatchTile);
  const int tile = unit / plan.splits, split = unit % plan.splits;
  const int row0 = tile / batch_tiles * Block::kTileRows;     // rows of C^T: the weights
  const int batch0 = tile % batch_tiles * Block::kBatchTile;  // columns of C^T: the batch
  const int k_begin = split * plan.k_tiles_per_split;
  const int k_end = min(k_begin + plan.k_tiles_per_split, (p.k + kTileK - 1) / kTileK);
  return {tile, split, row0, batch0, k_begin, k_end};
}

// The producer (one thread): fills the ring with the K tiles of every (tile, split) unit of this
// block, as chapter 08's fills it with those of every tile.
template <class Block>
__device__ __forceinline__ void produce(const CUtensorMap& map_a, const CUtensorMap& map_b,
                                        const GemmProblem& p, const SplitPlan& plan, uint32_t ring,
                                        uint32_t full, uint32_t empty) {
  using Ring = typename Block::Ring;
  int stage = 0;
  uint32_t phase = 0;  // parity of the stage's current use, as in chapter 08
  for (int unit = blockIdx.x; unit < unit_count<Block>(p, plan.splits); unit += gridDim.x) {
    const Unit u = unit_of<Block>(p, plan, unit);
    for (int t = u.k_begin; t < u.k_end; ++t) {
      const uint32_t full_barrier = full + stage * sizeof(uint64_t);
      mbarrier_wait(empty + stage * sizeof(uint64_t), phase ^ 1);  // the previous use is read
      mbarrier_arrive_expect_tx(full_barrier, Ring::kStageBytes);
      const uint32_t a = ring + stage * Ring::kStageBytes;
      load_tile<typename Ring::A>(map_a, a, u.row0, t * kTileK, full_barrier);
      load_tile<typename Ring::B>(map_b, a + Ring::A::kBytes, u.batch0, t * kTileK, full_barrier);
      if (++stage == Block::kStages) stage = 0, phase ^= 1;
    }
  }
}

// Split K, summed inside the kernel (the top of the file): this warpgroup's partial tile of split
// `split` goes to the workspace and is counted on counter `tile` (the tile's 64 rows of this
// warpgroup). Returns whether the warpgroup arrived last, and then `acc` holds the sum of the
// splits. The partial tiles are stored as the accumulators lie: float4 v of every thread together
// (512 contiguous bytes per warp), so each thread reads back only what it stored itself, its own
// split's included (the sum needs no second copy of the accumulators in registers).
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
  warp_specialized::warpgroup_sync(consumer);  // every thread's stores come before the count
  if (thread == 0) {
    __threadfence();  // release: whoever sees this arrival sees the stores above
    const bool last = atomicAdd(&tile_arrivals[tile], 1) == unsigned(plan.splits - 1);
    if (last) tile_arrivals[tile] = 0;  // every split has arrived: ready for the next launch
    __threadfence();  // acquire: the loads below see the stores of every arrival counted
    *arrived_last = last;
  }
  warp_specialized::warpgroup_sync(consumer);
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

// The warpgroup's 64 x N accumulators of C^T, whose first element is (n0, m0), through the
// epilogue: in wgmma.cuh's layout, d[4 i + 2 h + j] is row r = 16 w + l / 4 + 8 h and column
// q = 8 i + 2 (l % 4) + j of C^T, so element C[m0 + q][n0 + r]. Stored one element at a time: a
// thread's two neighbouring columns of C^T are two rows of C, N elements apart. A warp's store
// still fills whole 32-byte sectors of floats (8 lanes write 8 neighbouring n of one row of C). As
// in chapter 07, the epilogue's inputs of kEpilogueGroup 8-column blocks are loaded first.
template <EpilogueKind kKind, int kCount>
__device__ __forceinline__ void finish_transposed(const GemmProblem& p, const float (&acc)[kCount],
                                                  int n0, int m0) {
  constexpr int kColumnBlocks = kCount / 4;  // 8-column blocks of the accumulator tile
  constexpr int kGroup = kColumnBlocks < kEpilogueGroup ? kColumnBlocks : kEpilogueGroup;
  const int warp = threadIdx.x / 32 % 4, lane = threadIdx.x % 32;  // warp within the warpgroup
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int n = n0 + warp * 16 + lane / 4 + 8 * h;
    if (n >= p.n) continue;
#pragma unroll
    for (int i0 = 0; i0 < kColumnBlocks; i0 += kGroup) {
      float input[kGroup][2];
#pragma unroll
      for (int i = 0; i < kGroup; ++i) {
#pragma unroll
        for (int j = 0; j < 2; ++j) {
          const int m = m0 + 8 * (i0 + i) + lane % 4 * 2 + j;
          input[i][j] = m < p.m ? epilogue_input<kKind>(p, m, n) : 0.0f;
        }
      }
#pragma unroll
      for (int i = 0; i < kGroup; ++i) {
#pragma unroll
        for (int j = 0; j < 2; ++j) {
          const int m = m0 + 8 * (i0 + i) + lane % 4 * 2 + j;
          if (m < p.m) finish_element<kKind>(p, m, n, acc[4 * (i0 + i) + 2 * h + j], input[i][j]);
        }
      }
    }
  }
}

// A consumer warpgroup: its 64 rows, or columns, of every (tile, split) unit of this block, the
// second one's 8 KiB into its tile; with kSplitK, the splits' sum before the epilogue.
template <class Block, EpilogueKind kKind, bool kSplitK>
__device__ __forceinline__ void consume(int consumer, const GemmProblem& p, const SplitPlan& plan,
                                        uint32_t ring, uint32_t full, uint32_t empty,
                                        int* arrived_last) {
  using Ring = typename Block::Ring;
  const int lane = threadIdx.x % 32;
  const int row_part = Block::kConsumersSplitBatch ? 0 : consumer;
  const int column_part = Block::kConsumersSplitBatch ? consumer : 0;
  const uint32_t a_offset = row_part * Ring::kWarpgroupRowsBytes;
  const uint32_t b_offset = Ring::A::kBytes + column_part * Ring::kWarpgroupRowsBytes;
  float acc[Block::kAccumulators] = {};  // never reaches a wgmma uninitialised
  int stage = 0;
  uint32_t phase = 0;
  for (int unit = blockIdx.x; unit < unit_count<Block>(p, plan.splits); unit += gridDim.x) {
    const Unit u = unit_of<Block>(p, plan, unit);
    int previous = 0;  // the stage of the K tile before, still being read
    for (int t = u.k_begin; t < u.k_end; ++t) {
      mbarrier_wait(full + stage * sizeof(uint64_t), phase);  // its bytes have landed
      const uint32_t a = ring + stage * Ring::kStageBytes;    // the stage: A tile, then B tile
      multiply_k_tile<typename Ring::A, typename Ring::B>(acc, a + a_offset, a + b_offset,
                                                          t > u.k_begin);
      wgmma_wait<1>();  // K tile t - 1's wgmmas are done: its stage goes back to the producer
      if (t > u.k_begin && lane == 0) mbarrier_arrive(empty + previous * sizeof(uint64_t));
      previous = stage;
      if (++stage == Block::kStages) stage = 0, phase ^= 1;
    }
    wgmma_wait<0>();
    if (lane == 0) mbarrier_arrive(empty + previous * sizeof(uint64_t));
    accumulators_settled(acc);
    if constexpr (kSplitK) {
      const int counter = u.tile * Block::kConsumers + consumer;
      if (!sum_splits_if_last(acc, plan, counter, u.split, consumer, arrived_last + consumer)) {
        continue;
      }
    }
    finish_transposed<kKind>(p, acc, u.row0 + row_part * kWgmmaM,
                             u.batch0 + column_part * Block::kConsumerColumns);
  }
}

#endif  // sm_90a

// The kernel body: the two kernels below differ only in kSplitK, and have names of their own so
// that a profile, or a test, tells which one ran.
template <Op kOpA, Op kOpB, EpilogueKind kKind, int kTileRows, int kBatchTile, bool kSplitK>
__device__ __forceinline__ void swap_ab_gemm(const CUtensorMap& map_a, const CUtensorMap& map_b,
                                             const GemmProblem& p, const SplitPlan& plan) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using B = Block<kOpA, kOpB, kTileRows, kBatchTile>;
  using Ring = typename B::Ring;
  extern __shared__ __align__(16) uint8_t smem[];
  __shared__ int arrived_last[B::kConsumers];
  const uint32_t ring = ring_start(smem);
  const uint32_t full = ring + B::kStages * Ring::kStageBytes;
  const uint32_t empty = full + B::kStages * sizeof(uint64_t);
  if (threadIdx.x == 0) {
    for (int s = 0; s < B::kStages; ++s) {
      mbarrier_init(full + s * sizeof(uint64_t), 1);  // the producer's arrive.expect_tx
      mbarrier_init(empty + s * sizeof(uint64_t), B::kConsumerWarps);
    }
    fence_proxy_async();
  }
  __syncthreads();  // the barriers exist before anyone waits on them

  // With two consumers, chapter 08's registers: the producer gives back, the consumers take.
  const int warpgroup = threadIdx.x / kWarpgroupThreads;
  if (warpgroup == 0) {
    if constexpr (B::kConsumers > 1) {
      warp_specialized::setmaxnreg_dec<warp_specialized::kProducerRegisters>();
    }
    if (threadIdx.x == 0) produce<B>(map_a, map_b, p, plan, ring, full, empty);
  } else {
    if constexpr (B::kConsumers > 1) {
      warp_specialized::setmaxnreg_inc<warp_specialized::kConsumerRegisters>();
    }
    consume<B, kKind, kSplitK>(warpgroup - 1, p, plan, ring, full, empty, arrived_last);
  }
#else
  __trap();  // built without sm_90a: see wgmma.cuh
#endif
}

// K whole: every block walks all of K for its tiles and finishes them.
template <Op kOpA, Op kOpB, EpilogueKind kKind, int kTileRows, int kBatchTile>
__global__ void __launch_bounds__(Block<kOpA, kOpB, kTileRows, kBatchTile>::kThreads,
                                  Block<kOpA, kOpB, kTileRows, kBatchTile>::kBlocksPerSm)
    swap_ab_gemm_kernel(const __grid_constant__ CUtensorMap map_a,
                        const __grid_constant__ CUtensorMap map_b,
                        const __grid_constant__ GemmProblem p, const SplitPlan plan) {
  swap_ab_gemm<kOpA, kOpB, kKind, kTileRows, kBatchTile, false>(map_a, map_b, p, plan);
}

// K split: the last split of each tile to arrive adds them up and finishes the tile.
template <Op kOpA, Op kOpB, EpilogueKind kKind, int kTileRows, int kBatchTile>
__global__ void __launch_bounds__(Block<kOpA, kOpB, kTileRows, kBatchTile>::kThreads,
                                  Block<kOpA, kOpB, kTileRows, kBatchTile>::kBlocksPerSm)
    swap_ab_split_k_gemm_kernel(const __grid_constant__ CUtensorMap map_a,
                                const __grid_constant__ CUtensorMap map_b,
                                const __grid_constant__ GemmProblem p, const SplitPlan plan) {
  swap_ab_gemm<kOpA, kOpB, kKind, kTileRows, kBatchTile, true>(map_a, map_b, p, plan);
}

// The blocks of a block tile the GPU runs at once. The same block with K split or whole: the
// persistent grid, the block tile and the splits are sized by one count.
template <Op kOpA, Op kOpB, EpilogueKind kKind, int kTileRows, int kBatchTile>
int resident_swap_ab_blocks() {
  using B = Block<kOpA, kOpB, kTileRows, kBatchTile>;
  const auto kernel = swap_ab_split_k_gemm_kernel<kOpA, kOpB, kKind, kTileRows, kBatchTile>;
  static const int resident = resident_blocks(kernel, B::kThreads, B::Ring::kSmemBytes);
  return resident;
}

template <Op kOpA, Op kOpB, EpilogueKind kKind, int kTileRows, int kBatchTile>
void launch_swap_ab(const GemmProblem& p, cudaStream_t stream) {
  using B = Block<kOpA, kOpB, kTileRows, kBatchTile>;
  using Ring = typename B::Ring;
  const auto whole_k = swap_ab_gemm_kernel<kOpA, kOpB, kKind, kTileRows, kBatchTile>;
  const auto split_k = swap_ab_split_k_gemm_kernel<kOpA, kOpB, kKind, kTileRows, kBatchTile>;
  const int resident = resident_swap_ab_blocks<kOpA, kOpB, kKind, kTileRows, kBatchTile>();
  [[maybe_unused]] static const bool opted_in = allow_shared_memory(whole_k, Ring::kSmemBytes);
  static const int sms = multiprocessors();
  const SplitPlan plan = plan_split(p, {kTileRows, kBatchTile}, sms);
  const TensorMaps<typename Ring::A, typename Ring::B> maps(swapped(p));
  const int units = tiles_of(p, kTileRows, kBatchTile) * plan.splits;
  const auto kernel = plan.splits > 1 ? split_k : whole_k;
  kernel<<<std::min(units, resident), B::kThreads, Ring::kSmemBytes, stream>>>(maps.a, maps.b, p,
                                                                               plan);
}

inline void launch_gemm(const GemmProblem& p, cudaStream_t stream) {
  with_epilogue_kind(p.epilogue.kind, [&](auto kind) {
    with_operand_ops(p, [&](auto op_a, auto op_b) {
      constexpr Op kOpA = decltype(op_a)::value, kOpB = decltype(op_b)::value;
      constexpr EpilogueKind kKind = decltype(kind)::value;
      if constexpr (kWeightUpdateBuilt<kOpA, kKind>) {
        if (weight_update_takes<kKind>(p)) return launch_weight_update<kKind>(p, stream);
      }
      if (swap_ab_takes<kOpA, kOpB>(p)) {
        const auto resident = [](BlockTile tile) {
          int blocks = 0;
          with_block_tile<kOpA>(tile, [&](auto rows, auto batch) {
            blocks = resident_swap_ab_blocks<kOpA, kOpB, kKind, rows, batch>();
          });
          return blocks;
        };
        const BlockTile tile = block_tile_for<kOpA>(p, resident);
        if (tile.batch != kNoBlockTile.batch) {
          with_block_tile<kOpA>(tile, [&](auto rows, auto batch) {
            launch_swap_ab<kOpA, kOpB, kKind, rows, batch>(p, stream);
          });
          return;
        }
      }
      warp_specialized::launch_gemm(p, stream);
    });
  });
}

}  // namespace mnist::swap_ab_split_k
