// One block tile of one product of a training step, through its epilogue: the unit of work of the
// persistent kernel (steps.cuh), from chapter 02's shared tiles, chapter 03's mma.sync, chapter
// 04's cp.async ring and the epilogues of common/epilogue.cuh.
//
// A small model's products are small (32 x 128 x 784 at batch 32, hidden 128), so the tile is
// 32 x 32: one 16 x 8 mma tile for each of the 8 warps, over all of K, the steps of 16 going to
// kChains sets of accumulators in turn so that each mma waits for the one kChains back.
//
//   C tile 32 x 32:  | warp 0 | warp 1 | warp 2 | warp 3 |   rows  0-15
//                    | warp 4 | warp 5 | warp 6 | warp 7 |   rows 16-31
//
// The weight gradients (K = the batch, one short K tile, and many tiles) take 2 x 2 of those tiles
// at once (WeightTile), sharing each warp's fragments between them. The epilogue's own inputs are
// loaded before the K loop, while the copies are in flight; the first layer's tiles copy the
// batch's rows straight from the training images, through the epoch's order.
#pragma once

#include <algorithm>
#include <cstdint>

#include "02_smem_tiling/smem_tile.cuh"
#include "03_mma_sync/mma.cuh"
#include "04_cp_async/cp_async.cuh"
#include "dataset.hpp"
#include "epilogue.cuh"
#include "gemm_interface.cuh"

namespace mnist::persistent_step {

using mma_sync::kMmaK;
using mma_sync::kMmaM;
using mma_sync::kMmaN;
using smem_tiling::SmemTile;

constexpr int kWarps = 8;
constexpr int kThreads = kWarps * 32;
constexpr int kTileM = 32;                  // rows of C a block's warps cover, an mma tile each
constexpr int kTileN = 32;                  // columns of C a block's warps cover, an mma tile each
constexpr int kStages = 4;                  // K tiles in the ring
constexpr int kMmaTilesM = kTileM / kMmaM;  // 2
constexpr int kMmaTilesN = kTileN / kMmaN;  // 4
static_assert(kMmaTilesM * kMmaTilesN == kWarps, "a warp per mma tile");

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

// A product of the step: the problem and its epilogue, and how its operands may be read.
struct Product {
  GemmProblem p;
  bool a_vectorized = false, b_vectorized = false;  // smem_tiling::vectorizable() of each
  // Not null where the operand is the batch (A of the first layer's forward product, B of its
  // weight gradient): it is then the training images, and its stored row r is image gathered[r].
  const int* a_gathered = nullptr;
  const int* b_gathered = nullptr;
};

// The Tile-sized tiles of a rows x cols C.
template <class Tile>
__host__ __device__ inline int tiles_of(int rows, int cols) {
  return (rows + Tile::kM - 1) / Tile::kM * ((cols + Tile::kN - 1) / Tile::kN);
}

template <class Tile>
__host__ __device__ inline int tiles_of(const GemmProblem& p) {
  return tiles_of<Tile>(p.m, p.n);
}

// Chapter 04's load_tile_async for an operand whose stored row r is image gathered[r]: rows of
// kPixels halves, which every 16-byte copy allows.
template <class Tile>
__device__ __forceinline__ void load_gathered_tile_async(const __half* images, const int* gathered,
                                                         int mn_extent, int k_extent, int mn0,
                                                         int k0, __half* tile) {
  static_assert(kPixels % smem_tiling::kVector == 0, "image rows of whole 16-byte pieces");
  smem_tiling::for_each_piece<Tile, kThreads>(
      mn_extent, k_extent, mn0, k0, tile, [&](int row, int col, int rows, int cols, __half* dst) {
        const bool inside = row < rows && col < cols;
        const __half* src = inside ? images + size_t(gathered[row]) * cols + col : images;
        cp_async::cp_async_16(dst, src, inside ? 16 : 0);
      });
}

// The B fragments of one 16 x 8 piece of op(B) at two steps of K, (k, n) and (k + 16, n): one
// ldmatrix.x4 fetches the 8 x 8 matrices at k, k + 8, k + 16 and k + 24 (chapter 03's
// load_b_fragments fetches two pieces side by side along n instead).
template <class Tile>
__device__ __forceinline__ void load_b_fragments_along_k(const __half* tile, int k, int n, int lane,
                                                         uint32_t (&b0)[2], uint32_t (&b1)[2]) {
  const int ki = k + lane / 8 * 8, row = lane % 8;  // lane l names row l % 8 of matrix l / 8
  uint32_t r[4];
  if (Tile::kKMajor) {
    mma_sync::ldmatrix_x4<false>(tile + (n + row) * Tile::kStride + ki, r);  // stored N x K
  } else {
    mma_sync::ldmatrix_x4<true>(tile + (ki + row) * Tile::kStride + n, r);  // stored K x N
  }
  b0[0] = r[0], b0[1] = r[1], b1[0] = r[2], b1[1] = r[3];
}

// Block tile `tile` of x.p (row-major over the Tile-sized tiles of C), all of K, through the
// epilogue kKind. Every thread of the block calls it; `smem` holds kSmemBytes.
template <Op kOpA, Op kOpB, EpilogueKind kKind, class Tile = LayerTile>
__device__ void multiply_tile(const Product& x, int tile, uint8_t* smem) {
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

  // One group per K tile, empty past the last, so "tile t has landed" is always the same wait.
  const auto load_stage = [&](int t) {
    if (t < k_tiles) {
      __half* a = ring + t % kStages * Ring::kStageElements;
      __half* b = a + ATile::kElements;
      const int k0 = t * kTileK;
      if (x.a_gathered) {
        load_gathered_tile_async<ATile>(p.a, x.a_gathered, p.m, p.k, row0, k0, a);
      } else {
        cp_async::load_tile_async<ATile, kThreads>(p.a, p.m, p.k, row0, k0, x.a_vectorized, a);
      }
      if (x.b_gathered) {
        load_gathered_tile_async<BTile>(p.b, x.b_gathered, p.n, p.k, col0, k0, b);
      } else {
        cp_async::load_tile_async<BTile, kThreads>(p.b, p.n, p.k, col0, k0, x.b_vectorized, b);
      }
    }
    cp_async::cp_async_commit();
  };

  for (int t = 0; t < kStages - 1; ++t) load_stage(t);

  // What the epilogue reads besides the product was written phases ago: loaded now, during the
  // copies. A thread's elements are its mma fragment's places (mma.cuh) in its warp's mma tile of
  // each 32 x 32 tile (i, j).
  const bool paired = columns_paired<kKind>(p);
  const int mma_m = warp / kMmaTilesN, mma_n = warp % kMmaTilesN;  // the warp's mma tile
  const auto row_of = [&](int i, int h) {  // h = 0: row lane / 4, v[0..1]; 1: lane / 4 + 8, v[2..3]
    return row0 + i * kTileM + mma_m * kMmaM + lane / 4 + h * 8;
  };
  const auto col_of = [&](int j) { return col0 + j * kTileN + mma_n * kMmaN + lane % 4 * 2; };
  float2 input[kTilesM][kTilesN][2];
#pragma unroll
  for (int i = 0; i < kTilesM; ++i) {
#pragma unroll
    for (int j = 0; j < kTilesN; ++j) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int row = row_of(i, h), col = col_of(j);
        input[i][j][h] = row < p.m && col < p.n ? epilogue_input_pair<kKind>(p, row, col, paired)
                                                : float2{0.0f, 0.0f};
      }
    }
  }

  // chain c: the steps of 16 at k = 16 c, 16 (c + kChains), ...
  float acc[kTilesM][kTilesN][kChains][4] = {};
  for (int t = 0; t < k_tiles; ++t) {
    cp_async::cp_async_wait<kStages - 2>();
    // Tile t is in for everyone, and everyone is done with tile t - 1, whose stage is refilled.
    __syncthreads();
    load_stage(t + kStages - 1);
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
#pragma unroll
  for (int i = 0; i < kTilesM; ++i) {
#pragma unroll
    for (int j = 0; j < kTilesN; ++j) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int row = row_of(i, h), col = col_of(j);
        if (row < p.m && col < p.n) {
          const float(&chains)[kChains][4] = acc[i][j];
          float2 v = {0.0f, 0.0f};
#pragma unroll
          for (int c = 0; c < kChains; ++c) v.x += chains[c][2 * h], v.y += chains[c][2 * h + 1];
          finish_pair<kKind>(p, row, col, v, input[i][j][h], paired);
        }
      }
    }
  }
  // The ring is free for the next tile, and the block sees its results (the loss reads the logits).
  __syncthreads();
}

}  // namespace mnist::persistent_step
