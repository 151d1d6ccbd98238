// Chapter 10: the tile scheduler. Chapter 09's producer and consumers, in blocks that stay for
// many tiles, in an order that shares L2, with the stored result sent out by TMA.
//
// In chapter 09 a block computes one tile and ends: its epilogue runs while its tensor cores
// idle, the next block's prologue waits for the SM, and the tiles that run at once are a band of
// rows of C, every one of them reading all of B from memory.
//
// Schedule: persistent, grouped. The kernel launches one block per SM, and block b computes the
// tiles b, b + grid, b + 2 grid, ... of C; its producer keeps loading the next tile while the
// consumers finish the last one. The stage and phase counters run on through all the tiles of the
// block. The tiles are numbered in groups of 16 tile rows, column by column within a group, so
// that the ~132 tiles computed at once share their operands in L2: at 8192^3 they read 2048 rows
// of A and ~2100 columns of B, where row by row they would read ~530 rows of A and all 8192
// columns of B.
//
// The stored result. A plain product (kStore, the square benchmarks') leaves chapter 09's
// consumers as 64 scattered 8-byte stores per thread, while the tensor cores wait. Here each
// consumer writes 32 columns of its 64 rows into a staging box in shared memory, in the swizzled
// layout TMA reads, and one thread hands the box to the copy engine (tma_store.cuh), which writes
// whole lines of C while the warpgroup fills the next box; two boxes per consumer, so the last
// ones of a tile are still leaving while the next tile's main loop starts. The stores ask L2 to
// give C's lines up first (l2_evict_first). The fused epilogues of training keep chapter 08's
// stores.
//
// When: the products chapter 07's kernel takes (tma_kernel_takes in 07_tma/dispatch.cuh); the
// others go to chapter 06's kernel. The kernel and its launch are in this header, which the later
// chapters include for the products their own kernels leave; gemm.cuh is the chapter's GEMM
// interface.
#pragma once

#include <cstdint>

#include "07_tma/dispatch.cuh"
#include "07_tma/tma.cuh"
#include "08_wgmma/wgmma.cuh"
#include "09_warp_specialized/roles.cuh"
#include "10_tile_scheduler/tma_store.cuh"
#include "epilogue.cuh"
#include "gemm_interface.cuh"
#include "occupancy.cuh"

namespace mnist::tile_scheduler {

using namespace wgmma;
using namespace warp_specialized;

constexpr int kBlockTileM = 128;      // rows of C per block tile: 64 per consumer warpgroup
constexpr int kBlockTileN = kWgmmaN;  // 256 columns of C
constexpr int kConsumers = kBlockTileM / kWgmmaM;                    // 2 consumer warpgroups
constexpr int kThreads = (1 + kConsumers) * kWarpgroupThreads;       // 384, the producer first
constexpr int kConsumerWarps = kConsumers * kWarpgroupThreads / 32;  // 8 arrivals empty a stage
constexpr int kStages = 4;                                  // K tiles in the shared-memory ring
constexpr int kLaunchRegisters = 65536 / kThreads / 8 * 8;  // 168 per thread at one block per SM
constexpr int kGroupTileRows = 16;                          // tile rows per group of the tile order
// The stored result (kStore) leaves through shared memory: per consumer two staging buffers of one
// TMA box each, kStoreBoxColumns (tma_store.cuh) by the consumer's 64 rows.
constexpr int kStoreBoxBytes = kStoreBoxColumns * kWgmmaM * int(sizeof(float));  // 8 KiB
constexpr int kStoreBuffers = 2;
constexpr int kStagingBytes = kConsumers * kStoreBuffers * kStoreBoxBytes;  // 32 KiB
static_assert(kProducerRegisters * kWarpgroupThreads +
                      kConsumerRegisters * kConsumers * kWarpgroupThreads <=
                  kLaunchRegisters * kThreads,
              "setmaxnreg can only hand out the registers the block was launched with");

// The ring (07_tma/tma.cuh): kStages stages, then two barriers per stage, full[kStages] and
// empty[kStages].
template <Op kOpA, Op kOpB>
using RingFor = TmaRing<kBlockTileM, kBlockTileN, kOpA, kOpB, kStages, 2>;

// The block's shared memory: the ring's stages, the staging buffers, then the ring's barriers.
template <class Ring>
constexpr int kSmemBytes = Ring::kSmemBytes + kStagingBytes;

// Tiles of C: the blocks' loop bound on the device, the grid's upper bound on the host.
__host__ __device__ inline int tile_count(const GemmProblem& p) {
  return ((p.m + kBlockTileM - 1) / kBlockTileM) * ((p.n + kBlockTileN - 1) / kBlockTileN);
}

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)

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
  uint32_t phase = 0;  // parity of the stage's current use, run on through the tiles (chapter 09)
  for (int tile = blockIdx.x; tile < tile_count(p); tile += gridDim.x) {
    int row0, col0;
    tile_origin(p, tile, row0, col0);
    for (int t = 0; t < k_tiles; ++t) {
      const uint32_t full_barrier = full + stage * sizeof(uint64_t);
      mbarrier_wait(empty + stage * sizeof(uint64_t), phase ^ 1);  // the previous use is read
      mbarrier_arrive_expect_tx(full_barrier, Ring::kStageBytes);
      const uint32_t a = ring + stage * Ring::kStageBytes;
      tma_load_tile<typename Ring::A>(map_a, a, row0, t * kTileK, full_barrier);
      tma_load_tile<typename Ring::B>(map_b, a + Ring::A::kBytes, col0, t * kTileK, full_barrier);
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
      multiply_k_tile<typename Ring::A, typename Ring::B>(acc, a + consumer * kWarpgroupRowsBytes,
                                                          a + Ring::A::kBytes, t > 0);
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
    tile_scheduler_gemm_kernel(const __grid_constant__ CUtensorMap map_a,
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

template <Op kOpA, Op kOpB, EpilogueKind kKind>
void launch_tile_scheduler(const GemmProblem& p, cudaStream_t stream) {
  using Ring = RingFor<kOpA, kOpB>;
  // The persistent grid: as many blocks as the GPU runs at once (one per SM).
  const auto kernel = tile_scheduler_gemm_kernel<kOpA, kOpB, kKind>;
  static const int resident = resident_blocks(kernel, kThreads, kSmemBytes<Ring>);
  const TensorMaps<typename Ring::A, typename Ring::B> maps(p);
  const bool store_by_tma = kKind == EpilogueKind::kStore && stores_by_tma(p);
  const CUtensorMap map_c = store_by_tma ? store_map(p) : CUtensorMap{};
  const int blocks = std::min(tile_count(p), resident);
  kernel<<<blocks, kThreads, kSmemBytes<Ring>, stream>>>(maps.a, maps.b, map_c, store_by_tma, p);
}

// Chapter 10's GEMM: this kernel where tma_kernel_takes the product, chapter 06's elsewhere. The
// chapters after it send it the products their own kernels leave.
// Compiled once, in persistent_gemm.cu (chapters/meson.build).
void launch_tile_scheduler_or_fall_back(const GemmProblem& p, cudaStream_t stream);

}  // namespace mnist::tile_scheduler
