// Chapter 11: thread block clusters. Chapter 10's persistent kernel, with its blocks launched in
// pairs that load the operand tile they share once, for both.
//
// Two tiles one above the other (rows row0 and row0 + 128, the same 256 columns) multiply the same
// B tile. Computed by unrelated blocks, each reads its A tile (16 KiB per K tile) and the whole B
// tile (32 KiB) from L2. A thread block cluster is a group of blocks that the GPU runs at the same
// time on SMs of one GPC, and that can write and arrive on each other's shared memory
// (cluster.cuh). Launched in clusters of two, the blocks of a cluster compute such a pair of tiles,
// and TMA's multicast writes one copy from L2 into both blocks' shared memory, at the same address
// in each, counting its bytes on the barrier at the same address in each. Block r of the cluster
// loads its own A tile and columns [128 r, 128 r + 128) of the B tile for both: 32 KiB read from L2
// per K tile and block instead of 48, and each block still receives the 48 KiB of a whole stage.
//
//   full[s]:  as in chapter 10, 48 KiB, of them 16 KiB from the other block's copies. Those may
//             land before this producer's expect_tx: they count against the phase all the same,
//             which cannot complete before the producer's arrival.
//   empty[s]: 16 arrivals, lane 0 of every consumer warp of this block and lane 1 of every consumer
//             warp of the other (an arrival at the address mapa gives): the stage is refilled in
//             both blocks at once, so neither producer may start before both blocks' consumers
//             are done with it.
//
// Schedule: chapter 10's, by pairs. Cluster c computes the tile pairs c, c + clusters, ...,
// numbered in groups of 8 pair rows (16 tile rows), column by column within a group. Where the
// tile rows are odd in number, block 1 of the last pair row computes a tile wholly below C: TMA
// reads zeros for its A, its stores leave nothing, and it still loads its half of B. Both blocks
// walk the same pairs, K tile by K tile, so that their stages' uses match. They meet at a cluster
// barrier once their barriers are initialised. A block must not exit while the other may still
// write its shared memory or arrive on its barriers: after its last fill, the producer waits until
// the consumers of both blocks have released every stage.
//
// When: the products chapter 07's kernel takes (tma_kernel_takes in 07_tma/dispatch.cuh); the
// others go to chapter 06's kernel.
#pragma once

#include <cstdint>

#include "07_tma/dispatch.cuh"
#include "07_tma/tma.cuh"
#include "08_wgmma/wgmma.cuh"
#include "09_warp_specialized/roles.cuh"
#include "10_tile_scheduler/tma_store.cuh"
#include "11_clusters/cluster.cuh"
#include "epilogue.cuh"
#include "gemm_interface.cuh"
#include "occupancy.cuh"

namespace mnist::clusters {

using namespace wgmma;
using namespace warp_specialized;
using namespace tile_scheduler;

// The kernels apply the epilogue (gemm_interface.cuh) themselves, and the trainer replays each
// step as a CUDA graph, as from chapter 06 on.
constexpr bool kFusedEpilogue = true;
constexpr bool kReplayStepAsGraph = true;

// Chapter 08's instructions and setmaxnreg: an H100-class GPU and a build with sm_90a code.
constexpr bool kNeedsSm90a = true;

constexpr int kBlockTileM = 128;      // rows of C per block tile: 64 per consumer warpgroup
constexpr int kBlockTileN = kWgmmaN;  // 256 columns of C
constexpr int kConsumers = kBlockTileM / kWgmmaM;                    // 2 consumer warpgroups
constexpr int kThreads = (1 + kConsumers) * kWarpgroupThreads;       // 384, the producer first
constexpr int kConsumerWarps = kConsumers * kWarpgroupThreads / 32;  // 8 arrivals empty a stage
constexpr int kStages = 4;                                  // K tiles in the shared-memory ring
constexpr int kLaunchRegisters = 65536 / kThreads / 8 * 8;  // 168 per thread at one block per SM
constexpr int kGroupTileRows = 16;                          // tile rows per group of the tile order
constexpr int kClusterBlocks = 2;                           // blocks per cluster: a pair of tiles
constexpr int kGroupPairRows = kGroupTileRows / kClusterBlocks;  // 8 pair rows per group
constexpr uint16_t kClusterMask = (1 << kClusterBlocks) - 1;     // multicast to both blocks
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

// The part of the B tile each block of a cluster loads for both: 128 of its 256 columns. In both
// layouts it is the ring's B tile cut in two, half r starting r * HalfB::kBytes into it: K-major,
// rows 128 r on of the one box; MN-major, boxes 2 r and 2 r + 1 of the four.
template <class Ring>
using HalfB = SwizzledTile<kBlockTileN / kClusterBlocks, Ring::B::kKMajor>;

// The block's shared memory: the ring's stages, the staging buffers, then the ring's barriers.
template <class Ring>
constexpr int kSmemBytes = Ring::kSmemBytes + kStagingBytes;

// Pairs of tiles of C, one above the other: the clusters' loop bound on the device, the grid's
// upper bound on the host.
__host__ __device__ inline int pair_count(const GemmProblem& p) {
  const int tiles_m = (p.m + kBlockTileM - 1) / kBlockTileM;
  return (tiles_m + kClusterBlocks - 1) / kClusterBlocks * ((p.n + kBlockTileN - 1) / kBlockTileN);
}

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)

// The first row and column of C of block `rank`'s tile of pair `pair` in the grouped order: groups
// of kGroupPairRows pair rows (the last group may have fewer), numbered column by column within a
// group; a pair row is two tile rows, block 0's above block 1's.
__device__ __forceinline__ void tile_origin(const GemmProblem& p, int pair, uint32_t rank,
                                            int& row0, int& col0) {
  const int tiles_m = (p.m + kBlockTileM - 1) / kBlockTileM;
  const int pair_rows = (tiles_m + kClusterBlocks - 1) / kClusterBlocks;
  const int tiles_n = (p.n + kBlockTileN - 1) / kBlockTileN;
  const int per_group = kGroupPairRows * tiles_n;
  const int first_row = pair / per_group * kGroupPairRows;
  const int group_rows = min(pair_rows - first_row, kGroupPairRows);
  const int in_group = pair % per_group;
  row0 = ((first_row + in_group % group_rows) * kClusterBlocks + int(rank)) * kBlockTileM;
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
// of this block and its half of the B tiles of both, as fast as the consumers of both empty it.
template <class Ring>
__device__ __forceinline__ void produce(const CUtensorMap& map_a, const CUtensorMap& map_b,
                                        const GemmProblem& p, uint32_t ring, uint32_t full,
                                        uint32_t empty) {
  using Half = HalfB<Ring>;
  const uint32_t rank = cluster_rank();
  const int k_tiles = (p.k + kTileK - 1) / kTileK;
  int stage = 0;
  uint32_t phase = 0;  // parity of the stage's current use, run on through the tiles (chapter 09)
  for (int pair = blockIdx.x / kClusterBlocks; pair < pair_count(p);
       pair += gridDim.x / kClusterBlocks) {
    int row0, col0;
    tile_origin(p, pair, rank, row0, col0);
    for (int t = 0; t < k_tiles; ++t) {
      const uint32_t full_barrier = full + stage * sizeof(uint64_t);
      mbarrier_wait(empty + stage * sizeof(uint64_t), phase ^ 1);  // read in both blocks
      mbarrier_arrive_expect_tx(full_barrier, Ring::kStageBytes);
      const uint32_t a = ring + stage * Ring::kStageBytes;
      tma_load_tile<typename Ring::A>(map_a, a, row0, t * kTileK, full_barrier);
      tma_load_tile_multicast<Half>(map_b, a + Ring::A::kBytes + rank * Half::kBytes,
                                    col0 + int(rank) * (kBlockTileN / kClusterBlocks), t * kTileK,
                                    full_barrier, kClusterMask);
      if (++stage == kStages) stage = 0, phase ^= 1;
    }
  }
  // Once the consumers of both blocks have released the last use of every stage, nothing more
  // arrives on this block's barriers: the block may exit.
  for (int s = 0; s < kStages; ++s) {
    mbarrier_wait(empty + stage * sizeof(uint64_t), phase ^ 1);
    if (++stage == kStages) stage = 0, phase ^= 1;
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
  const uint32_t rank = cluster_rank();
  // Lane 0 releases stages in block 0, lane 1 in block 1: empty, where both read it.
  const uint32_t release = cluster_address(empty, lane % kClusterBlocks);
  float acc[kAccumulators] = {};  // never reaches a wgmma uninitialised
  int stage = 0;
  uint32_t phase = 0;
  for (int pair = blockIdx.x / kClusterBlocks; pair < pair_count(p);
       pair += gridDim.x / kClusterBlocks) {
    int row0, col0;
    tile_origin(p, pair, rank, row0, col0);
    int previous = 0;  // the stage of the K tile before, still being read
    for (int t = 0; t < k_tiles; ++t) {
      mbarrier_wait(full + stage * sizeof(uint64_t), phase);  // its bytes have landed
      const uint32_t a = ring + stage * Ring::kStageBytes;    // the stage: A tile, then B tile
      multiply_k_tile<typename Ring::A, typename Ring::B>(acc, a + consumer * kWarpgroupRowsBytes,
                                                          a + Ring::A::kBytes, t > 0);
      wgmma_wait<1>();  // K tile t - 1's wgmmas are done: its stage goes back to the producer
      if (t > 0 && lane < kClusterBlocks) {
        mbarrier_arrive_cluster(release + previous * sizeof(uint64_t));
      }
      previous = stage;
      if (++stage == kStages) stage = 0, phase ^= 1;
    }
    wgmma_wait<0>();
    if (lane < kClusterBlocks) mbarrier_arrive_cluster(release + previous * sizeof(uint64_t));
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

// One block per SM, in clusters of two, looping over pairs of tiles. p is __grid_constant__ because
// finish_element takes it by reference: the kernel then reads it where it is, without a copy per
// thread.
template <Op kOpA, Op kOpB, EpilogueKind kKind>
__global__ void __launch_bounds__(kThreads, 1)
    clusters_gemm_kernel(const __grid_constant__ CUtensorMap map_a,
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
      mbarrier_init(empty + s * sizeof(uint64_t), kClusterBlocks * kConsumerWarps);
    }
    fence_barrier_init();
    fence_proxy_async();
  }
  cluster_sync();  // the barriers of both blocks exist before anyone waits or arrives on them

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

// How many clusters of two blocks of `kernel` the GPU runs at once: SMs pair within a GPC, so this
// may be fewer than half the SMs.
template <class Kernel>
int resident_clusters(Kernel kernel, int smem_bytes) {
  allow_shared_memory(kernel, smem_bytes);
  const ClusterLaunch launch(kClusterBlocks, kClusterBlocks, kThreads, smem_bytes, nullptr);
  int clusters = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveClusters(&clusters, kernel, &launch.config));
  return clusters;
}

template <Op kOpA, Op kOpB, EpilogueKind kKind>
void launch_clusters(const GemmProblem& p, cudaStream_t stream) {
  using Ring = RingFor<kOpA, kOpB>;
  // The persistent grid: as many clusters as the GPU runs at once (one block per SM).
  const auto kernel = clusters_gemm_kernel<kOpA, kOpB, kKind>;
  static const int resident = resident_clusters(kernel, kSmemBytes<Ring>);
  const TensorMaps<typename Ring::A, HalfB<Ring>> maps(p);  // B read in halves
  const bool store_by_tma = kKind == EpilogueKind::kStore && stores_by_tma(p);
  const CUtensorMap map_c = store_by_tma ? store_map(p) : CUtensorMap{};
  const int blocks = kClusterBlocks * std::min(pair_count(p), resident);
  const ClusterLaunch launch(kClusterBlocks, blocks, kThreads, kSmemBytes<Ring>, stream);
  CUDA_CHECK(cudaLaunchKernelEx(&launch.config, kernel, maps.a, maps.b, map_c, store_by_tma, p));
}

// Chapter 11's GEMM: this kernel where tma_kernel_takes the product, chapter 06's elsewhere.
// Compiled once, in gemm.cu (chapters/meson.build): the FP8 chapters include this file for the
// cluster's pieces.
void launch_gemm(const GemmProblem& p, cudaStream_t stream);

}  // namespace mnist::clusters
