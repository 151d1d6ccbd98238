// Chapter 08: wgmma. Chapter 07's TMA ring, with mma.sync replaced by Hopper's own tensor-core
// instruction.
//
// Chapter 07's warps still use the tensor cores as Ampere introduced them: each loads its
// fragments from shared memory into registers with ldmatrix and issues 16 x 8 x 16 mma.sync
// instructions, 64 of them per warp per K tile of 64, and 24 ldmatrix.x4 to feed them. Hopper's
// tensor cores reach their full rate only through wgmma (wgmma.cuh): a warpgroup of 4 warps
// multiplies 64 x 256 x 16 in one instruction, its operands read straight from shared memory
// through descriptors, asynchronously. The tiles TMA writes are already in the layout wgmma reads
// (the 128-byte swizzle), so only the inner loop changes.
//
// The block: 256 threads, two warpgroups, compute a 128 x 256 tile of C, each warpgroup a 64 x 256
// half with m64n256k16 (128 accumulator floats per thread), stepping K by 64 through a ring of
// kStages = 4 stages of 48 KiB (A 128 x 64 and B 256 x 64 halves). The loop is chapter 07's, one
// barrier per K step, with the MMAs now in flight while the warpgroup goes on:
//
//   prologue: thread 0 starts K tiles 0 .. kStages - 2, each into its stage, each counting its
//             48 KiB on full[stage]
//   K step t, stage s = t % kStages:
//     everyone  waits on full[s] (parity: the stage's use count & 1): tile t has landed
//               wgmma.fence, 4 wgmmas on stage s, commit them as one group
//               wgmma.wait_group 1: its own group of step t - 1 is done, stage (t - 1) % kStages
//               is no longer read by this warpgroup
//     barrier   __syncthreads: no warpgroup still reads stage (t - 1) % kStages
//     thread 0  starts K tile t + kStages - 1 into that stage
//
// The MMAs cost a warpgroup 4 instructions per K tile with no operand registers. What stays is
// that every thread both waits for copies and multiplies, and meets the others at a barrier every
// K step: chapter 09 separates the two roles.
//
// When: tma_kernel_takes() in 07_tma/dispatch.cuh, as in chapter 07; every other product goes to
// chapter 06's kernel.
//
// Edges. TMA writes zeros where a box reaches past the matrix (any M, N, K: the box still counts
// all its bytes), zeros add nothing, and the epilogue skips rows and columns outside C.
#pragma once

#include <algorithm>
#include <cstdint>

#include "07_tma/dispatch.cuh"
#include "07_tma/tma.cuh"
#include "08_wgmma/wgmma.cuh"
#include "epilogue.cuh"
#include "gemm_interface.cuh"
#include "occupancy.cuh"

namespace mnist::wgmma {

// The kernels apply the epilogue (gemm_interface.cuh) themselves, and the trainer replays each
// step as a CUDA graph, as from chapter 06 on.
constexpr bool kFusedEpilogue = true;
constexpr bool kReplayStepAsGraph = true;

// wgmma: an H100-class GPU and a build with sm_90a code (common/gpu_requirements.hpp).
constexpr bool kNeedsSm90a = true;

constexpr int kBlockTileM = 128;                           // rows of C per block: 64 per warpgroup
constexpr int kBlockTileN = kWgmmaN;                       // 256 columns of C per block
constexpr int kWarpgroups = kBlockTileM / kWgmmaM;         // 2
constexpr int kThreads = kWarpgroups * kWarpgroupThreads;  // 256
constexpr int kStages = 4;                                 // K tiles in the shared-memory ring

// The ring (07_tma/tma.cuh): kStages stages, then one barrier per stage, full[s].
template <Op kOpA, Op kOpB>
using RingFor = TmaRing<kBlockTileM, kBlockTileN, kOpA, kOpB, kStages, 1>;

// One block per tile of C. p is __grid_constant__ because finish_element takes it by reference:
// the kernel then reads it where it is, without a copy per thread.
template <Op kOpA, Op kOpB, EpilogueKind kKind>
__global__ void __launch_bounds__(kThreads, 1)
    wgmma_gemm_kernel(const __grid_constant__ CUtensorMap map_a,
                      const __grid_constant__ CUtensorMap map_b,
                      const __grid_constant__ GemmProblem p) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using Ring = RingFor<kOpA, kOpB>;
  extern __shared__ __align__(16) uint8_t smem[];
  const uint32_t ring = ring_start(smem);
  const uint32_t full = ring + kStages * Ring::kStageBytes;  // full[s] at full + 8 s
  const int warpgroup = threadIdx.x / kWarpgroupThreads;
  const int row0 = blockIdx.y * kBlockTileM, col0 = blockIdx.x * kBlockTileN;
  const int k_tiles = (p.k + kTileK - 1) / kTileK;

  // Thread 0 starts K tile t into stage t % kStages; the copies count their bytes on its barrier.
  const auto load_stage = [&](int t) {
    if (t >= k_tiles) return;
    const int stage = t % kStages;
    const uint32_t barrier = full + stage * sizeof(uint64_t);
    const uint32_t a = ring + stage * Ring::kStageBytes;
    mbarrier_arrive_expect_tx(barrier, Ring::kStageBytes);
    tma_load_tile<typename Ring::A>(map_a, a, row0, t * kTileK, barrier);
    tma_load_tile<typename Ring::B>(map_b, a + Ring::A::kBytes, col0, t * kTileK, barrier);
  };

  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) mbarrier_init(full + s * sizeof(uint64_t), 1);
    fence_proxy_async();
    for (int t = 0; t < kStages - 1; ++t) load_stage(t);  // prologue
  }
  __syncthreads();  // the barriers exist before anyone waits on them

  float acc[kAccumulators] = {};  // never reaches a wgmma uninitialised
  for (int t = 0; t < k_tiles; ++t) {
    const int stage = t % kStages;
    mbarrier_wait(full + stage * sizeof(uint64_t), t / kStages % 2);  // tile t has landed
    const uint32_t a = ring + stage * Ring::kStageBytes;  // the stage: A tile, then B tile
    multiply_k_tile<typename Ring::A, typename Ring::B>(acc, a + warpgroup * kWarpgroupRowsBytes,
                                                        a + Ring::A::kBytes, t > 0);
    wgmma_wait<1>();  // this warpgroup's wgmmas of step t - 1 are done
    __syncthreads();  // and every warpgroup's: stage (t - 1) % kStages is free
    if (threadIdx.x == 0) load_stage(t + kStages - 1);
  }
  wgmma_wait<0>();
  accumulators_settled(acc);
  finish_accumulators<kKind>(p, acc, row0 + warpgroup * kWgmmaM, col0, columns_paired<kKind>(p));
#else
  __trap();  // built without sm_90a: see wgmma.cuh
#endif
}

template <Op kOpA, Op kOpB, EpilogueKind kKind>
void launch_wgmma(const GemmProblem& p, cudaStream_t stream) {
  using Ring = RingFor<kOpA, kOpB>;
  const auto kernel = wgmma_gemm_kernel<kOpA, kOpB, kKind>;
  [[maybe_unused]] static const bool opted_in = allow_shared_memory(kernel, Ring::kSmemBytes);
  const TensorMaps<typename Ring::A, typename Ring::B> maps(p);
  const dim3 grid((p.n + kBlockTileN - 1) / kBlockTileN, (p.m + kBlockTileM - 1) / kBlockTileM);
  kernel<<<grid, kThreads, Ring::kSmemBytes, stream>>>(maps.a, maps.b, p);
}

inline void launch_gemm(const GemmProblem& p, cudaStream_t stream) {
  launch_or_fall_back(p, stream, [&](auto op_a, auto op_b, auto kind) {
    launch_wgmma<decltype(op_a)::value, decltype(op_b)::value, decltype(kind)::value>(p, stream);
  });
}

}  // namespace mnist::wgmma
