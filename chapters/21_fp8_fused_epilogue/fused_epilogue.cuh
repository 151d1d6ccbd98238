// Chapter 20's FP8 kernel with its epilogues fused: the tiles of a product leave as the next
// tensor's fp8 copies instead of as fp32 C for the trainer to quantise in a pass of its own.
//
//   chapter 20   product -> C (fp32) -> finish_fp8_kernel -> x, x_t, amax   4 bytes an element
//                                                                          stored, then read
//   here         product -> registers -> x, x_t, amax                      1 + 1 bytes stored
//
//   kQuantise   forward, ReLU(C + bias): the next layer's input; backward data, C where the
//               activation's code is > 0: the layer below's gradient
//   kUpdate     SGD on a weight gradient's tile: the masters move, their e4m3 copies w and w_t
//               are written, each weight read and written once a step
// Both keep the amax and note the copy's factor (common/fp8_scaling.cuh). The transposed copy
// leaves through shared memory (finish_quantised).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "20_fp8_gemm/fp8_gemm.cuh"
#include "fp8_interface.cuh"
#include "fp8_quantise.cuh"
#include "fp8_scaling.cuh"

namespace mnist::fp8_fused_epilogue {

using namespace fp8_gemm;

template <bool kUpdate>
struct QuantisedTiles;

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)

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
// x_t goes through `staging` (this consumer's 16 KiB, which chapter 11's TMA store of C would
// use) transposed: written from the registers, its codes would be single bytes t_pitch apart, one
// L2 write each.
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
        in[h][i] =
            kWhole || (row < p.m && col < p.n)
                ? epilogue_inputs<kUpdate, kWhole>(e, size_t(row) * p.n + col, col, col + 1 < p.n)
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

// Chapter 20's consumer hook (StoreTiles) for kQuantise (kUpdate false) and kUpdate: the masters
// start for L2 as the K loop starts; the sums go through finish_quantised, without bounds checks
// where the warpgroup's tile lies inside C.
template <bool kUpdate>
struct QuantisedTiles {
  __device__ static void start(const GemmProblem& p, const Fp8Epilogue& e, int row0, int col0) {
    if (kUpdate) prefetch_masters(p, e, row0, col0);
  }
  __device__ static void finish(const GemmProblem& p, float (&total)[kAccumulators], int consumer,
                                int row0, int col0, const Fp8Epilogue& e, const CUtensorMap&, bool,
                                uint32_t staging) {
    if (row0 + kWgmmaM <= p.m && col0 + kWgmmaN <= p.n && p.n % 2 == 0) {
      finish_quantised<kUpdate, true>(p, total, consumer, row0, col0, e, staging);
    } else {
      finish_quantised<kUpdate, false>(p, total, consumer, row0, col0, e, staging);
    }
  }
};

#endif  // sm_90a

// Every epilogue of fp8_interface.cuh on chapter 20's kernel.
inline void launch_fp8_fused_gemm(const Fp8Problem& p, const Fp8Epilogue& epilogue,
                                  cudaStream_t stream) {
  if (epilogue.kind == Fp8EpilogueKind::kQuantise) {
    launch_fp8_tiles<true, QuantisedTiles<false>>(p, epilogue, stream);
  } else if (epilogue.kind == Fp8EpilogueKind::kUpdate) {
    launch_fp8_tiles<true, QuantisedTiles<true>>(p, epilogue, stream);
  } else {
    launch_fp8_cluster_gemm<true>(p, epilogue, stream);
  }
}

}  // namespace mnist::fp8_fused_epilogue
