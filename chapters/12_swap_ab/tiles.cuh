// Which products chapter 12's kernel takes, and on which tiles (docs/12_swap_ab.md measures them).
#pragma once

#include "02_smem_tiling/smem_tile.cuh"
#include "08_wgmma/wgmma.cuh"
#include "gemm_interface.cuh"

namespace mnist::swap_ab {

using wgmma::kWgmmaM;
template <int kValue>
using Int = std::integral_constant<int, kValue>;

// The batch tiles the kernel is built for, each one wgmma's N, as many as M needs (zeros past M).
constexpr int kBatchTiles[] = {32, 64, 128, 256};
constexpr int kMaxBatch = 256;  // the largest batch-sized dimension the kernel takes

// Consumer warpgroups: two for the batch tiles of 128 and 256, read once for 128 weight rows.
constexpr int consumers_for(int batch_tile) {
  return batch_tile >= 128 ? 2 : 1;
}

// A block's tile of C^T: `rows` weight rows by a batch tile. Its consumers take 64 rows each (the
// rows split), or, in kColumnsSplitTile, 64 batch columns each of the same 64 weight rows.
struct SwapAbTile {
  int rows, batch;
};
constexpr SwapAbTile rows_split_tile(int batch_tile) {
  return {consumers_for(batch_tile) * kWgmmaM, batch_tile};
}
constexpr SwapAbTile kColumnsSplitTile = {kWgmmaM, 128};
constexpr SwapAbTile kNoSwapAbTile = {0, 0};  // block_tile_for's answer where it takes none

__host__ __device__ inline int batch_tiles_of(int m, int batch_tile) {
  return (m + batch_tile - 1) / batch_tile;
}
__host__ __device__ inline int tiles_of(const GemmProblem& p, SwapAbTile tile) {
  return (p.n + tile.rows - 1) / tile.rows * batch_tiles_of(p.m, tile.batch);
}

// The smallest batch tile whose tiles all run at once (resident(tile) blocks) or that holds M: more
// tiles read the weights again from L2, but fill the SMs. The columns split (forward, backward
// data) replaces two 64 x 64 blocks of an SM, reading 64 weight rows per K tile, not 128.
template <Op kOpA, class Resident>
SwapAbTile block_tile_for(const GemmProblem& p, Resident&& resident) {
  for (const int batch_tile : kBatchTiles) {
    // The weight gradients' batch operand (A transposed) is MN-major, TMA boxes 64 wide: no batch
    // tile of 32 there, and none past 128 (they take the kernel only where those fit at once).
    if (kOpA == Op::T && (batch_tile < 64 || batch_tile > 128)) continue;
    const SwapAbTile tile = rows_split_tile(batch_tile);
    if (p.m > batch_tile && tiles_of(p, tile) > resident(tile)) continue;
    const bool share_weight_rows = kOpA == Op::N && batch_tile == 64 && p.m > batch_tile &&
                                   tiles_of(p, kColumnsSplitTile) <= resident(kColumnsSplitTile);
    return share_weight_rows ? kColumnsSplitTile : tile;
  }
  return kOpA == Op::N ? rows_split_tile(kMaxBatch) : kNoSwapAbTile;
}

// A batch-sized dimension of at most kMaxBatch, M where A is not transposed (forward, backward
// data), K where it is (the weight gradients, dW = dY^T X), and both operands readable by TMA.
template <Op kOpA, Op kOpB>
bool swap_ab_takes(const GemmProblem& p) {
  return (kOpA == Op::N ? p.m : p.k) <= kMaxBatch &&
         smem_tiling::vectorizable(p.a, kOpA == Op::N ? p.k : p.m) &&
         smem_tiling::vectorizable(p.b, kOpB == Op::N ? p.n : p.k);
}

// Calls f(rows, batch), std::integral_constants, for one of block_tile_for<kOpA>'s tiles, and
// builds no kernel for the others: 32, 256 and the column split are A not transposed's only.
template <Op kOpA, class F>
void with_block_tile(SwapAbTile tile, F&& f) {
  if constexpr (kOpA == Op::N) {
    if (tile.batch == 32) return f(Int<kWgmmaM>{}, Int<32>{});
    if (tile.batch == 256) return f(Int<2 * kWgmmaM>{}, Int<256>{});
    if (tile.batch == 128 && tile.rows == kWgmmaM) return f(Int<kWgmmaM>{}, Int<128>{});
  }
  if (tile.batch == 64) return f(Int<kWgmmaM>{}, Int<64>{});
  return f(Int<2 * kWgmmaM>{}, Int<128>{});
}

}  // namespace mnist::swap_ab
