// One block tile of one product of a training step, through its epilogue: what a block of the
// persistent kernel does with each unit of work it takes (steps.cuh). Built from the earlier
// chapters' parts: chapter 02's shared tiles, chapter 04's cp.async copies and ring, chapter 03's
// ldmatrix and mma.sync, and the epilogues of common/epilogue.cuh.
//
// The products of a small model are small: at batch 32 and hidden 128 a forward product is
// 32 x 128 x 784, and a 128 x 128 tile (chapter 06's) would leave all but one block idle. The tile
// here is 32 x 32, and its K is what the block's 8 warps share (sliced K): each warp multiplies the
// whole 32 x 32 tile over its own 16 of every 128 columns of K, and at the end the 8 partial tiles
// are added in shared memory, warp 0's first, then 1, ..., 7: a fixed order, so the same bits in
// every run.
//
//   K tile of 128:  | warp 0 | warp 1 | ... | warp 7 |   16 of K each, all 32 x 32 of C, as 2 x 4
//                                                         mma tiles of 16 x 8 (32 accumulators a
//                                                         thread)
//   then:  partial[warp][element][lane] in shared memory; thread (w, lane) adds up its mma tile
//          w's 4 elements over the 8 warps and finishes them through the epilogue (finish_pair)
//
// Four stages of cp.async copies (chapter 04's scheme) keep the next three K tiles in flight while
// the warps multiply this one; the partial tiles then reuse the ring's shared memory. Only the
// first layer's products have more than one K tile (784 inputs, 7 tiles), and there each tile
// waits for its copies: with two stages the wait comes 7 times, with four it mostly comes once.
// On the H100 four stages took 3-7% off a step, eight no more (docs/10_persistent_step.md).
//
// A tile's work is a few round trips to memory, not its arithmetic: the copies, then the
// epilogue's own inputs (bias, activations, master weights), then the stores. The second need not
// wait for the first, so it is loaded before the K loop: 3-4% off a step on the H100.
//
// Gathered rows. The first layer's input is the batch, rows order[s * batch + r] of the training
// images: instead of copying them into a batch buffer first (another phase, another grid barrier),
// the tile copies read each row where it lies: that operand's stored row r is image gathered[r].
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
constexpr int kTileM = 32;                                  // rows of C per block tile
constexpr int kTileN = 32;                                  // columns of C per block tile
constexpr int kTileK = kWarps * kMmaK;                      // 128: 16 of K for each warp
constexpr int kStages = 4;                                  // K tiles in the ring
constexpr int kMmaTilesM = kTileM / kMmaM;                  // 2
constexpr int kMmaTilesN = kTileN / kMmaN;                  // 4
constexpr int kAccumulators = kMmaTilesM * kMmaTilesN * 4;  // 32 per thread
static_assert(kMmaTilesM * kMmaTilesN == kWarps, "each warp finishes one mma tile of the sum");

template <Op kOpA, Op kOpB>
using RingFor = cp_async::Ring<SmemTile<kTileM, kTileK, kOpA == Op::N>,
                               SmemTile<kTileN, kTileK, kOpB == Op::T>, kStages>;

// Shared memory a block needs for any of the step's products: the largest ring (both operands
// MN-major, the weight gradient's) or the warps' partial tiles, which reuse it.
constexpr int kPartialBytes = kWarps * kAccumulators * 32 * int(sizeof(float));
constexpr int kSmemBytes = std::max({RingFor<Op::N, Op::T>::kBytes, RingFor<Op::N, Op::N>::kBytes,
                                     RingFor<Op::T, Op::N>::kBytes, kPartialBytes});

// A product of the step: the problem and its epilogue, and how its operands may be read.
struct Product {
  GemmProblem p;
  bool a_vectorized = false, b_vectorized = false;  // smem_tiling::vectorizable() of each
  // Not null where the operand is the batch (A of the first layer's forward product, B of its
  // weight gradient): it is then the training images, and its stored row r is image gathered[r].
  const int* a_gathered = nullptr;
  const int* b_gathered = nullptr;
};

__host__ __device__ inline int tiles_of(const GemmProblem& p) {
  return (p.m + kTileM - 1) / kTileM * ((p.n + kTileN - 1) / kTileN);
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

// Tile `tile` of x.p (row-major over the tiles of C), all of K, through the epilogue kKind. Every
// thread of the block calls it; `smem` holds kSmemBytes.
template <Op kOpA, Op kOpB, EpilogueKind kKind>
__device__ void multiply_tile(const Product& x, int tile, uint8_t* smem) {
  using Ring = RingFor<kOpA, kOpB>;
  using ATile = typename Ring::A;
  using BTile = typename Ring::B;
  const GemmProblem& p = x.p;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int tiles_n = (p.n + kTileN - 1) / kTileN;
  const int row0 = tile / tiles_n * kTileM, col0 = tile % tiles_n * kTileN;
  const int k_tiles = (p.k + kTileK - 1) / kTileK;
  __half* const ring = reinterpret_cast<__half*>(smem);

  // As in chapter 06: one group per K tile, empty past the last, so "tile t has landed" is always
  // the same wait count.
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

  // What the epilogue reads besides the product (the bias, the activations of ReLU', the fp32
  // master weights) was written phases ago: loaded now, while the copies are in flight, it costs
  // no wait of its own after the sum. A thread's elements are those it finishes below, at the mma
  // fragment's places (mma.cuh).
  const bool paired = columns_paired<kKind>(p);
  const int finish_m = warp / kMmaTilesN, finish_n = warp % kMmaTilesN;
  const int col = col0 + finish_n * kMmaN + lane % 4 * 2;
  float2 input[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {  // h = 0: row lane / 4, v[0..1]; h = 1: row lane / 4 + 8, v[2..3]
    const int row = row0 + finish_m * kMmaM + lane / 4 + h * 8;
    input[h] = row < p.m && col < p.n ? epilogue_input_pair<kKind>(p, row, col, paired)
                                      : float2{0.0f, 0.0f};
  }

  float acc[kMmaTilesM][kMmaTilesN][4] = {};
  for (int t = 0; t < k_tiles; ++t) {
    cp_async::cp_async_wait<kStages - 2>();
    // Tile t is in shared memory for everyone, and everyone is done with tile t - 1, whose stage
    // the next line refills.
    __syncthreads();
    load_stage(t + kStages - 1);
    const int k = warp * kMmaK;           // this warp's slice of the K tile
    if (t * kTileK + k >= p.k) continue;  // past K: the slice holds only the copies' zeros
    const __half* a_tile = ring + t % kStages * Ring::kStageElements;
    const __half* b_tile = a_tile + ATile::kElements;
    uint32_t a[kMmaTilesM][4], b[kMmaTilesN][2];
#pragma unroll
    for (int i = 0; i < kMmaTilesM; ++i) {
      mma_sync::load_a_fragment<ATile>(a_tile, i * kMmaM, k, lane, a[i]);
    }
#pragma unroll
    for (int j = 0; j < kMmaTilesN; j += 2) {
      mma_sync::load_b_fragments<BTile>(b_tile, k, j * kMmaN, lane, b[j], b[j + 1]);
    }
#pragma unroll
    for (int i = 0; i < kMmaTilesM; ++i) {
#pragma unroll
      for (int j = 0; j < kMmaTilesN; ++j) mma_sync::mma_m16n8k16(acc[i][j], a[i], b[j]);
    }
  }
  cp_async::cp_async_wait<0>();
  __syncthreads();  // nobody reads the ring any more: the partial tiles take its place

  // partial[warp][e][lane]: element e of the thread's accumulators, lanes side by side.
  float* const partial = reinterpret_cast<float*>(smem);
#pragma unroll
  for (int i = 0; i < kMmaTilesM; ++i) {
#pragma unroll
    for (int j = 0; j < kMmaTilesN; ++j) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        partial[(warp * kAccumulators + (i * kMmaTilesN + j) * 4 + e) * 32 + lane] = acc[i][j][e];
      }
    }
  }
  __syncthreads();  // every warp's partial tile is in place before anyone adds them up

  // Thread (warp, lane) finishes mma tile (finish_m, finish_n) = (warp / 4, warp % 4): its lane's
  // 4 elements, summed over the warps in order.
  float v[4] = {};
  for (int w = 0; w < kWarps; ++w) {
#pragma unroll
    for (int e = 0; e < 4; ++e) v[e] += partial[(w * kAccumulators + warp * 4 + e) * 32 + lane];
  }
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int row = row0 + finish_m * kMmaM + lane / 4 + h * 8;
    if (row < p.m && col < p.n) {
      finish_pair<kKind>(p, row, col, float2{v[2 * h], v[2 * h + 1]}, input[h], paired);
    }
  }
  __syncthreads();  // the partial tiles are read before the next tile's copies overwrite them
}

}  // namespace mnist::persistent_step
