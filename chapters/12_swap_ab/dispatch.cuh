// Which products chapter 09's kernel takes, with which batch tile, and into how many ranges of K it
// cuts each (docs/09_swap_ab_split_k.md works the rule out for every product of the trainer). Every
// other product goes where chapter 08 sends it: chapter 08's kernel or chapter 06's.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "02_smem_tiling/smem_tile.cuh"
#include "07_wgmma/tma.cuh"
#include "07_wgmma/wgmma.cuh"
#include "gemm_interface.cuh"

namespace mnist::swap_ab_split_k {

using wgmma::kTileK;
using wgmma::kWgmmaM;

// The batch tiles the kernel is compiled for, each one wgmma's N (256 is wgmma's largest): a
// product takes one of them, and as many batch tiles as M needs (block_tile_for below); TMA fills
// the rows past M with zeros.
constexpr int kBatchTiles[] = {32, 64, 128, 256};
constexpr int kMaxBatch = 256;
constexpr int kMinKTilesToSplit = 32;  // K tiles of 64 a product needs before K is split
constexpr int kMinKTilesPerSplit = 8;  // K tiles of 64 each split walks at least
constexpr int kMaxSplits = 16;         // most ranges K is cut into
// Arrival counters, one per consumer warpgroup of a tile (the part of a tile one warpgroup
// computes): the most a split product may have. Split products have fewer tiles than the GPU has
// SMs.
constexpr int kArrivalCounters = 1024;

// Consumer warpgroups of a block: two for the batch tiles of 128 and 256, whose operand tile is
// then read once for 128 weight rows (gemm.cuh, "The block"), one below.
// The batch-256 products that take the tile of 128 (hidden 8192) took 0.76-0.88 of their time with
// one consumer on the H100 (docs/results/session25, call 6).
constexpr int consumers_for(int batch_tile) {
  return batch_tile >= 128 ? 2 : 1;
}

// A block's tile of C^T: `rows` weight rows by `batch` columns, a batch tile. Its consumers take
// 64 of the rows each (rows = consumers x 64), or, in a tile of 64 rows with two consumers, half
// of the batch columns each: each reads the whole weight tile and its own columns of the batch.
//
//   rows split, 128 x 128          columns split, 64 x 128
//          batch tile                     batch tile
//        +------------+               +------+------+
//   64   | consumer 0 |          64   |  c0  |  c1  |   c0: columns 0-63, c1: columns 64-127,
//   64   | consumer 1 |               +------+------+       both on the same 64 weight rows
//        +------------+
//
// The columns split takes the place of two blocks of 64 x 64 on one SM (the batch tile of 64, one
// consumer each): per K tile the SM reads 64 weight rows and 128 batch rows from L2 instead of 128
// and 128 (block_tile_for below says where, and what it measured).
struct BlockTile {
  int rows, batch;
};

constexpr BlockTile rows_split_tile(int batch_tile) {
  return {consumers_for(batch_tile) * kWgmmaM, batch_tile};
}
constexpr BlockTile kColumnsSplitTile = {kWgmmaM, 128};

// The batch tiles of M rows, and the tiles of C^T: tile_rows weight rows by a batch tile.
__host__ __device__ inline int batch_tiles_of(int m, int batch_tile) {
  return (m + batch_tile - 1) / batch_tile;
}

__host__ __device__ inline int tiles_of(const GemmProblem& p, int tile_rows, int batch_tile) {
  return (p.n + tile_rows - 1) / tile_rows * batch_tiles_of(p.m, batch_tile);
}
inline int tiles_of(const GemmProblem& p, BlockTile tile) {
  return tiles_of(p, tile.rows, tile.batch);
}

// The batch operand, op(A)^T, is K-major where A is not transposed and MN-major where it is (the
// weight gradients), and an MN-major tile is TMA boxes 64 columns wide (07_wgmma/tma.cuh): the
// batch tile of 32 exists only for the first. The weight gradients take the kernel only where
// their tiles with a batch tile of at most 128 all run at once (block_tile_for below).
template <Op kOpA>
constexpr int kSmallestBatchTile = kOpA == Op::N ? 32 : 64;
template <Op kOpA>
constexpr int kLargestBatchTile = kOpA == Op::N ? 256 : 128;
constexpr BlockTile kNoBlockTile = {0, 0};  // block_tile_for's answer where chapter 08 takes it

// The block tile. First its batch tile: the smallest whose tiles of C^T the GPU runs all at once,
// one block each (resident(tile) blocks, before K is split), and at most the smallest that holds
// M. A smaller batch tile makes more tiles, each reading its weight rows again (from L2) but for
// fewer batch columns, and a product that fills the GPU with tiles needs fewer splits, or none.
// Every batch-256 product of the trainer with each batch tile forced, on the H100 (CUDA-graph
// medians, docs/results/session21/call1 and call2): where the tiles of 32 all run at once (hidden
// 2048 and below) they took 0.75-0.95 of the time of the tiles of 64, and those 0.37-0.62 of the
// tile of 256's; at 4096 x 4096 and 4096 x 784 the tiles of 64 (256 tiles) took 0.66 and 0.79 of
// 32's (512) and 0.60 and 0.46 of 256's; at 8192 x 8192 and 8192 x 784 the tiles of 128 (256 tiles
// of one consumer then) took 0.83-0.84 and 0.77 of 64's (512) and 0.90-0.97 and 0.58 of 256's.
//
// Then, for the forward and backward-data products, one exchange: where the batch tile of 64 wins
// with M past one batch tile, two of its blocks share each SM, each reading 64 weight rows and 64
// batch rows per K tile. One block of 64 weight rows by 128 batch columns, whose two consumers take
// 64 columns each, reads 64 weight rows and 128 batch rows for the same outputs, a quarter less
// from L2, where its tiles, half as many, run all at once too. At batch 256, hidden 4096 the
// forward and backward-data products took 0.81-0.86 of their time on it (docs/results/session26,
// call 8). Not for the weight gradients, on which the exchange was not measured on its own.
template <Op kOpA, class Resident>
BlockTile block_tile_for(const GemmProblem& p, Resident&& resident) {
  for (const int batch_tile : kBatchTiles) {
    if (batch_tile < kSmallestBatchTile<kOpA> || batch_tile > kLargestBatchTile<kOpA>) continue;
    const BlockTile tile = rows_split_tile(batch_tile);
    if (p.m > batch_tile && tiles_of(p, tile) > resident(tile)) continue;
    const bool share_weight_rows = kOpA == Op::N && batch_tile == 64 && p.m > batch_tile &&
                                   tiles_of(p, kColumnsSplitTile) <= resident(kColumnsSplitTile);
    return share_weight_rows ? kColumnsSplitTile : tile;
  }
  return kOpA == Op::N ? rows_split_tile(kMaxBatch) : kNoBlockTile;
}

// (1) The product has a batch-sized dimension of at most kMaxBatch: M where A is not transposed
// (the forward and backward-data products), K where it is (the weight gradients, dW = dY^T X, whose
// K is the batch); (2) TMA can read both operands (16-byte aligned, every stored row a multiple of
// 8 halves). M itself may be anything from 1 to 256: rows of the last batch tile past M are TMA's
// zeros, and the epilogue skips them. The GPU is an H100 with sm_90a code: gemm() runs the chapter
// nowhere else (kNeedsSm90a, common/gpu_requirements.hpp).
//
// A weight gradient then runs here only where block_tile_for finds it a batch tile of 64 or 128
// (the swapped problem's M is the layer's outputs, up to 8192: C^T's columns, like the batch's).
// Every trainer weight gradient, timed on the H100 with the batch tile forced (CUDA-graph medians,
// docs/results/session22/call1): where their tiles of 64 or 128 all run at once this kernel took
// 0.32-0.76 of chapter 08's path at batch 256 (whose rule sends them to chapter 06's split-K
// kernel; 1024 x 1024 x 256: 4.8 us against 14.8) and 0.92-1.09 at batch 32 (K = 32, one K tile:
// these are their epilogue); beyond one wave chapter 08's tile of 128 x 256 did better (4096 x
// 4096 x 256: 29.8 us against 36.1 on tiles of 256), and the trainer with every weight gradient
// here took 1.18-1.32 times as long at batch 256, hidden 4096 and 8192, and at 32 x 8192.
//
// The output layer's forward product, N = 10 (one tile of 64 rows, 10 of them weights, the rest
// zeros), comes here too: at batch 32 chapter 08's path took 1.33-1.35 times this kernel's time
// (CUDA-graph medians at hidden 1024 and 8192, docs/results/gemm_08_warp_specialized.csv against
// docs/results/ch09/gemm_09_swap_ab_split_k.csv); at batch 256, on 8 batch tiles of 32, this
// kernel took 0.74-0.98 of chapter 08's time at every hidden width (docs/results/session21/call2).
// The output layer's other products never come here: backward-data has K = 10 and the weight
// gradient M = 10 (rows of 20 bytes).
template <Op kOpA, Op kOpB>
bool swap_ab_takes(const GemmProblem& p) {
  return (kOpA == Op::N ? p.m : p.k) <= kMaxBatch &&
         smem_tiling::vectorizable(p.a, kOpA == Op::N ? p.k : p.m) &&
         smem_tiling::vectorizable(p.b, kOpB == Op::N ? p.n : p.k);
}

// Calls f(std::integral_constant<int, rows>{}, std::integral_constant<int, batch>{}) for a block
// tile known only at run time, one of block_tile_for<kOpA>'s.
template <Op kOpA, class F>
void with_block_tile(BlockTile tile, F&& f) {
  using std::integral_constant;
  if constexpr (kSmallestBatchTile<kOpA> == 32) {
    if (tile.batch == 32) return f(integral_constant<int, kWgmmaM>{}, integral_constant<int, 32>{});
  }
  if constexpr (kLargestBatchTile<kOpA> == 256) {
    if (tile.batch == 256) {
      return f(integral_constant<int, 2 * kWgmmaM>{}, integral_constant<int, 256>{});
    }
  }
  if constexpr (kOpA == Op::N) {
    if (tile.batch == 128 && tile.rows == kWgmmaM) {
      return f(integral_constant<int, kWgmmaM>{}, integral_constant<int, 128>{});
    }
  }
  if (tile.batch == 64) return f(integral_constant<int, kWgmmaM>{}, integral_constant<int, 64>{});
  return f(integral_constant<int, 2 * kWgmmaM>{}, integral_constant<int, 128>{});
}

// How K is cut: `splits` ranges of k_tiles_per_split K tiles of 64 (the last may be shorter). Split
// s of a tile writes its fp32 partial tile to `partials` (in the caller's workspace, from a 16-byte
// boundary); null where splits is 1.
struct SplitPlan {
  int splits;
  int k_tiles_per_split;
  float* partials;
};

// Chapter 05's rule, with the partial tiles read back by the kernel itself, and with what a split
// costs: each block stores its partial tile, fences and counts, and the last one reads the others
// back. On the H100 (docs/results/session22/call3, CUDA-graph medians) the 35 trainer products
// under 32 K tiles that session 21's rule split took 0.98-1.66 times as long split as whole (256 x
// 512 x 512: 5.6 us split in 4, 3.8 us whole); among them, products with as many tiles as half the
// SMs, split into two blocks per SM (256 x 1024 x 1024, 128 tiles: 1.34 times). At 16 K tiles a
// split in 2 lost too (32 x 1024 x 1024: 5.3 us against 4.8), and at 128 K tiles the split of 128
// tiles into two blocks per SM (32 x 8192 x 8192: 50.9 us against 48.6). So K is split only where
// it has at least kMinKTilesToSplit K tiles (K >= 2048); into no more (tile, split) blocks than the
// GPU has SMs; every split at least kMinKTilesPerSplit K tiles long; at most kMaxSplits; no more
// than the workspace holds. And one rule of this chapter's own: the last block of a tile reads the
// other splits' partial tiles back, alone, so those fp32 bytes may be no more than the operand
// bytes one split reads, or that one block would take longer for the sum than the others for their
// share of K. Each split then gets ceil(k_tiles / splits) tiles and splits is recomputed, so that
// no split is left empty.
inline SplitPlan plan_split(const GemmProblem& p, BlockTile tile, int sms) {
  const int k_tiles = (p.k + kTileK - 1) / kTileK;
  const int tiles = tiles_of(p, tile);
  const size_t partial_floats = size_t(tile.rows) * tile.batch;  // one split's partial tile
  const size_t stage_bytes = size_t(tile.rows + tile.batch) * kTileK * sizeof(__half);
  float* const partials =
      reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(p.workspace) + 15) & ~uintptr_t(15));
  const size_t skipped = size_t(partials - p.workspace);
  const size_t room = p.workspace && p.workspace_floats > skipped
                          ? (p.workspace_floats - skipped) / (tiles * partial_floats)
                          : 0;
  int splits = static_cast<int>(std::min<size_t>(
      {size_t(sms / tiles), size_t(k_tiles / kMinKTilesPerSplit), size_t(kMaxSplits), room}));
  const auto sum_fits = [&](int s) {
    const size_t k_tiles_per_split = (k_tiles + s - 1) / s;
    return (s - 1) * partial_floats * sizeof(float) <= k_tiles_per_split * stage_bytes;
  };
  while (splits > 1 && !sum_fits(splits)) --splits;
  if (splits <= 1 || k_tiles < kMinKTilesToSplit ||
      tiles * consumers_for(tile.batch) > kArrivalCounters) {
    return {1, k_tiles, nullptr};
  }
  const int k_tiles_per_split = (k_tiles + splits - 1) / splits;
  return {(k_tiles + k_tiles_per_split - 1) / k_tiles_per_split, k_tiles_per_split, partials};
}

}  // namespace mnist::swap_ab_split_k
