// An FP8 GEMM on Hopper's tensor cores, C = s_a s_b (A B^T): A (m x k) and B (n x k) in e4m3,
// both K-major (row-major with k contiguous), s_a and s_b the per-tensor factors that undo their
// quantisation (common/fp8.hpp), C (m x n) in fp32. Chapter 11's kernel with two changes.
//
//   bytes are bytes   a K tile of 128 e4m3 is one 128-byte swizzled row, the bytes of chapter
//                     07's 64 halves. Read as 16-bit elements (as_halves), the operands go through
//                     chapter 11's tensor maps, producer, schedule and TMA-store epilogue as they
//                     are; only the consumer's instruction changes: wgmma.m64n128k32.e4m3, both
//                     operands K-major (FP8 wgmma has no transpose), 32 bytes of K a step.
//   promotion         the tensor cores add an FP8 product chain keeping 13 bits below its largest
//                     term (measured: test_gemm_fp8). Each K tile's products start from zero in a
//                     64 x 128 part and join an fp32 total in ordinary registers once their
//                     wgmmas are done: the error of a sum then grows with K as fp32's does.
//
//   consumer (64 x 256 of C, one K tile):
//     half 0: 4 wgmma -> part, wait 0, total[cols   0-127] += part
//     half 1: 4 wgmma -> part, wait 0, total[cols 128-255] += part, stage released
//   the two consumers in turns (announce_issue, await_issue):
//     tensor cores  | c0 h0 | c1 h0 | c0 h1 | c1 h1 | c0 h0 ...
//     c0            | mma   | add   | mma   | add   |
//     c1            | wait  | mma   | add   | mma   |
//   each issues a half only after the other has issued its own
// 64 part + 128 total registers fit where two 128-register sets would not.
// A weight gradient's product can update the weights instead of storing C
// (Fp8EpilogueKind::kUpdate).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <type_traits>

#include "11_clusters/gemm.cuh"
#include "12_swap_ab/swap_ab.cuh"  // MNIST_D16: a wgmma's accumulator operands
#include "fp8_interface.cuh"
#include "fp8_quantise.cuh"
#include "fp8_scaling.cuh"

namespace mnist::fp8_gemm {

// Chapter 11's names (clusters::) where chapter 10's kernel, reached through chapter 11's own
// using-directives, has the same ones.
using namespace clusters;

constexpr int kFp8TileK = kTileK * int(sizeof(__half));  // 128 e4m3 per K tile
constexpr int kFp8WgmmaN = kWgmmaN / 2;                  // a half of the consumer's 256 columns
constexpr int kFp8WgmmaK = 32;  // e4m3 per wgmma: 32 bytes of K, chapter 08's k16 step
constexpr int kPartAccumulators = kWgmmaM * kFp8WgmmaN / kWarpgroupThreads;  // 64 per thread
using Ring = clusters::RingFor<Op::N, Op::T>;                               // both operands K-major
constexpr int kConsumerThreads = clusters::kConsumers * kWarpgroupThreads;  // the turns' barriers
using HalfTile = HalfB<Ring>;  // 128 rows of the B tile: one half's operand
static_assert(kFp8WgmmaK == int(k_step_bytes<Ring::A>()), "an e4m3 step is a k16 step's bytes");

// The e4m3 operands as 16-bit elements (k / 2 per row) for chapter 11's maps and producer; C, where
// the epilogue stores it, at c.
inline GemmProblem as_halves(const Fp8Problem& p, float* c) {
  GemmProblem halves;
  halves.m = p.m;
  halves.n = p.n;
  halves.k = p.k / 2;
  halves.a = reinterpret_cast<const __half*>(p.a);
  halves.op_a = Op::N;
  halves.b = reinterpret_cast<const __half*>(p.b);
  halves.op_b = Op::T;
  halves.c = c;
  return halves;
}

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)

// d = A . B + (accumulate ? d : 0) for a 64 x 128 x 32 step of this warpgroup, e4m3 operands
// whose descriptors are a and b, d the first of 64 accumulators in chapter 08's layout.
__device__ __forceinline__ void wgmma_m64n128k32_e4m3(float* d, uint64_t a, uint64_t b,
                                                      bool accumulate) {
  asm volatile(
      "{\n"
      ".reg .pred accumulate;\n"
      "setp.ne.b32 accumulate, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
      "}, %64, %65, accumulate, 1, 1;\n"
      "}\n"
      : MNIST_D16(0), MNIST_D16(16), MNIST_D16(32), MNIST_D16(48)
      : "l"(a), "l"(b), "r"(int(accumulate)));
}

// The wgmmas of one half of a K tile: this warpgroup's 64 rows of A at `a` times the 128 rows of
// B at `b` (shared addresses), uncommitted.
__device__ __forceinline__ void multiply_half(float* d, uint32_t a, uint32_t b, bool accumulate) {
#pragma unroll
  for (int k = 0; k < kFp8TileK / kFp8WgmmaK; ++k) {
    wgmma_m64n128k32_e4m3(d, matrix_descriptor<Ring::A>(a + k * kFp8WgmmaK),
                          matrix_descriptor<HalfTile>(b + k * kFp8WgmmaK), accumulate || k > 0);
  }
}

// The consumers take turns at the tensor cores. Named barrier 3 + c (chapter 10's warpgroup_sync
// holds 1 and 2) counts consumer c's halves issued: c arrives once it has issued one
// (announce_issue), the other waits for that (await_issue) before it issues its next, so the tensor
// cores run c0's half, c1's, c0's next, ... and each consumer adds while the other's half runs.
// Left to themselves, both consumers' wgmmas run side by side, finish together and leave the
// tensor cores idle while both add. (Letting a consumer issue freely and wait only before its adds
// measured 77-82% of cuBLASLt instead of 85-91%: docs/results/alternatives/fp8_gemm/.)
__device__ __forceinline__ void announce_issue(int consumer) {
  if (consumer == 0) {
    asm volatile("bar.arrive 3, %0;\n" ::"n"(kConsumerThreads) : "memory");
  } else {
    asm volatile("bar.arrive 4, %0;\n" ::"n"(kConsumerThreads) : "memory");
  }
}
__device__ __forceinline__ void await_issue(int other) {
  if (other == 0) {
    asm volatile("bar.sync 3, %0;\n" ::"n"(kConsumerThreads) : "memory");
  } else {
    asm volatile("bar.sync 4, %0;\n" ::"n"(kConsumerThreads) : "memory");
  }
}

// Byte (c, r) of the staged x_t tile: column c's 64 rows are four 16-byte chunks, the chunk's
// index XORed with c / 2 % 4, so that the four column pairs of a warp's store fall in different
// banks (unswizzled, all four are 128 bytes apart: one bank).
__device__ __forceinline__ uint32_t staged(uint32_t staging, int c, int r) {
  return staging + c * kWgmmaM + ((r / 16) ^ (c / 2 % 4)) * 16 + r % 16;
}

// The pair at (row, col), col + 1 (`two`) that the value of its sums needs: masters, 1 where
// active, or biases.
template <bool kUpdate, bool kWhole>
__device__ __forceinline__ float2 epilogue_inputs(const Fp8Epilogue& e, size_t at, int col,
                                                  bool two) {
  if constexpr (kUpdate) {
    if (kWhole) return *reinterpret_cast<const float2*>(e.master + at);
    return make_float2(e.master[at], two ? e.master[at + 1] : 0.0f);
  }
  if (e.active) {
    return make_float2(e.active[at] - 1u < 0x7Fu, two && e.active[at + 1] - 1u < 0x7Fu);
  }
  return make_float2(e.bias[col], two ? e.bias[col + 1] : 0.0f);
}

// kUpdate: the masters of the warpgroup's 64 x 256 tile from (row0, col0) into L2 while its K loop
// runs, 128-byte lines, 4 a thread, so that the epilogue's loads wait for L2, not DRAM.
__device__ __forceinline__ void prefetch_masters(const GemmProblem& p, const Fp8Epilogue& e,
                                                 int row0, int col0) {
  constexpr int kLineFloats = 32, kLinesPerRow = kWgmmaN / kLineFloats;
  for (int line = threadIdx.x % kWarpgroupThreads; line < kWgmmaM * kLinesPerRow;
       line += kWarpgroupThreads) {
    const int row = row0 + line / kLinesPerRow, col = col0 + line % kLinesPerRow * kLineFloats;
    if (row < p.m && col < p.n) {
      asm volatile("prefetch.global.L2 [%0];\n" ::"l"(e.master + size_t(row) * p.n + col));
    }
  }
}

// The warpgroup's 64 x 256 sums g (scaled), whose first element is (row0, col0), through a
// quantising epilogue (fp8_interface.cuh), in chapter 08's layout: a thread's column pair col,
// col + 1 of row `row` is one 16-bit code pair of x.
//   kUpdate    g becomes the new masters (master - learning_rate g, __fmaf_rn: rounded once, as
//              the CPU reference's float64 step rounded to fp32), written back
//   kQuantise  forward ReLU(g + bias) (__fadd_rn: no FMA folds the scale's product in), or
//              backward data g where active's code is > 0 (sign clear, not zero)
// As in chapter 08's finish_accumulators, what the values need (masters, mask codes, biases) is
// read for kEpilogueGroup 8-column blocks before any of the group's stores. Unlike there, the
// groups are a loop, not unrolled: g's first group is finished, then g moves down a group (register
// moves), so that the code is one group's (unrolled, the epilogue's code outgrew the instruction
// cache, and most of the kernel's time went to fetching it). kWhole (the tile inside C, n even):
// no bounds checks. g is spent.
// x_t goes through `staging` (this consumer's 16 KiB, free when C is not stored by TMA)
// transposed: written from the registers, its codes would be single bytes t_pitch apart, one L2
// write each.
template <bool kUpdate, bool kWhole>
__device__ __forceinline__ void finish_quantised(const GemmProblem& p, float (&g)[kAccumulators],
                                                 int consumer, int row0, int col0,
                                                 const Fp8Epilogue& e, uint32_t staging) {
  constexpr int kTileColumns = kAccumulators / 4 * 8;  // 256: the staged x_t tile's rows
  constexpr int kGroupFloats = 4 * kEpilogueGroup;     // a group's sums in g
  const int warp = threadIdx.x / 32 % 4, lane = threadIdx.x % 32;
  const bool even = kWhole || p.n % 2 == 0;  // pairs on even elements: 8-byte masters, 2-byte codes
  const float scale = e.scaling->scale;
  float amax = 0.0f;
#pragma unroll 1
  for (int i0 = 0; i0 < kAccumulators / 4; i0 += kEpilogueGroup) {
    float2 in[2][kEpilogueGroup];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = row0 + warp * 16 + lane / 4 + 8 * h;
#pragma unroll
      for (int i = 0; i < kEpilogueGroup; ++i) {
        const int col = col0 + 8 * (i0 + i) + lane % 4 * 2;
        in[h][i] = kWhole || (row < p.m && col < p.n)
                       ? epilogue_inputs<kUpdate, kWhole>(e, size_t(row) * p.n + col, col,
                                                          col + 1 < p.n)
                       : float2{};
      }
    }
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = warp * 16 + lane / 4 + 8 * h, row = row0 + r;
#pragma unroll
      for (int i = 0; i < kEpilogueGroup; ++i) {
        const int c = 8 * (i0 + i) + lane % 4 * 2, col = col0 + c;
        if (!kWhole && (row >= p.m || col >= p.n)) continue;
        const bool two = kWhole || col + 1 < p.n;
        float v0 = g[4 * i + 2 * h], v1 = two ? g[4 * i + 2 * h + 1] : 0.0f;
        if constexpr (kUpdate) {
          v0 = __fmaf_rn(-e.learning_rate, v0, in[h][i].x);
          v1 = two ? __fmaf_rn(-e.learning_rate, v1, in[h][i].y) : 0.0f;
          float* master = e.master + size_t(row) * p.n + col;
          if (two && even) {
            *reinterpret_cast<float2*>(master) = make_float2(v0, v1);
          } else {
            master[0] = v0;
            if (two) master[1] = v1;
          }
        } else if (e.active) {
          v0 = in[h][i].x != 0.0f ? v0 : 0.0f;
          v1 = in[h][i].y != 0.0f ? v1 : 0.0f;
        } else {
          v0 = fmaxf(__fadd_rn(v0, in[h][i].x), 0.0f);
          v1 = two ? fmaxf(__fadd_rn(v1, in[h][i].y), 0.0f) : 0.0f;
        }
        amax = fmaxf(amax, fmaxf(fabsf(v0), fabsf(v1)));
        const uint16_t codes = quantise_pair(v0, v1, scale);
        store_codes(codes, two, e.x + size_t(row) * p.n + col, even, nullptr, 0);
        if (e.x_t) {
          asm volatile("st.shared.u8 [%0], %1;\n" ::"r"(staged(staging, c, r)),
                       "h"(uint16_t(codes & 0xFF)));
          asm volatile("st.shared.u8 [%0], %1;\n" ::"r"(staged(staging, c + 1, r)),
                       "h"(uint16_t(codes >> 8)));
        }
      }
    }
#pragma unroll
    for (int k = 0; k + kGroupFloats < kAccumulators; ++k) g[k] = g[k + kGroupFloats];
  }
  record_amax(&e.scaling->amax_bits, amax);
  note_quantised(e.scaling, scale);
  if (!e.x_t) return;
  warpgroup_sync(consumer);  // the tile is staged
  // 16 rows of one x_t row (a column of the tile) a thread at a time: a 16-byte store where they
  // are all inside and aligned, bytes otherwise.
  for (int chunk = threadIdx.x % kWarpgroupThreads; chunk < kTileColumns * kWgmmaM / 16;
       chunk += kWarpgroupThreads) {
    const int c = chunk / (kWgmmaM / 16), r = chunk % (kWgmmaM / 16) * 16;
    const int col = col0 + c, row = row0 + r;
    if (col >= p.n || row >= p.m) continue;
    const uint32_t at = staged(staging, c, r);
    uint8_t* to = e.x_t + size_t(col) * e.t_pitch + row;
    if (e.t_pitch % 16 == 0 && row + 16 <= p.m) {
      uint4 v;
      asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];\n"
                   : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                   : "r"(at));
      *reinterpret_cast<uint4*>(to) = v;
    } else {
      for (int b = 0; b < 16 && row + b < p.m; ++b) {
        uint16_t code;
        asm volatile("ld.shared.u8 %0, [%1];\n" : "=h"(code) : "r"(at + b));
        to[b] = uint8_t(code);
      }
    }
  }
  warpgroup_sync(consumer);  // read before the next tile is staged
}

// A consumer warpgroup: rows [consumer * 64, consumer * 64 + 64) of every tile of this block, as
// chapter 11's. kPromote: each half of a K tile into `part`, added to the total once done (the
// figure above); otherwise both halves accumulate in the tensor cores across K, as chapter 11's.
// kKind: the tiles go into C (kStore), through chapter 08's fp16 ReLU epilogue (kBiasRelu) or
// through finish_quantised (kQuantise, kUpdate).
template <bool kPromote, Fp8EpilogueKind kKind>
__device__ __forceinline__ void consume(int consumer, const GemmProblem& p, float scale,
                                        const Fp8Epilogue& epilogue, uint32_t ring, uint32_t full,
                                        uint32_t empty, const CUtensorMap& map_c, bool store_by_tma,
                                        uint32_t staging) {
  const int lane = threadIdx.x % 32;
  const int k_tiles = (p.k + kTileK - 1) / kTileK;
  const bool paired = columns_paired<EpilogueKind::kStore>(p);
  const uint32_t rank = cluster_rank();
  const uint32_t release = cluster_address(empty, lane % kClusterBlocks);
  float total[kAccumulators] = {};
  float part[kPartAccumulators];
  int stage = 0;
  uint32_t phase = 0;
  if (kPromote && consumer == 1) announce_issue(consumer);  // consumer 0 goes first
  for (int pair = blockIdx.x / kClusterBlocks; pair < pair_count(p);
       pair += gridDim.x / kClusterBlocks) {
    int row0, col0;
    tile_origin(p, pair, rank, row0, col0);
    if constexpr (kKind == Fp8EpilogueKind::kUpdate) {
      prefetch_masters(p, epilogue, row0 + consumer * kWgmmaM, col0);
    }
    int previous = 0;
    for (int t = 0; t < k_tiles; ++t) {
      mbarrier_wait(full + stage * sizeof(uint64_t), phase);
      const uint32_t a = ring + stage * Ring::kStageBytes + consumer * kWarpgroupRowsBytes;
      const uint32_t b = ring + stage * Ring::kStageBytes + Ring::A::kBytes;
      if constexpr (kPromote) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          await_issue(1 - consumer);  // the other's half is queued first
          wgmma_fence();
          multiply_half(part, a, b + h * HalfTile::kBytes, false);
          wgmma_commit();
          announce_issue(consumer);
          wgmma_wait<0>();
#pragma unroll
          for (int i = 0; i < kPartAccumulators; ++i) {
            asm volatile("" : "+f"(part[i])::"memory");  // written by the wgmmas
            total[h * kPartAccumulators + i] += part[i];
          }
        }
        if (lane < kClusterBlocks) mbarrier_arrive_cluster(release + stage * sizeof(uint64_t));
      } else {
        wgmma_fence();
        multiply_half(total, a, b, t > 0);
        multiply_half(total + kPartAccumulators, a, b + HalfTile::kBytes, t > 0);
        wgmma_commit();
        wgmma_wait<1>();  // K tile t - 1's wgmmas are done: its stage goes back
        if (t > 0 && lane < kClusterBlocks) {
          mbarrier_arrive_cluster(release + previous * sizeof(uint64_t));
        }
      }
      previous = stage;
      if (++stage == clusters::kStages) stage = 0, phase ^= 1;
    }
    if constexpr (!kPromote) {
      wgmma_wait<0>();
      if (lane < kClusterBlocks) mbarrier_arrive_cluster(release + previous * sizeof(uint64_t));
    }
    accumulators_settled(total);
#pragma unroll
    for (int i = 0; i < kAccumulators; ++i) total[i] *= scale;
    if constexpr (kKind == Fp8EpilogueKind::kQuantise || kKind == Fp8EpilogueKind::kUpdate) {
      constexpr bool kUpdate = kKind == Fp8EpilogueKind::kUpdate;
      const int row = row0 + consumer * kWgmmaM;
      if (row + kWgmmaM <= p.m && col0 + kWgmmaN <= p.n && p.n % 2 == 0) {
        finish_quantised<kUpdate, true>(p, total, consumer, row, col0, epilogue, staging);
      } else {
        finish_quantised<kUpdate, false>(p, total, consumer, row, col0, epilogue, staging);
      }
    } else if constexpr (kKind == Fp8EpilogueKind::kBiasRelu) {
      finish_accumulators<EpilogueKind::kBiasRelu>(p, total, row0 + consumer * kWgmmaM, col0,
                                                   columns_paired<EpilogueKind::kBiasRelu>(p));
    } else if (store_by_tma) {
      clusters::store_accumulators(map_c, total, consumer, staging, row0 + consumer * kWgmmaM,
                                   col0);
    } else {
      finish_accumulators<EpilogueKind::kStore>(p, total, row0 + consumer * kWgmmaM, col0, paired);
    }
#pragma unroll
    for (int i = 0; i < kAccumulators; ++i) total[i] = 0.0f;
  }
  if (kPromote && consumer == 0) await_issue(1);  // consumer 1's last announcement
  if (threadIdx.x % kWarpgroupThreads == 0) bulk_wait_all();
}

#endif  // sm_90a

// Chapter 11's kernel with the FP8 consumer; p is the problem as_halves.
template <bool kPromote, Fp8EpilogueKind kKind>
__global__ void __launch_bounds__(clusters::kThreads, 1)
    fp8_gemm_kernel(const __grid_constant__ CUtensorMap map_a,
                    const __grid_constant__ CUtensorMap map_b,
                    const __grid_constant__ CUtensorMap map_c, bool store_by_tma,
                    const __grid_constant__ GemmProblem p, const float* scale_a,
                    const float* scale_b, const __grid_constant__ Fp8Epilogue epilogue) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ __align__(16) uint8_t smem[];
  const uint32_t ring = ring_start(smem);
  const uint32_t staging = ring + clusters::kStages * Ring::kStageBytes;
  const uint32_t full = staging + clusters::kStagingBytes;
  const uint32_t empty = full + clusters::kStages * sizeof(uint64_t);
  if (threadIdx.x == 0) {
    for (int s = 0; s < clusters::kStages; ++s) {
      mbarrier_init(full + s * sizeof(uint64_t), 1);
      mbarrier_init(empty + s * sizeof(uint64_t), kClusterBlocks * clusters::kConsumerWarps);
    }
    fence_barrier_init();
    fence_proxy_async();
  }
  cluster_sync();
  const int warpgroup = threadIdx.x / kWarpgroupThreads;
  if (warpgroup == 0) {
    setmaxnreg_dec<kProducerRegisters>();
    if (threadIdx.x == 0) clusters::produce<Ring>(map_a, map_b, p, ring, full, empty);
  } else {
    setmaxnreg_inc<kConsumerRegisters>();
    consume<kPromote, kKind>(
        warpgroup - 1, p, *scale_a * *scale_b, epilogue, ring, full, empty, map_c, store_by_tma,
        staging + (warpgroup - 1) * clusters::kStoreBuffers * clusters::kStoreBoxBytes);
  }
#else
  __trap();  // built without sm_90a: see wgmma.cuh
#endif
}

// Needs k a multiple of 16 and a GPU with sm_90a code; every epilogue with the promoted sums,
// kStore without.
template <bool kPromote = true>
void launch_fp8_cluster_gemm(const Fp8Problem& fp8, const Fp8Epilogue& epilogue,
                             cudaStream_t stream) {
  if (!kPromote && epilogue.kind != Fp8EpilogueKind::kStore) {
    throw std::invalid_argument("launch_fp8_cluster_gemm: the sums in the tensor cores only store");
  }
  GemmProblem p = as_halves(fp8, epilogue.c);
  p.epilogue.bias = epilogue.bias;  // chapter 08's kBiasRelu epilogue
  p.epilogue.out = epilogue.out;
  const TensorMaps<Ring::A, HalfTile> maps(p);
  const bool store_by_tma = epilogue.kind == Fp8EpilogueKind::kStore && stores_by_tma(p);
  const CUtensorMap map_c = store_by_tma ? store_map(p) : CUtensorMap{};
  const auto launch = [&](auto kernel, int resident) {
    const int blocks = kClusterBlocks * std::min(pair_count(p), resident);
    const ClusterLaunch cluster_launch(kClusterBlocks, blocks, clusters::kThreads,
                                       clusters::kSmemBytes<Ring>, stream);
    CUDA_CHECK(cudaLaunchKernelEx(&cluster_launch.config, kernel, maps.a, maps.b, map_c,
                                  store_by_tma, p, fp8.scale_a, fp8.scale_b, epilogue));
  };
  // One occupancy query per kernel.
  const auto launch_kind = [&](auto kind) {
    constexpr Fp8EpilogueKind kKind = decltype(kind)::value;
    if constexpr (kPromote || kKind == Fp8EpilogueKind::kStore) {
      static const int resident =
          resident_clusters(fp8_gemm_kernel<kPromote, kKind>, clusters::kSmemBytes<Ring>);
      launch(fp8_gemm_kernel<kPromote, kKind>, resident);
    }
  };
  using Kind = Fp8EpilogueKind;
  switch (epilogue.kind) {
    case Kind::kStore:
      return launch_kind(std::integral_constant<Kind, Kind::kStore>{});
    case Kind::kBiasRelu:
      return launch_kind(std::integral_constant<Kind, Kind::kBiasRelu>{});
    case Kind::kQuantise:
      return launch_kind(std::integral_constant<Kind, Kind::kQuantise>{});
    case Kind::kUpdate:
      return launch_kind(std::integral_constant<Kind, Kind::kUpdate>{});
  }
}

}  // namespace mnist::fp8_gemm
