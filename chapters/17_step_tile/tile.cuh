// Chapter 15's 32 x 32 block tile made fast for the small products of a training step: the same
// unit of work, from the same copies (chapter 15's load_stage) and mma.sync, but
//  - each warp's steps of 16 along K go to kChains sets of accumulators in turn, so that an mma
//    waits for the one kChains back, not for the one before, and a K tile is 128 deep;
//  - the weight gradients (K = the batch, one short K tile, and many tiles) take 2 x 2 of those
//    tiles at once (WeightTile), sharing each warp's fragments between them;
//  - the epilogue's own inputs are loaded before the K loop, while the copies are in flight.
//
//   C tile 32 x 32:  | warp 0 | warp 1 | warp 2 | warp 3 |   rows  0-15, as in chapter 15
//                    | warp 4 | warp 5 | warp 6 | warp 7 |   rows 16-31
#pragma once

#include <algorithm>
#include <cstdint>

#include "16_persistent_step/schedule.cuh"
#include "epilogue.cuh"
#include "gemm_interface.cuh"

namespace mnist::step_tile {

using namespace persistent_step;  // chapter 16's schedule, and through it chapter 15's tile

// A block tile: kTilesM x kTilesN of the 32 x 32 tiles, K copied kTileK columns a stage, the steps
// of 16 along K going to kChains sets of accumulators in turn.
template <int kTilesMOf, int kTilesNOf, int kTileKOf, int kChainsOf>
struct StepTile {
  static constexpr int kTilesM = kTilesMOf, kTilesN = kTilesNOf;
  static constexpr int kM = kTilesM * kTileM, kN = kTilesN * kTileN;
  static constexpr int kTileK = kTileKOf, kChains = kChainsOf;
  static_assert(kTileK % (kChains * kMmaK) == 0 && kChains % 2 == 0, "whole rounds, B in pairs");
};
using LayerTile = StepTile<1, 1, 128, 4>;  // forward and backward-data products
using WeightTile = StepTile<2, 2, 32, 2>;  // weight gradients: K is the batch

template <Op kOpA, Op kOpB, class Tile>
using RingFor = cp_async::Ring<SmemTile<Tile::kM, Tile::kTileK, kOpA == Op::N>,
                               SmemTile<Tile::kN, Tile::kTileK, kOpB == Op::T>, kStages>;

// Shared memory a block needs for any of the step's products: the largest of their rings.
constexpr int kSmemBytes =
    std::max({RingFor<kForward.a, kForward.b, LayerTile>::kBytes,
              RingFor<kBackwardData.a, kBackwardData.b, LayerTile>::kBytes,
              RingFor<kBackwardWeight.a, kBackwardWeight.b, WeightTile>::kBytes});

// The Tile-sized tiles of a rows x cols C.
template <class Tile>
__host__ __device__ inline int tiles_of(int rows, int cols) {
  return (rows + Tile::kM - 1) / Tile::kM * ((cols + Tile::kN - 1) / Tile::kN);
}

template <class Tile>
__host__ __device__ inline int tiles_of(const GemmProblem& p) {
  return tiles_of<Tile>(p.m, p.n);
}

// Block tile `tile` of x.p (row-major over the Tile-sized tiles of C), all of K, through the
// epilogue kKind. Every thread of the block calls it; `smem` holds kSmemBytes.
template <Op kOpA, Op kOpB, EpilogueKind kKind, class Tile = LayerTile>
__device__ void multiply_step_tile(const StepProduct& x, int tile, uint8_t* smem) {
  using Ring = RingFor<kOpA, kOpB, Tile>;
  using ATile = typename Ring::A;
  using BTile = typename Ring::B;
  constexpr int kTilesM = Tile::kTilesM, kTilesN = Tile::kTilesN;
  constexpr int kTileK = Tile::kTileK, kChains = Tile::kChains;
  const GemmProblem& p = x.p;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int tiles_n = (p.n + Tile::kN - 1) / Tile::kN;
  const int row0 = tile / tiles_n * Tile::kM, col0 = tile % tiles_n * Tile::kN;
  const int k_tiles = (p.k + kTileK - 1) / kTileK;
  __half* const ring = reinterpret_cast<__half*>(smem);

  for (int t = 0; t < kStages - 1; ++t) load_stage<Ring, kTileK>(x, row0, col0, t, ring);

  // What the epilogue reads besides the product was written phases ago: loaded now, during the
  // copies. A thread's elements are its mma fragment's places (mma.cuh) in its warp's mma tile of
  // each 32 x 32 tile (i, j).
  const bool paired = columns_paired<kKind>(p);
  const int mma_m = warp / kMmaTilesN, mma_n = warp % kMmaTilesN;  // the warp's mma tile
  const auto row_of = [&](int i, int h) {  // h = 0: row lane / 4, v[0..1]; 1: lane / 4 + 8, v[2..3]
    return row0 + i * kTileM + mma_m * kMmaM + lane / 4 + h * 8;
  };
  const auto col_of = [&](int j) { return col0 + j * kTileN + mma_n * kMmaN + lane % 4 * 2; };
  // f(i, j, h, row, col) for each of the thread's places inside C.
  const auto each_place = [&](auto f) {
#pragma unroll
    for (int i = 0; i < kTilesM; ++i) {
#pragma unroll
      for (int j = 0; j < kTilesN; ++j) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int row = row_of(i, h), col = col_of(j);
          if (row < p.m && col < p.n) f(i, j, h, row, col);
        }
      }
    }
  };
  float2 input[kTilesM][kTilesN][2] = {};
  each_place([&](int i, int j, int h, int row, int col) {
    input[i][j][h] = epilogue_input_pair<kKind>(p, row, col, paired);
  });

  // chain c: the steps of 16 at k = 16 c, 16 (c + kChains), ...
  float acc[kTilesM][kTilesN][kChains][4] = {};
  for (int t = 0; t < k_tiles; ++t) {
    cp_async::cp_async_wait<kStages - 2>();
    // Tile t is in for everyone, and everyone is done with tile t - 1, whose stage is refilled.
    __syncthreads();
    load_stage<Ring, kTileK>(x, row0, col0, t + kStages - 1, ring);
    const __half* a_tile = ring + t % kStages * Ring::kStageElements;
    const __half* b_tile = a_tile + ATile::kElements;
#pragma unroll
    for (int k = 0; k < kTileK; k += kChains * kMmaK) {
      if (t * kTileK + k >= p.k) break;  // past K the tile holds only the copies' zeros
      uint32_t a[kTilesM][kChains][4], b[kTilesN][kChains][2];
#pragma unroll
      for (int i = 0; i < kTilesM; ++i) {
#pragma unroll
        for (int c = 0; c < kChains; ++c) {
          mma_sync::load_a_fragment<ATile>(a_tile, i * kTileM + mma_m * kMmaM, k + c * kMmaK, lane,
                                           a[i][c]);
        }
      }
#pragma unroll
      for (int j = 0; j < kTilesN; ++j) {
#pragma unroll
        for (int c = 0; c < kChains; c += 2) {
          load_b_fragments_along_k<BTile>(b_tile, k + c * kMmaK, j * kTileN + mma_n * kMmaN, lane,
                                          b[j][c], b[j][c + 1]);
        }
      }
#pragma unroll
      for (int i = 0; i < kTilesM; ++i) {
#pragma unroll
        for (int j = 0; j < kTilesN; ++j) {
#pragma unroll
          for (int c = 0; c < kChains; ++c) mma_sync::mma_m16n8k16(acc[i][j][c], a[i][c], b[j][c]);
        }
      }
    }
  }

  // Thread (warp, lane) finishes its lane's 4 elements of the warp's mma tile in each tile (i, j).
  each_place([&](int i, int j, int h, int row, int col) {
    float2 v = {0.0f, 0.0f};
#pragma unroll
    for (int c = 0; c < kChains; ++c) v.x += acc[i][j][c][2 * h], v.y += acc[i][j][c][2 * h + 1];
    finish_pair<kKind>(p, row, col, v, input[i][j][h], paired);
  });
  // The ring is free for the next tile, and the block sees its results (the loss reads the logits).
  __syncthreads();
}

}  // namespace mnist::step_tile
