// Chapter 15: the small tile. A GEMM of 32 x 32 block tiles (tile.cuh), one block per tile of C,
// for the products of a training step too small for chapter 14's tiles to fill the GPU.
//
// At batch 32, hidden 128 the second layer's forward product is 32 x 128 x 128. Chapter 14 gives it
// to chapter 12's kernel, whose tiles of 64 weight rows by the batch make 2 blocks on 132 SMs:
//
//   C, 32 x 128:  |<------------------------- 128 outputs -------------------------->|
//   chapter 14:   |          block 0 (64)           |          block 1 (64)          |
//   chapter 15:   |  block 0 (32)  |  block 1 (32)  |  block 2 (32)  |  block 3 (32) |
//
// Each block has 8 warps, one 16 x 8 mma tile a warp, each over all of K.
//
// When: small_tile_takes() below; chapter 14's GEMM takes every other product.
#pragma once

#include "02_smem_tiling/smem_tile.cuh"
#include "14_weight_update/weight_update.cuh"
#include "15_small_tile/tile.cuh"
#include "epilogue.cuh"
#include "gemm_interface.cuh"

namespace mnist::small_tile {

// Chapter 14's GEMM beside it needs sm_90a; the tile itself only mma.sync and cp.async.
constexpr bool kFusedEpilogue = true;
constexpr bool kReplayStepAsGraph = true;
constexpr bool kNeedsSm90a = true;

// The rule, where the tile measured faster than chapter 14 on an H100: a product of at most
// kMaxTiles tiles of 32 x 32, so that they fill at most half its 132 SMs (at 100 tiles chapter 14's
// 26 blocks won), and K of at most kMaxK (at 784 the tile's one chain of mma along K lost).
constexpr int kMaxTiles = 64;
constexpr int kMaxK = 128;

inline bool small_tile_takes(const GemmProblem& p) {
  return tiles_of(p.m, p.n) <= kMaxTiles && p.k <= kMaxK;
}

// Launched with a block per 32 x 32 tile of C: each block's loop takes one.
template <Op kOpA, Op kOpB, EpilogueKind kKind>
__global__ void __launch_bounds__(kThreads)
    small_tile_gemm_kernel(const __grid_constant__ Product x) {
  extern __shared__ __align__(16) uint8_t smem[];
  multiply<kOpA, kOpB, kKind>(x, smem);
}

inline void launch_gemm(const GemmProblem& p, cudaStream_t stream) {
  if (!small_tile_takes(p)) return weight_update::launch_weight_update_or_fall_back(p, stream);
  with_operand_ops(p, [&](auto op_a, auto op_b) {
    constexpr Op kOpA = decltype(op_a)::value, kOpB = decltype(op_b)::value;
    const Product x = {p, smem_tiling::vectorizable(p.a, kOpA == Op::N ? p.k : p.m),
                       smem_tiling::vectorizable(p.b, kOpB == Op::N ? p.n : p.k)};
    with_epilogue_kind(p.epilogue.kind, [&](auto kind) {
      small_tile_gemm_kernel<kOpA, kOpB, decltype(kind)::value>
          <<<tiles_of(p.m, p.n), kThreads, kTileSmemBytes, stream>>>(x);
    });
  });
}

}  // namespace mnist::small_tile
