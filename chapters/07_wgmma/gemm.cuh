// Chapter 07: wgmma fed by TMA. Hopper's own tensor-core instruction and copy engine, in the
// smallest kernel that uses them: chapter 04's ring of stages, with its copies and its MMAs
// replaced.
//
// Chapters 03-06 use the tensor cores as Ampere introduced them: every warp loads its fragments
// from shared memory into registers with ldmatrix and issues 16 x 8 x 16 mma.sync instructions,
// and all 256 threads copy tiles with cp.async, 16 bytes each. An H100 still runs that code, but
// at well under half of cuBLAS's speed on a large product (docs/06_fused_step.md). Hopper's
// tensor cores reach their full rate through two new pieces:
//   wgmma (wgmma.cuh)  a warpgroup of 4 warps multiplies 64 x 256 x 16 in one instruction, its
//                      operands read straight from shared memory, asynchronously;
//   TMA (tma.cuh)      one thread copies a whole tile with one instruction, which reports its
//                      bytes to an mbarrier in shared memory.
//
// The block: 256 threads, two warpgroups, compute a 128 x 256 tile of C, each warpgroup a 64 x 256
// half with m64n256k16 (128 accumulator floats per thread), stepping K by 64 through a ring of
// kStages = 4 stages of 48 KB (A 128 x 64 and B 256 x 64 halves). The loop is chapter 04's, one
// barrier per K step, with the copies' completion now signalled on an mbarrier per stage:
//
//   prologue: thread 0 starts K tiles 0 .. kStages - 2, each into its stage, each counting its
//             48 KB on full[stage]
//   K step t, stage s = t % kStages:
//     everyone  waits on full[s] (parity: the stage's use count & 1): tile t has landed
//               wgmma.fence, 4 wgmmas on stage s, commit them as one group
//               wgmma.wait_group 1: its own group of step t - 1 is done, stage (t - 1) % kStages
//               is no longer read by this warpgroup
//     barrier   __syncthreads: no warpgroup still reads stage (t - 1) % kStages
//     thread 0  starts K tile t + kStages - 1 into that stage
//
// Compared with chapter 04 the copies cost one thread one instruction per operand instead of every
// thread 4-8 cp.async, and the MMAs cost a warpgroup 4 instructions per K tile with no operand
// registers. What stays is that every thread both waits for copies and multiplies, and meets the
// others at a barrier every K step: chapter 08 separates the two roles.
//
// When: wgmma_takes() in dispatch.cuh. On an H100 (the only GPU the chapter runs on: kNeedsSm90a
// below) this kernel takes a product where TMA can read both operands, K is at least 4 tiles of 64
// and chapter 06 would not split K (this kernel has no split-K). Every other product goes to
// chapter 06's kernel, included here, unchanged.
//
// Edges. TMA writes zeros where a box reaches past the matrix (any M, N, K: the box still counts
// all its bytes), zeros add nothing, and the epilogue skips rows and columns outside C.
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

namespace mnist::wgmma {

// The kernels apply the epilogue (gemm_interface.cuh) themselves, and the trainer replays each
// step as a CUDA graph, as from chapter 06 on.
constexpr bool kFusedEpilogue = true;
constexpr bool kReplayStepAsGraph = true;

// wgmma and TMA: an H100-class GPU and a build with sm_90a code (common/gpu_requirements.hpp). On
// anything else the trainer stops with one line saying so, and the tests SKIP.
constexpr bool kNeedsSm90a = true;

constexpr int kBlockTileM = 128;                           // rows of C per block: 64 per warpgroup
constexpr int kBlockTileN = kWgmmaN;                       // 256 columns of C per block
constexpr int kWarpgroups = kBlockTileM / kWgmmaM;         // 2
constexpr int kThreads = kWarpgroups * kWarpgroupThreads;  // 256
constexpr int kStages = 4;                                 // K tiles in the shared-memory ring

// The ring (wgmma.cuh): kStages stages, then one barrier per stage, full[s].
template <Op kOpA, Op kOpB>
using RingFor = Ring<kBlockTileM, kBlockTileN, kOpA, kOpB, kStages, 1>;

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
    load_tile<typename Ring::A>(map_a, a, row0, t * kTileK, barrier);
    load_tile<typename Ring::B>(map_b, a + Ring::A::kBytes, col0, t * kTileK, barrier);
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
    multiply_k_tile<typename Ring::A, typename Ring::B>(
        acc, a + warpgroup * Ring::kWarpgroupRowsBytes, a + Ring::A::kBytes, t > 0);
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
  launch_wgmma_or_fused_step(p, stream, [&](auto op_a, auto op_b, auto kind) {
    launch_wgmma<decltype(op_a)::value, decltype(op_b)::value, decltype(kind)::value>(p, stream);
  });
}

}  // namespace mnist::wgmma
