// The FP8 product for the trainer's skinny shapes (M, the batch, at most 256): chapter 12's
// swap-AB kernel with fp8_gemm.cuh's consumer. C^T = B A^T puts the weights on wgmma's M and the
// batch on its N (32 to 256); the operands, read as 16-bit elements (as_halves), go through
// chapter 12's tiles, tensor maps, producer and epilogue as they are. A consumer's 64 x N sum is
// promoted in chunks of at most 128 columns (a 64-register part), each K tile; a block's two
// consumers take turns at the tensor cores as fp8_gemm.cuh's do.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>

#include "12_swap_ab/swap_ab.cuh"
#include "20_fp8_gemm/fp8_gemm.cuh"
#include "fp8_interface.cuh"
#include "fp8_quantise.cuh"
#include "fp8_scaling.cuh"

namespace mnist::fp8_swap_ab {

using namespace fp8_gemm;

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)

// d = A . B + (accumulate ? d : 0) for a 64 x N x 32 step, N = 2 kCount (32, 64 or 128).
template <int kCount>
__device__ __forceinline__ void wgmma_m64nNk32_e4m3(float* d, uint64_t a, uint64_t b,
                                                    bool accumulate) {
  if constexpr (kCount == 16) {
    asm volatile(
        "{\n.reg .pred accumulate;\nsetp.ne.b32 accumulate, %18, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n32k32.f32.e4m3.e4m3 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, %16, %17, "
        "accumulate, 1, 1;\n}\n"
        : MNIST_D16(0)
        : "l"(a), "l"(b), "r"(int(accumulate)));
  } else if constexpr (kCount == 32) {
    asm volatile(
        "{\n.reg .pred accumulate;\nsetp.ne.b32 accumulate, %34, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "
        "%32, %33, accumulate, 1, 1;\n}\n"
        : MNIST_D16(0), MNIST_D16(16)
        : "l"(a), "l"(b), "r"(int(accumulate)));
  } else {
    static_assert(kCount == kPartAccumulators, "a part of 64 x 128 at most");
    wgmma_m64n128k32_e4m3(d, a, b, accumulate);
  }
}

// The warpgroup's 64 x N sums of C^T from (n0, m0) through the kQuantise epilogue, in chapter 12's
// layout (finish_transposed): a thread's pair of batch columns m, m + 1 of weight row n is one
// 16-bit code pair in x_t's row n, and two bytes of x's rows m and m + 1.
template <int kCount>
__device__ __forceinline__ void quantise_transposed(const GemmProblem& p, float (&acc)[kCount],
                                                    int n0, int m0, const Fp8Epilogue& out) {
  const int warp = threadIdx.x / 32 % 4, lane = threadIdx.x % 32;
  const float scale = out.scaling->scale;
  const bool pairs_aligned = out.t_pitch % 2 == 0;  // x_t's rows start on even bytes
  // Backward data: every mask code is read before any code is stored, so that the loads go out
  // together (a store between two loads, which may alias, would make each wait for the one
  // before). A code > 0 (sign clear, not zero) is an active ReLU.
  if (out.active) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int n = n0 + warp * 16 + lane / 4 + 8 * h;
#pragma unroll
      for (int i = 0; i < kCount / 4; ++i) {
        const int m = m0 + 8 * i + lane % 4 * 2;
#pragma unroll
        for (int j = 0; j < 2; ++j) {
          if (n < p.n && m + j < p.m && out.active[size_t(m + j) * p.n + n] - 1u >= 0x7Fu) {
            acc[4 * i + 2 * h + j] = 0.0f;
          }
        }
      }
    }
  }
  float amax = 0.0f;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int n = n0 + warp * 16 + lane / 4 + 8 * h;
    if (n >= p.n) continue;
    const float bias = out.bias ? out.bias[n] : 0.0f;
    // The value at batch row m (inside C): forward, __fadd_rn adds as the reference does, with no
    // FMA folding in the scale's product before it; backward data, masked above.
    const auto value = [&](float sum) {
      return out.active ? sum : fmaxf(__fadd_rn(sum, bias), 0.0f);
    };
#pragma unroll
    for (int i = 0; i < kCount / 4; ++i) {
      const int m = m0 + 8 * i + lane % 4 * 2;
      if (m >= p.m) continue;
      const float v0 = value(acc[4 * i + 2 * h]);
      const float v1 = m + 1 < p.m ? value(acc[4 * i + 2 * h + 1]) : 0.0f;
      amax = fmaxf(amax, fmaxf(fabsf(v0), fabsf(v1)));
      uint8_t* row_t = out.x_t + size_t(n) * out.t_pitch + m;
      store_codes(quantise_pair(v0, v1, scale), m + 1 < p.m, row_t, pairs_aligned,
                  out.x + size_t(m) * p.n + n, p.n);
    }
  }
  record_amax(&out.scaling->amax_bits, amax);
  note_quantised(out.scaling, scale);
}

// A consumer warpgroup of a swap-AB block: chapter 12's consume, each K tile's sum promoted; its
// tiles through chapter 12's epilogue kKind (fp32 C, or fp16 ReLU(C + bias) by kBiasRelu), or,
// kQuantise, through quantise_transposed.
template <class Block, EpilogueKind kKind, bool kQuantise, class Schedule>
__device__ __forceinline__ void consume_swap_ab(int consumer, const GemmProblem& p,
                                                const Schedule& schedule, float scale,
                                                const Fp8Epilogue& out, uint32_t ring,
                                                uint32_t full, uint32_t empty) {
  using Ring = typename Block::Ring;
  constexpr int kCount = Block::kAccumulators;
  constexpr int kChunk = kCount < kPartAccumulators ? kCount : kPartAccumulators;  // part's size
  constexpr int kChunkRowsBytes = 2 * kChunk * kFp8TileK;  // the chunk's batch rows of the B tile
  const int lane = threadIdx.x % 32;
  const int row_part = Block::kConsumersSplitBatch ? 0 : consumer;
  const int column_part = Block::kConsumersSplitBatch ? consumer : 0;
  const uint32_t a_offset = row_part * kWarpgroupRowsBytes;
  const uint32_t b_offset = Ring::A::kBytes + column_part * kWarpgroupRowsBytes;
  constexpr bool kTurns = Block::kConsumers > 1;  // taken as in fp8_gemm.cuh
  float total[kCount];
  float part[kChunk];
  int stage = 0;
  uint32_t phase = 0;
  if (kTurns && consumer == 1) await_issue(0);
  for (int unit = blockIdx.x; unit < schedule.count(); unit += gridDim.x) {
    const auto u = schedule.unit(unit);
#pragma unroll
    for (int i = 0; i < kCount; ++i) total[i] = 0.0f;
    for (int t = u.k_begin; t < u.k_end; ++t) {
      mbarrier_wait(full + stage * sizeof(uint64_t), phase);
      const uint32_t a = ring + stage * Ring::kStageBytes + a_offset;
      const uint32_t b = ring + stage * Ring::kStageBytes + b_offset;
#pragma unroll
      for (int c = 0; c < kCount / kChunk; ++c) {
        wgmma_fence();
#pragma unroll
        for (int k = 0; k < kFp8TileK / kFp8WgmmaK; ++k) {
          wgmma_m64nNk32_e4m3<kChunk>(
              part, matrix_descriptor<typename Ring::A>(a + k * kFp8WgmmaK),
              matrix_descriptor<typename Ring::B>(b + c * kChunkRowsBytes + k * kFp8WgmmaK), k > 0);
        }
        wgmma_commit();
        if (kTurns) announce_issue(consumer);
        wgmma_wait<0>();
        if (kTurns) await_issue(1 - consumer);
#pragma unroll
        for (int i = 0; i < kChunk; ++i) {
          asm volatile("" : "+f"(part[i])::"memory");  // written by the wgmmas
          total[c * kChunk + i] += part[i];
        }
      }
      if (lane == 0) mbarrier_arrive(empty + stage * sizeof(uint64_t));
      if (++stage == Block::kStages) stage = 0, phase ^= 1;
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
  if (kTurns && consumer == 0) announce_issue(consumer);
}

#endif  // sm_90a

// Chapter 12's block with the FP8 consumer; p is the problem as_halves (not swapped).
template <int kTileRows, int kBatchTile, EpilogueKind kKind, bool kQuantise>
__global__ void __launch_bounds__(swap_ab::Block<Op::N, Op::T, kTileRows, kBatchTile>::kThreads,
                                  swap_ab::Block<Op::N, Op::T, kTileRows, kBatchTile>::kBlocksPerSm)
    fp8_swap_ab_kernel(const __grid_constant__ CUtensorMap map_a,
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
    consume_swap_ab<B, kKind, kQuantise>(warpgroup - 1, p, schedule, *scale_a * *scale_b, out, ring,
                                         full, empty);
  }
#else
  __trap();  // built without sm_90a: see wgmma.cuh
#endif
}

// Needs m <= 256 (swap_ab::kMaxBatch), k a multiple of 16 and a GPU with sm_90a code; epilogues
// kStore, kBiasRelu and kQuantise. The tile: chapter 12's choice for the same shape in fp16 (its
// blocks have the same threads and shared memory, so as many run at once).
inline void launch_fp8_swap_ab(const Fp8Problem& fp8, const Fp8Epilogue& epilogue,
                               cudaStream_t stream) {
  if (epilogue.kind == Fp8EpilogueKind::kUpdate) {
    throw std::invalid_argument("launch_fp8_swap_ab: no weight update here");
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
    using B = swap_ab::Block<Op::N, Op::T, rows, batch>;
    const TensorMaps<typename B::Ring::A, typename B::Ring::B> maps(swap_ab::swapped(p));
    const int blocks =
        std::min(swap_ab::tiles_of(p, {rows, batch}),
                 swap_ab::resident_swap_ab_blocks<Op::N, Op::T, EpilogueKind::kStore>(tile));
    const auto launch = [&](auto kernel) {
      kernel<<<blocks, B::kThreads, B::Ring::kSmemBytes, stream>>>(maps.a, maps.b, p, fp8.scale_a,
                                                                   fp8.scale_b, epilogue);
      CUDA_CHECK(cudaGetLastError());
    };
    // One opt-in per kernel: the three have the same type, so a static in `launch` would be shared.
    if (epilogue.kind == Fp8EpilogueKind::kQuantise) {
      static const bool opted_in = allow_shared_memory(
          fp8_swap_ab_kernel<rows, batch, EpilogueKind::kStore, true>, B::Ring::kSmemBytes);
      (void)opted_in;
      launch(fp8_swap_ab_kernel<rows, batch, EpilogueKind::kStore, true>);
    } else if (epilogue.kind == Fp8EpilogueKind::kBiasRelu) {
      static const bool opted_in = allow_shared_memory(
          fp8_swap_ab_kernel<rows, batch, EpilogueKind::kBiasRelu, false>, B::Ring::kSmemBytes);
      (void)opted_in;
      launch(fp8_swap_ab_kernel<rows, batch, EpilogueKind::kBiasRelu, false>);
    } else {
      static const bool opted_in = allow_shared_memory(
          fp8_swap_ab_kernel<rows, batch, EpilogueKind::kStore, false>, B::Ring::kSmemBytes);
      (void)opted_in;
      launch(fp8_swap_ab_kernel<rows, batch, EpilogueKind::kStore, false>);
    }
  });
}

}  // namespace mnist::fp8_swap_ab
