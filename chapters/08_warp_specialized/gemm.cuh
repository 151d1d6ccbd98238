// Chapter 08: warp specialisation. Chapter 07's wgmma and TMA, with the copying and the
// multiplying given to different warpgroups, blocks that stay for many tiles, and the stored result
// sent out by TMA.
//
// In chapter 07 every thread did both jobs: each K step all 256 threads waited for a copy, issued
// their wgmmas, then met at __syncthreads so that thread 0 could refill the freed stage. The
// barrier makes the two warpgroups wait for each other every 64 of K, and the next copy starts only
// after the slowest one is done. Since one thread issues all the copies, the roles can separate:
//
//   producer: warpgroup 0 (thread 0 works)       consumers: warpgroups 1 and 2
//   for K tile t of the block, s = t % 4:        for K tile t, s = t % 4:
//     wait on empty[s]: stage s is free             wait on full[s]: stage s has landed
//     arrive on full[s], expecting 48 KB            wgmmas on stage s, committed as one group
//     TMA: A tile -> stage s, B tile -> stage s     wait_group 1: tile t-1's group is done, so
//       (the copies count their bytes on full[s])     arrive on empty[(t-1) % 4]
//
// The producer and the consumers meet only at two mbarriers per stage, never at __syncthreads:
//   full[s]:  a phase completes with 1 arrival (the producer's expect_tx) and 48 KB of TMA bytes
//   empty[s]: a phase completes with 8 arrivals (lane 0 of every consumer warp)
// Stage s is used for the k-th time by the block's K tile t = 4 k + s, counted through all the
// tiles of the block, and that use is phase k of both its barriers. So the consumers wait on
// full[s] with parity k & 1, and the producer, before its k-th fill, waits for the consumers'
// (k-1)-th release, phase k - 1 of empty[s], parity (k & 1) ^ 1. For k = 0 there is nothing to
// wait for, and none is needed: on a fresh barrier, whose phase 0 is still running, a wait for
// parity 1 returns at once (the phase before phase 0 counts as complete).
//
// Registers (PTX ISA, "setmaxnreg"). The producer needs few registers and the consumers' 128
// accumulators many. 384 threads at one block per SM may use 168 registers each (65536 / 384, down
// to a multiple of 8), so the producer warpgroup gives registers back to the block's pool
// (setmaxnreg.dec to 40) and the consumers take them (setmaxnreg.inc to 232): 128 x 40 +
// 256 x 232 = 384 x 168.
//
// Schedule: persistent, grouped. The kernel launches one block per SM, and block b computes the
// tiles b, b + grid, b + 2 grid, ... of C; its producer keeps loading the next tile while the
// consumers finish the last one. The tiles are numbered in groups of 16 tile rows, column by
// column within a group, so that the ~132 tiles computed at once share their operands in L2: at
// 8192^3 they read 2048 rows of A and ~2100 columns of B, where row by row they would read ~530
// rows of A and all 8192 columns of B.
//
// The stored result. In chapter 07 a plain product (kStore, the square benchmarks') leaves as 64
// scattered 8-byte stores per thread, while the tensor cores wait; on the H100 a copy of this
// kernel that stores nothing (its results still used) runs 3-13% faster than this one does
// (docs/08_warp_specialized.md), so the store is worth overlapping. Here each consumer writes 32
// columns of its 64 rows into a staging box in shared memory, in the swizzled layout TMA reads,
// and one thread hands the box to the copy engine, which writes whole lines of C while the
// warpgroup fills the next box; two boxes per consumer, so the last ones of a tile are still
// leaving while the next tile's main loop starts (store_accumulators). The stores ask L2 to give
// C's lines up first (l2_evict_first): where C is most of the bytes, as in the weight gradients
// with K = 256, 8192 x 8192 x 256 took 0.88 times as long as without the hint, and the squares as
// long within their drift (docs/results/session28, call 2). The fused epilogues of training keep
// chapter 07's stores.
//
// When: the products chapter 07's kernel takes (wgmma_takes in 07_wgmma/dispatch.cuh); the
// others go to chapter 06's kernel. The rest is chapter 07's (wgmma.cuh, tma.cuh).
#pragma once

#include <algorithm>
#include <cstdint>

#include "06_fused_step/gemm.cuh"
#include "07_wgmma/dispatch.cuh"
#include "07_wgmma/tma.cuh"
#include "07_wgmma/wgmma.cuh"
#include "epilogue.cuh"
#include "gemm_interface.cuh"
#include "occupancy.cuh"

namespace mnist::warp_specialized {

using namespace wgmma;

// The kernels apply the epilogue (gemm_interface.cuh) themselves, and the trainer replays each
// step as a CUDA graph, as from chapter 06 on.
constexpr bool kFusedEpilogue = true;
constexpr bool kReplayStepAsGraph = true;

// Chapter 07's instructions and setmaxnreg: an H100-class GPU and a build with sm_90a code.
constexpr bool kNeedsSm90a = true;

constexpr int kBlockTileM = 128;      // rows of C per block tile: 64 per consumer warpgroup
constexpr int kBlockTileN = kWgmmaN;  // 256 columns of C
constexpr int kConsumers = kBlockTileM / kWgmmaM;                    // 2 consumer warpgroups
constexpr int kThreads = (1 + kConsumers) * kWarpgroupThreads;       // 384, the producer first
constexpr int kConsumerWarps = kConsumers * kWarpgroupThreads / 32;  // 8 arrivals empty a stage
constexpr int kStages = 4;                                  // K tiles in the shared-memory ring
constexpr int kLaunchRegisters = 65536 / kThreads / 8 * 8;  // 168 per thread at one block per SM
constexpr int kProducerRegisters = 40;                      // per thread after setmaxnreg.dec
constexpr int kConsumerRegisters = 232;                     // per thread after setmaxnreg.inc
constexpr int kGroupTileRows = 16;                          // tile rows per group of the tile order
// The stored result (kStore) leaves through shared memory: per consumer two staging buffers of one
// TMA box each, 32 columns (128 bytes of floats, the swizzle span) by the consumer's 64 rows.
constexpr int kStoreBoxColumns = kSwizzleBytes / int(sizeof(float));             // 32
constexpr int kStoreBoxBytes = kStoreBoxColumns * kWgmmaM * int(sizeof(float));  // 8 KB
constexpr int kStoreBuffers = 2;
constexpr int kStagingBytes = kConsumers * kStoreBuffers * kStoreBoxBytes;  // 32 KB
static_assert(kProducerRegisters * kWarpgroupThreads +
                      kConsumerRegisters * kConsumers * kWarpgroupThreads <=
                  kLaunchRegisters * kThreads,
              "setmaxnreg can only hand out the registers the block was launched with");

// The ring (wgmma.cuh): kStages stages, then two barriers per stage, full[kStages] and
// empty[kStages].
template <Op kOpA, Op kOpB>
using RingFor = Ring<kBlockTileM, kBlockTileN, kOpA, kOpB, kStages, 2>;

// The block's shared memory: the ring's stages, the staging buffers, then the ring's barriers.
template <class Ring>
constexpr int kSmemBytes = Ring::kSmemBytes + kStagingBytes;

// Tiles of C: the blocks' loop bound on the device, the grid's upper bound on the host.
__host__ __device__ inline int tile_count(const GemmProblem& p) {
  return ((p.m + kBlockTileM - 1) / kBlockTileM) * ((p.n + kBlockTileN - 1) / kBlockTileN);
}

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)

template <int kRegisters>
__device__ __forceinline__ void setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegisters));
}

template <int kRegisters>
__device__ __forceinline__ void setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegisters));
}

// The first row and column of C of tile `tile` in the grouped order: groups of kGroupTileRows
// tile rows (the last group may have fewer), numbered column by column within a group.
__device__ __forceinline__ void tile_origin(const GemmProblem& p, int tile, int& row0, int& col0) {
  const int tiles_m = (p.m + kBlockTileM - 1) / kBlockTileM;
  const int tiles_n = (p.n + kBlockTileN - 1) / kBlockTileN;
  const int per_group = kGroupTileRows * tiles_n;
  const int first_row = tile / per_group * kGroupTileRows;
  const int group_rows = min(tiles_m - first_row, kGroupTileRows);
  const int in_group = tile % per_group;
  row0 = (first_row + in_group % group_rows) * kBlockTileM;
  col0 = in_group / group_rows * kBlockTileN;
}

// An L2 cache policy (PTX ISA, "createpolicy") under which the lines a copy writes are the first
// L2 gives up when it needs room. C is written once and read by no block of the kernel: its lines
// should leave for DRAM before the operand tiles, which the group's other tiles read again.
__device__ __forceinline__ uint64_t l2_evict_first() {
  uint64_t policy;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(policy));
  return policy;
}

// TMA's store: the box of the stored matrix whose first element is (inner, outer), from shared
// memory at `source`, in this thread's current bulk group, its lines cached in L2 under `policy`.
// The copy engine skips what lies outside the matrix.
__device__ __forceinline__ void tma_store(const CUtensorMap& map, int inner, int outer,
                                          uint32_t source, uint64_t policy) {
  asm volatile(
      "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group.L2::cache_hint [%0, {%1, %2}], [%3], "
      "%4;\n" ::"l"(reinterpret_cast<uint64_t>(&map)),
      "r"(inner), "r"(outer), "r"(source), "l"(policy)
      : "memory");
}

__device__ __forceinline__ void bulk_commit() {
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}

// Returns once at most kPending of this thread's bulk groups have still to read their source.
template <int kPending>
__device__ __forceinline__ void bulk_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(kPending) : "memory");
}

// Returns once all of this thread's bulk groups are complete: their writes done.
__device__ __forceinline__ void bulk_wait_all() {
  asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
}

// A barrier of consumer warpgroup `consumer` alone (named barrier 1 + consumer; __syncthreads uses
// 0): the producer and the other consumer go on. The barrier's number is written into the
// instruction: given in a register, ptxas reserves all 16 of the block's barriers.
__device__ __forceinline__ void warpgroup_sync(int consumer) {
  if (consumer == 0) {
    asm volatile("bar.sync 1, %0;\n" ::"n"(kWarpgroupThreads) : "memory");
  } else {
    asm volatile("bar.sync 2, %0;\n" ::"n"(kWarpgroupThreads) : "memory");
  }
}

// Byte `byte` of row `row` of a box of 128-byte rows, where the 128-byte swizzle of tma.cuh puts
// it: 16-byte chunk j of row r at j ^ (r % 8).
__device__ __forceinline__ int swizzled(int row, int byte) {
  return row * kSwizzleBytes + ((byte / 16) ^ (row % 8)) * 16 + byte % 16;
}

// The consumer's 64 x 256 accumulators, whose first element is (row0, col0) of C, stored by TMA
// through its two staging buffers at `staging`, 32 columns at a time. Each thread writes its
// float pairs into the box swizzled, so that a warp's 8 rows fall in different banks; thread 0 of
// the warpgroup then starts the box's store and goes on. Before a buffer is written again, the
// store that read it kStoreBuffers boxes ago must have read it (bulk_wait_read). The last boxes of
// a tile are still being stored while the consumer multiplies the next tile.
__device__ __forceinline__ void store_accumulators(const CUtensorMap& map_c,
                                                   const float (&acc)[kAccumulators], int consumer,
                                                   uint32_t staging, int row0, int col0) {
  const int thread = threadIdx.x % kWarpgroupThreads;
  const int warp = thread / 32, lane = thread % 32;
  constexpr int kBlocksPerBox = kStoreBoxColumns / 8;  // 8-column blocks of the accumulators
#pragma unroll
  for (int box = 0; box < kWgmmaN / kStoreBoxColumns; ++box) {
    const uint32_t buffer = staging + box % kStoreBuffers * kStoreBoxBytes;
    if (thread == 0) bulk_wait_read<kStoreBuffers - 1>();
    warpgroup_sync(consumer);  // the buffer's previous store has read it
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = warp * 16 + lane / 4 + 8 * h;
#pragma unroll
      for (int b = 0; b < kBlocksPerBox; ++b) {
        const int i = box * kBlocksPerBox + b;  // the 8-column block of the accumulators
        const int byte = (8 * b + lane % 4 * 2) * int(sizeof(float));  // within the box's row
        const uint32_t at = buffer + swizzled(r, byte);
        asm volatile("st.shared.v2.f32 [%0], {%1, %2};\n" ::"r"(at), "f"(acc[4 * i + 2 * h]),
                     "f"(acc[4 * i + 2 * h + 1])
                     : "memory");
      }
    }
    fence_proxy_async();  // this thread's writes, visible to the copy engine
    warpgroup_sync(consumer);
    if (thread == 0) {
      tma_store(map_c, col0 + box * kStoreBoxColumns, row0, buffer, l2_evict_first());
      bulk_commit();
    }
  }
}

// The producer (one thread): fills the ring, stage after stage, with the K tiles of every tile
// of this block, as fast as the consumers empty it.
template <class Ring>
__device__ __forceinline__ void produce(const CUtensorMap& map_a, const CUtensorMap& map_b,
                                        const GemmProblem& p, uint32_t ring, uint32_t full,
                                        uint32_t empty) {
  const int k_tiles = (p.k + kTileK - 1) / kTileK;
  int stage = 0;
  uint32_t phase = 0;  // parity of the stage's current use, as at the top of the file
  for (int tile = blockIdx.x; tile < tile_count(p); tile += gridDim.x) {
    int row0, col0;
    tile_origin(p, tile, row0, col0);
    for (int t = 0; t < k_tiles; ++t) {
      const uint32_t full_barrier = full + stage * sizeof(uint64_t);
      mbarrier_wait(empty + stage * sizeof(uint64_t), phase ^ 1);  // the previous use is read
      mbarrier_arrive_expect_tx(full_barrier, Ring::kStageBytes);
      const uint32_t a = ring + stage * Ring::kStageBytes;
      load_tile<typename Ring::A>(map_a, a, row0, t * kTileK, full_barrier);
      load_tile<typename Ring::B>(map_b, a + Ring::A::kBytes, col0, t * kTileK, full_barrier);
      if (++stage == kStages) stage = 0, phase ^= 1;
    }
  }
}

// A consumer warpgroup: rows [consumer * 64, consumer * 64 + 64) of every tile of this block.
template <class Ring, EpilogueKind kKind>
__device__ __forceinline__ void consume(int consumer, const GemmProblem& p, uint32_t ring,
                                        uint32_t full, uint32_t empty, const CUtensorMap& map_c,
                                        bool store_by_tma, uint32_t staging) {
  const int lane = threadIdx.x % 32;
  const int k_tiles = (p.k + kTileK - 1) / kTileK;
  const bool paired = columns_paired<kKind>(p);
  float acc[kAccumulators] = {};  // never reaches a wgmma uninitialised
  int stage = 0;
  uint32_t phase = 0;
  for (int tile = blockIdx.x; tile < tile_count(p); tile += gridDim.x) {
    int row0, col0;
    tile_origin(p, tile, row0, col0);
    int previous = 0;  // the stage of the K tile before, still being read
    for (int t = 0; t < k_tiles; ++t) {
      mbarrier_wait(full + stage * sizeof(uint64_t), phase);  // its bytes have landed
      const uint32_t a = ring + stage * Ring::kStageBytes;    // the stage: A tile, then B tile
      multiply_k_tile<typename Ring::A, typename Ring::B>(
          acc, a + consumer * Ring::kWarpgroupRowsBytes, a + Ring::A::kBytes, t > 0);
      wgmma_wait<1>();  // K tile t - 1's wgmmas are done: its stage goes back to the producer
      if (t > 0 && lane == 0) mbarrier_arrive(empty + previous * sizeof(uint64_t));
      previous = stage;
      if (++stage == kStages) stage = 0, phase ^= 1;
    }
    wgmma_wait<0>();
    if (lane == 0) mbarrier_arrive(empty + previous * sizeof(uint64_t));
    accumulators_settled(acc);
    if (kKind == EpilogueKind::kStore && store_by_tma) {
      store_accumulators(map_c, acc, consumer, staging, row0 + consumer * kWgmmaM, col0);
    } else {
      finish_accumulators<kKind>(p, acc, row0 + consumer * kWgmmaM, col0, paired);
    }
  }
  if (threadIdx.x % kWarpgroupThreads == 0) bulk_wait_all();  // C is written when the kernel ends
}

#endif  // sm_90a

// One block per SM, looping over tiles. p is __grid_constant__ because finish_element takes it by
// reference: the kernel then reads it where it is, without a copy per thread.
template <Op kOpA, Op kOpB, EpilogueKind kKind>
__global__ void __launch_bounds__(kThreads, 1)
    warp_specialized_gemm_kernel(const __grid_constant__ CUtensorMap map_a,
                                 const __grid_constant__ CUtensorMap map_b,
                                 const __grid_constant__ CUtensorMap map_c, bool store_by_tma,
                                 const __grid_constant__ GemmProblem p) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using Ring = RingFor<kOpA, kOpB>;
  extern __shared__ __align__(16) uint8_t smem[];
  const uint32_t ring = ring_start(smem);
  const uint32_t staging = ring + kStages * Ring::kStageBytes;  // a swizzle atom apart, as the ring
  const uint32_t full = staging + kStagingBytes;
  const uint32_t empty = full + kStages * sizeof(uint64_t);
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      mbarrier_init(full + s * sizeof(uint64_t), 1);  // the producer's arrive.expect_tx
      mbarrier_init(empty + s * sizeof(uint64_t), kConsumerWarps);
    }
    fence_proxy_async();
  }
  __syncthreads();  // the barriers exist before anyone waits on them

  // setmaxnreg is executed by all warps of a warpgroup alike, so the roles split by warpgroup.
  const int warpgroup = threadIdx.x / kWarpgroupThreads;
  if (warpgroup == 0) {
    setmaxnreg_dec<kProducerRegisters>();
    if (threadIdx.x == 0) produce<Ring>(map_a, map_b, p, ring, full, empty);
  } else {
    setmaxnreg_inc<kConsumerRegisters>();
    consume<Ring, kKind>(warpgroup - 1, p, ring, full, empty, map_c, store_by_tma,
                         staging + (warpgroup - 1) * kStoreBuffers * kStoreBoxBytes);
  }
#else
  __trap();  // built without sm_90a: see wgmma.cuh
#endif
}

// TMA can store C: its rows a multiple of 16 bytes, its start 16-byte aligned.
inline bool stores_by_tma(const GemmProblem& p) {
  return p.n % 4 == 0 && reinterpret_cast<uintptr_t>(p.c) % 16 == 0;
}

// The tensor map of C for store_accumulators: boxes of 32 columns by 64 rows, 128-byte swizzle.
inline CUtensorMap store_map(const GemmProblem& p) {
  return encode_tensor_map(p.c, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, int(sizeof(float)), p.n, p.m,
                           kStoreBoxColumns, kWgmmaM, CU_TENSOR_MAP_L2_PROMOTION_NONE, "C");
}

template <Op kOpA, Op kOpB, EpilogueKind kKind>
void launch_warp_specialized(const GemmProblem& p, cudaStream_t stream) {
  using Ring = RingFor<kOpA, kOpB>;
  // The persistent grid: as many blocks as the GPU runs at once (one per SM).
  const auto kernel = warp_specialized_gemm_kernel<kOpA, kOpB, kKind>;
  static const int resident = resident_blocks(kernel, kThreads, kSmemBytes<Ring>);
  const TensorMaps<typename Ring::A, typename Ring::B> maps(p);
  const bool store_by_tma = kKind == EpilogueKind::kStore && stores_by_tma(p);
  const CUtensorMap map_c = store_by_tma ? store_map(p) : CUtensorMap{};
  const int blocks = std::min(tile_count(p), resident);
  kernel<<<blocks, kThreads, kSmemBytes<Ring>, stream>>>(maps.a, maps.b, map_c, store_by_tma, p);
}

inline void launch_gemm(const GemmProblem& p, cudaStream_t stream) {
  launch_wgmma_or_fused_step(p, stream, [&](auto op_a, auto op_b, auto kind) {
    launch_warp_specialized<decltype(op_a)::value, decltype(op_b)::value, decltype(kind)::value>(
        p, stream);
  });
}

}  // namespace mnist::warp_specialized
