// One 32 x 32 block tile of C, all of K, through its epilogue: chapter 02's shared tiles, chapter
// 03's mma.sync, chapter 04's cp.async ring and the epilogues of common/epilogue.cuh. This
// chapter's GEMM runs one block per tile (gemm.cuh); chapter 16's persistent step deals a phase's
// tiles out to its blocks.
//
// A small model's products are small (32 x 128 x 784 at batch 32, hidden 128): a 128 x 128 tile
// would give one block work. Here each of the 8 warps multiplies one 16 x 8 mma tile over all of K:
//
//   C tile 32 x 32:  | warp 0 | warp 1 | warp 2 | warp 3 |   rows  0-15
//                    | warp 4 | warp 5 | warp 6 | warp 7 |   rows 16-31
#pragma once

#include <algorithm>
#include <cstdint>

#include "02_smem_tiling/smem_tile.cuh"
#include "03_mma_sync/mma.cuh"
#include "04_cp_async/cp_async.cuh"
#include "epilogue.cuh"
#include "gemm_interface.cuh"

namespace mnist::small_tile {

using mma_sync::kMmaK;
using mma_sync::kMmaM;
using mma_sync::kMmaN;
using smem_tiling::SmemTile;

constexpr int kWarps = 8;
constexpr int kThreads = kWarps * 32;
constexpr int kTileM = 32;                  // rows of C a block's warps cover, an mma tile each
constexpr int kTileN = 32;                  // columns of C a block's warps cover, an mma tile each
constexpr int kTileK = 64;                  // K a stage holds: 256 16-byte pieces, one a thread
constexpr int kStages = 4;                  // K tiles in the ring
constexpr int kMmaTilesM = kTileM / kMmaM;  // 2
constexpr int kMmaTilesN = kTileN / kMmaN;  // 4
static_assert(kMmaTilesM * kMmaTilesN == kWarps, "a warp per mma tile");

template <Op kOpA, Op kOpB>
using TileRing = cp_async::Ring<SmemTile<kTileM, kTileK, kOpA == Op::N>,
                                SmemTile<kTileN, kTileK, kOpB == Op::T>, kStages>;

// Shared memory a block needs for any of the step's products: the largest of their rings.
constexpr int kTileSmemBytes = std::max({TileRing<kForward.a, kForward.b>::kBytes,
                                         TileRing<kBackwardData.a, kBackwardData.b>::kBytes,
                                         TileRing<kBackwardWeight.a, kBackwardWeight.b>::kBytes});

// A product: the problem and its epilogue, and whether each operand's rows allow 16-byte copies
// (smem_tiling::vectorizable).
struct Product {
  GemmProblem p;
  bool a_vectorized = false, b_vectorized = false;
};

// The 32 x 32 tiles of a rows x cols C.
__host__ __device__ inline int tiles_of(int rows, int cols) {
  return (rows + kTileM - 1) / kTileM * ((cols + kTileN - 1) / kTileN);
}

// Rows [mn0, ...) x columns [k0, ...) of operand A (kA) or B into `tile`: chapter 04's copies.
template <class Tile, bool kA>
__device__ __forceinline__ void load_operand_async(const Product& x, int mn0, int k0,
                                                   __half* tile) {
  const GemmProblem& p = x.p;
  cp_async::load_tile_async<Tile, kThreads>(kA ? p.a : p.b, kA ? p.m : p.n, p.k, mn0, k0,
                                            kA ? x.a_vectorized : x.b_vectorized, tile);
}

// K tile t (kTileKOf columns of K) of both operands into stage t % kStages of the Ring: one
// cp.async group a call, empty past the last K tile, so that "tile t has landed" is always the
// same wait. The copies are load_operand_async's for x's type, found where x's type is declared:
// chapter 16's products of a training step copy the batch through the epoch's order.
template <class Ring, int kTileKOf, class X>
__device__ __forceinline__ void load_stage(const X& x, int row0, int col0, int t, __half* ring) {
  if (t < (x.p.k + kTileKOf - 1) / kTileKOf) {
    const int k0 = t * kTileKOf;
    __half* a = ring + t % kStages * Ring::kStageElements;
    load_operand_async<typename Ring::A, true>(x, row0, k0, a);
    load_operand_async<typename Ring::B, false>(x, col0, k0, a + Ring::A::kElements);
  }
  cp_async::cp_async_commit();
}

// The B fragments of one 16 x 8 piece of op(B) at two steps of K, (k, n) and (k + 16, n): one
// ldmatrix.x4 fetches the 8 x 8 matrices at k, k + 8, k + 16 and k + 24 (chapter 03's
// load_b_fragments fetches two pieces side by side along n, for a warp tile twice as wide).
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

// 32 x 32 tile `tile` of x.p (row-major over the tiles of C), all of K, through the epilogue kKind.
// Every thread of the block calls it; `smem` holds TileRing<kOpA, kOpB>::kBytes.
template <Op kOpA, Op kOpB, EpilogueKind kKind, class X>
__device__ void multiply_tile(const X& x, int tile, uint8_t* smem) {
  using Ring = TileRing<kOpA, kOpB>;
  const GemmProblem& p = x.p;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int tiles_n = (p.n + kTileN - 1) / kTileN;
  const int row0 = tile / tiles_n * kTileM, col0 = tile % tiles_n * kTileN;
  const int warp_row = warp / kMmaTilesN * kMmaM, warp_col = warp % kMmaTilesN * kMmaN;
  const int k_tiles = (p.k + kTileK - 1) / kTileK;
  __half* const ring = reinterpret_cast<__half*>(smem);

  for (int t = 0; t < kStages - 1; ++t) load_stage<Ring, kTileK>(x, row0, col0, t, ring);
  float acc[4] = {};
  for (int t = 0; t < k_tiles; ++t) {
    cp_async::cp_async_wait<kStages - 2>();
    // Tile t is in for everyone, and everyone is done with tile t - 1, whose stage is refilled.
    __syncthreads();
    load_stage<Ring, kTileK>(x, row0, col0, t + kStages - 1, ring);
    const __half* a_tile = ring + t % kStages * Ring::kStageElements;
    const __half* b_tile = a_tile + Ring::A::kElements;
#pragma unroll
    for (int k = 0; k < kTileK; k += 2 * kMmaK) {
      if (t * kTileK + k >= p.k) break;  // past K the tile holds only the copies' zeros
      uint32_t a0[4], a1[4], b0[2], b1[2];
      mma_sync::load_a_fragment<typename Ring::A>(a_tile, warp_row, k, lane, a0);
      mma_sync::load_a_fragment<typename Ring::A>(a_tile, warp_row, k + kMmaK, lane, a1);
      load_b_fragments_along_k<typename Ring::B>(b_tile, k, warp_col, lane, b0, b1);
      mma_sync::mma_m16n8k16(acc, a0, b0);
      mma_sync::mma_m16n8k16(acc, a1, b1);
    }
  }

  // The lane's 4 elements of its warp's mma tile (mma.cuh): h = 0, row lane / 4, acc[0..1];
  // h = 1, row lane / 4 + 8, acc[2..3]; columns lane % 4 * 2 and the next.
  const bool paired = columns_paired<kKind>(p);
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int row = row0 + warp_row + lane / 4 + h * 8, col = col0 + warp_col + lane % 4 * 2;
    if (row < p.m && col < p.n) {
      const float2 input = epilogue_input_pair<kKind>(p, row, col, paired);
      finish_pair<kKind>(p, row, col, {acc[2 * h], acc[2 * h + 1]}, input, paired);
    }
  }
  // The ring is free for the block's next tile, and the block sees its results.
  __syncthreads();
}

// The 32 x 32 tiles of one product, dealt out to the blocks in turn.
template <Op kOpA, Op kOpB, EpilogueKind kKind, class X>
__device__ void multiply(const X& x, uint8_t* smem) {
  for (int tile = blockIdx.x; tile < tiles_of(x.p.m, x.p.n); tile += gridDim.x) {
    multiply_tile<kOpA, kOpB, kKind>(x, tile, smem);
  }
}

}  // namespace mnist::small_tile
