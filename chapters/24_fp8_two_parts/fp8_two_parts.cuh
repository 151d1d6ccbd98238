// Chapter 22's skinny products with each K tile's promotion overlapped by the next K tile's
// wgmmas. Chapter 22's consumer multiplies a K tile into its part, waits, adds the part to the
// total, then multiplies the next: its two consumers take turns so that one adds while the
// other's wgmmas run, and the tensor cores wait whenever a consumer's adds, its wait and its
// turn take longer than the other's K tile. A consumer's tile here is at most 64 x 128, 64
// accumulators a thread, so two parts fit beside the total (192 of the 232 registers): K tile
// t + 1 goes to the tensor cores into one part before K tile t's part, the other, is added.
//
//   chapter 22, one consumer:  | mma t | wait | add t | turn | mma t+1 | wait | add t+1 | ...
//   here:                      | mma t |  mma t+1 (odd)    |  mma t+2 (even)  | ...
//                                      | add t (even)      | add t+1 (odd)    |
// Each consumer waits for all its wgmmas (wait_group 0) before it issues the next K tile, so the
// part it then adds was written by a finished wgmma and the one in flight writes the other part:
// ptxas sees no register read of a wgmma in flight and serialises nothing. The sums are chapter
// 22's, bit for bit. Tiles of 256 batch columns (two 128-column parts a consumer) stay chapter
// 22's.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>

#include "12_swap_ab/swap_ab.cuh"
#include "12_swap_ab/tiles.cuh"
#include "22_fp8_swap_ab/fp8_swap_ab.cuh"
#include "fp8_interface.cuh"
#include "occupancy.cuh"

namespace mnist::fp8_two_parts {

using namespace fp8_swap_ab;

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)

// A consumer warpgroup of a swap-AB block whose 64 x N tile is one part (N <= 128): chapter 22's
// consume_swap_ab with the K tiles in two parts, even and odd, and no turns.
template <class Block, EpilogueKind kKind, bool kQuantise, class Schedule>
__device__ __forceinline__ void consume_two_parts(int consumer, const GemmProblem& p,
                                                  const Schedule& schedule, float scale,
                                                  const Fp8Epilogue& out, uint32_t ring,
                                                  uint32_t full, uint32_t empty) {
  using Ring = typename Block::Ring;
  constexpr int kCount = Block::kAccumulators;
  static_assert(kCount <= kPartAccumulators, "a consumer's tile is one part");
  const int lane = threadIdx.x % 32;
  const int row_part = Block::kConsumersSplitBatch ? 0 : consumer;
  const int column_part = Block::kConsumersSplitBatch ? consumer : 0;
  const uint32_t a_offset = row_part * kWarpgroupRowsBytes;
  const uint32_t b_offset = Ring::A::kBytes + column_part * kWarpgroupRowsBytes;
  float total[kCount], even[kCount], odd[kCount];
  int stage = 0;
  uint32_t phase = 0;
  int held = 0;  // the stage of the K tile in flight
  // The next K tile's wgmmas into `into`, from zero, once its bytes have landed.
  const auto issue = [&](float(&into)[kCount]) {
    mbarrier_wait(full + stage * sizeof(uint64_t), phase);
    const uint32_t a = ring + stage * Ring::kStageBytes + a_offset;
    const uint32_t b = ring + stage * Ring::kStageBytes + b_offset;
    wgmma_fence();
#pragma unroll
    for (int k = 0; k < kFp8TileK / kFp8WgmmaK; ++k) {
      wgmma_m64nNk32_e4m3<kCount>(into, matrix_descriptor<typename Ring::A>(a + k * kFp8WgmmaK),
                                  matrix_descriptor<typename Ring::B>(b + k * kFp8WgmmaK), k > 0);
    }
    wgmma_commit();
    held = stage;
    if (++stage == Block::kStages) stage = 0, phase ^= 1;
  };
  // The K tile in flight is done: its stage goes back to the producer.
  const auto retire = [&] {
    wgmma_wait<0>();
    if (lane == 0) mbarrier_arrive(empty + held * sizeof(uint64_t));
  };
  const auto add = [&](float(&done)[kCount]) {
#pragma unroll
    for (int i = 0; i < kCount; ++i) {
      asm volatile("" : "+f"(done[i])::"memory");  // written by the wgmmas
      total[i] += done[i];
    }
  };
  for (int unit = blockIdx.x; unit < schedule.count(); unit += gridDim.x) {
    const auto u = schedule.unit(unit);
#pragma unroll
    for (int i = 0; i < kCount; ++i) total[i] = 0.0f;
    issue(even);  // K tile k_begin
    int t = u.k_begin;
    for (; t + 2 < u.k_end; t += 2) {  // K tiles t + 1 and t + 2 follow the one in flight
      retire();
      issue(odd);
      add(even);
      retire();
      issue(even);
      add(odd);
    }
    retire();  // K tile t, the last or the one before it
    if (t + 1 < u.k_end) {
      issue(odd);
      add(even);
      retire();
      add(odd);
    } else {
      add(even);
    }
#pragma unroll
    for (int i = 0; i < kCount; ++i) total[i] *= scale;
    if (!schedule.ready(total, u, consumer)) continue;
    const int n0 = u.row0 + row_part * kWgmmaM, m0 = u.col0 + column_part * Block::kConsumerColumns;
    if constexpr (kQuantise) {
      quantise_transposed(p, total, n0, m0, out);
    } else {
      swap_ab::finish_transposed<kKind>(p, total, n0, m0);
    }
  }
}

#endif  // sm_90a

// Chapter 22's kernel with this consumer.
template <int kTileRows, int kBatchTile, EpilogueKind kKind, bool kQuantise>
__global__ void __launch_bounds__(swap_ab::Block<Op::N, Op::T, kTileRows, kBatchTile>::kThreads,
                                  swap_ab::Block<Op::N, Op::T, kTileRows, kBatchTile>::kBlocksPerSm)
    fp8_two_parts_kernel(const __grid_constant__ CUtensorMap map_a,
                         const __grid_constant__ CUtensorMap map_b,
                         const __grid_constant__ GemmProblem p, const float* scale_a,
                         const float* scale_b, const __grid_constant__ Fp8Epilogue out) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using B = swap_ab::Block<Op::N, Op::T, kTileRows, kBatchTile>;
  using Ring = typename B::Ring;
  const swap_ab::WholeTiles<B> schedule{p};
  extern __shared__ __align__(16) uint8_t smem[];
  const uint32_t ring = ring_start(smem);
  const uint32_t full = ring + B::kStages * Ring::kStageBytes;
  const uint32_t empty = full + B::kStages * sizeof(uint64_t);
  if (threadIdx.x == 0) {
    for (int s = 0; s < B::kStages; ++s) {
      mbarrier_init(full + s * sizeof(uint64_t), 1);
      mbarrier_init(empty + s * sizeof(uint64_t), B::kConsumerWarps);
    }
    fence_proxy_async();
  }
  __syncthreads();
  const int warpgroup = threadIdx.x / kWarpgroupThreads;
  if (warpgroup == 0) {
    if constexpr (B::kConsumers > 1) setmaxnreg_dec<kProducerRegisters>();
    if (threadIdx.x == 0) swap_ab::produce<B>(map_a, map_b, schedule, ring, full, empty);
  } else {
    if constexpr (B::kConsumers > 1) setmaxnreg_inc<kConsumerRegisters>();
    consume_two_parts<B, kKind, kQuantise>(warpgroup - 1, p, schedule, *scale_a * *scale_b, out,
                                           ring, full, empty);
  }
#else
  __trap();  // built without sm_90a: see wgmma.cuh
#endif
}

// One kernel's launch; its own static, so that each kernel opts in to its shared memory.
template <int kTileRows, int kBatchTile, EpilogueKind kKind, bool kQuantise>
void launch_two_parts(const GemmProblem& p, const Fp8Problem& fp8, const Fp8Epilogue& epilogue,
                      cudaStream_t stream) {
  using B = swap_ab::Block<Op::N, Op::T, kTileRows, kBatchTile>;
  const auto kernel = fp8_two_parts_kernel<kTileRows, kBatchTile, kKind, kQuantise>;
  static const int resident = resident_blocks(kernel, B::kThreads, B::Ring::kSmemBytes);
  const TensorMaps<typename B::Ring::A, typename B::Ring::B> maps(swap_ab::swapped(p));
  const int blocks = std::min(swap_ab::tiles_of(p, {kTileRows, kBatchTile}), resident);
  kernel<<<blocks, B::kThreads, B::Ring::kSmemBytes, stream>>>(maps.a, maps.b, p, fp8.scale_a,
                                                               fp8.scale_b, epilogue);
  CUDA_CHECK(cudaGetLastError());
}

// What chapter 22's launch_fp8_swap_ab takes, on chapter 22's tile for the shape; a tile of 256
// batch columns on chapter 22's kernel.
inline void launch_fp8_two_parts(const Fp8Problem& fp8, const Fp8Epilogue& epilogue,
                                 cudaStream_t stream) {
  if (epilogue.kind == Fp8EpilogueKind::kUpdate) {
    throw std::invalid_argument("launch_fp8_two_parts: no weight update here");
  }
  GemmProblem p = as_halves(fp8, epilogue.c);
  if (epilogue.kind == Fp8EpilogueKind::kBiasRelu) {
    p.epilogue.kind = EpilogueKind::kBiasRelu;
    p.epilogue.bias = epilogue.bias;
    p.epilogue.out = epilogue.out;
  }
  const swap_ab::SwapAbTile tile = swap_ab::block_tile_for<Op::N>(
      p, swap_ab::resident_swap_ab_blocks<Op::N, Op::T, EpilogueKind::kStore>);
  swap_ab::with_block_tile<Op::N>(tile, [&](auto rows, auto batch) {
    if constexpr (swap_ab::Block<Op::N, Op::T, rows, batch>::kAccumulators > kPartAccumulators) {
      launch_fp8_swap_ab(fp8, epilogue, stream);
    } else if (epilogue.kind == Fp8EpilogueKind::kQuantise) {
      launch_two_parts<rows, batch, EpilogueKind::kStore, true>(p, fp8, epilogue, stream);
    } else if (epilogue.kind == Fp8EpilogueKind::kBiasRelu) {
      launch_two_parts<rows, batch, EpilogueKind::kBiasRelu, false>(p, fp8, epilogue, stream);
    } else {
      launch_two_parts<rows, batch, EpilogueKind::kStore, false>(p, fp8, epilogue, stream);
    }
  });
}

}  // namespace mnist::fp8_two_parts
