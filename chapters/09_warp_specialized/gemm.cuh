// Chapter 09: warp specialisation. Chapter 08's wgmma and TMA, with the copying and the
// multiplying given to different warpgroups.
//
// In chapter 08 every thread did both jobs: each K step all 256 threads waited for a copy, issued
// their wgmmas, then met at __syncthreads so that thread 0 could refill the freed stage. The
// barrier makes the two warpgroups wait for each other every 64 of K, and the next copy starts only
// after the slowest one is done. Since one thread issues all the copies, the roles can separate:
//
//   producer: warpgroup 0 (thread 0 works)       consumers: warpgroups 1 and 2
//   for K tile t, s = t % 4:                     for K tile t, s = t % 4:
//     wait on empty[s]: stage s is free             wait on full[s]: stage s has landed
//     arrive on full[s], expecting 48 KiB           wgmmas on stage s, committed as one group
//     TMA: A tile -> stage s, B tile -> stage s     wait_group 1: tile t-1's group is done, so
//       (the copies count their bytes on full[s])     arrive on empty[(t-1) % 4]
//
// The producer and the consumers meet only at two mbarriers per stage, never at __syncthreads:
//   full[s]:  a phase completes with 1 arrival (the producer's expect_tx) and 48 KiB of TMA bytes
//   empty[s]: a phase completes with 8 arrivals (lane 0 of every consumer warp)
// Stage s is used for the k-th time by K tile t = 4 k + s, and that use is phase k of both its
// barriers. So the consumers wait on full[s] with parity k & 1, and the producer, before its k-th
// fill, waits for the consumers' (k-1)-th release, phase k - 1 of empty[s], parity (k & 1) ^ 1.
// For k = 0 there is nothing to wait for, and none is needed: on a fresh barrier, whose phase 0 is
// still running, a wait for parity 1 returns at once (the phase before phase 0 counts as
// complete).
//
// Registers (PTX ISA, "setmaxnreg"). The producer needs few registers and the consumers' 128
// accumulators many. 384 threads at one block per SM may use 168 registers each (65536 / 384, down
// to a multiple of 8), so the producer warpgroup gives registers back to the block's pool
// (setmaxnreg.dec to 40) and the consumers take them (setmaxnreg.inc to 232): 128 x 40 +
// 256 x 232 = 384 x 168.
//
// When: the products chapter 07's kernel takes (tma_kernel_takes in 07_tma/dispatch.cuh); the
// others go to chapter 06's kernel.
#pragma once

#include <cstdint>

#include "07_tma/dispatch.cuh"
#include "07_tma/tma.cuh"
#include "08_wgmma/wgmma.cuh"
#include "09_warp_specialized/roles.cuh"
#include "epilogue.cuh"
#include "gemm_interface.cuh"
#include "occupancy.cuh"

namespace mnist::warp_specialized {

using namespace wgmma;

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
static_assert(kProducerRegisters * kWarpgroupThreads +
                      kConsumerRegisters * kConsumers * kWarpgroupThreads <=
                  kLaunchRegisters * kThreads,
              "setmaxnreg can only hand out the registers the block was launched with");

// The ring (07_tma/tma.cuh): kStages stages, then two barriers per stage, full[kStages] and
// empty[kStages].
template <Op kOpA, Op kOpB>
using RingFor = TmaRing<kBlockTileM, kBlockTileN, kOpA, kOpB, kStages, 2>;

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)

// The producer (one thread): fills the ring, stage after stage, with the K tiles of the block's
// tile, as fast as the consumers empty it.
template <class Ring>
__device__ __forceinline__ void produce(const CUtensorMap& map_a, const CUtensorMap& map_b,
                                        const GemmProblem& p, uint32_t ring, uint32_t full,
                                        uint32_t empty, int row0, int col0) {
  const int k_tiles = (p.k + kTileK - 1) / kTileK;
  int stage = 0;
  uint32_t phase = 0;  // parity of the stage's current use, as at the top of the file
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

// A consumer warpgroup: rows [consumer * 64, consumer * 64 + 64) of the block's tile.
template <class Ring, EpilogueKind kKind>
__device__ __forceinline__ void consume(int consumer, const GemmProblem& p, uint32_t ring,
                                        uint32_t full, uint32_t empty, int row0, int col0) {
  const int lane = threadIdx.x % 32;
  const int k_tiles = (p.k + kTileK - 1) / kTileK;
  float acc[kAccumulators] = {};  // never reaches a wgmma uninitialised
  int stage = 0;
  uint32_t phase = 0;
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
  accumulators_settled(acc);
  finish_accumulators<kKind>(p, acc, row0 + consumer * kWgmmaM, col0, columns_paired<kKind>(p));
}

#endif  // sm_90a

// One block per tile of C. p is __grid_constant__ because finish_element takes it by reference:
// the kernel then reads it where it is, without a copy per thread.
template <Op kOpA, Op kOpB, EpilogueKind kKind>
__global__ void __launch_bounds__(kThreads, 1)
    warp_specialized_gemm_kernel(const __grid_constant__ CUtensorMap map_a,
                                 const __grid_constant__ CUtensorMap map_b,
                                 const __grid_constant__ GemmProblem p) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using Ring = RingFor<kOpA, kOpB>;
  extern __shared__ __align__(16) uint8_t smem[];
  const uint32_t ring = ring_start(smem);
  const uint32_t full = ring + kStages * Ring::kStageBytes;
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
  const int row0 = blockIdx.y * kBlockTileM, col0 = blockIdx.x * kBlockTileN;
  if (warpgroup == 0) {
    setmaxnreg_dec<kProducerRegisters>();
    if (threadIdx.x == 0) produce<Ring>(map_a, map_b, p, ring, full, empty, row0, col0);
  } else {
    setmaxnreg_inc<kConsumerRegisters>();
    consume<Ring, kKind>(warpgroup - 1, p, ring, full, empty, row0, col0);
  }
#else
  __trap();  // built without sm_90a: see wgmma.cuh
#endif
}

template <Op kOpA, Op kOpB, EpilogueKind kKind>
void launch_warp_specialized(const GemmProblem& p, cudaStream_t stream) {
  using Ring = RingFor<kOpA, kOpB>;
  const auto kernel = warp_specialized_gemm_kernel<kOpA, kOpB, kKind>;
  [[maybe_unused]] static const bool opted_in = allow_shared_memory(kernel, Ring::kSmemBytes);
  const TensorMaps<typename Ring::A, typename Ring::B> maps(p);
  const dim3 grid((p.n + kBlockTileN - 1) / kBlockTileN, (p.m + kBlockTileM - 1) / kBlockTileM);
  kernel<<<grid, kThreads, Ring::kSmemBytes, stream>>>(maps.a, maps.b, p);
}

inline void launch_gemm(const GemmProblem& p, cudaStream_t stream) {
  launch_or_fall_back(p, stream, [&](auto op_a, auto op_b, auto kind) {
    launch_warp_specialized<decltype(op_a)::value, decltype(op_b)::value, decltype(kind)::value>(
        p, stream);
  });
}

}  // namespace mnist::warp_specialized
