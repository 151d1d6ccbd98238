// How chapter 05 cuts K, used again by chapters 06-08 to decide which products to split.
#pragma once

#include <algorithm>
#include <cstddef>

#include "gemm_interface.cuh"

namespace mnist::split_k {

constexpr int kMinKTilesPerSplit = 4;  // K tiles each split walks at least
constexpr int kMaxSplits = 32;         // most ranges K is cut into

// How K is cut: `splits` ranges of k_tiles_per_split whole K tiles (the last may be shorter).
struct Split {
  int splits;
  int k_tiles_per_split;
};

// As many blocks as the GPU runs at once (resident_blocks: the SMs times the blocks of the kernel
// that fit on one SM) and no more, since a second, partial wave of blocks would take as long as
// the first; but every split at least kMinKTilesPerSplit K tiles long, so that its ring runs for
// more than a prologue, at most kMaxSplits, and no more than the workspace holds. Products whose
// tiles already fill the GPU keep one split, which writes C directly, with no second pass. Each
// split then gets ceil(k_tiles / splits) tiles and splits is recomputed, so that no split is left
// empty. The backward-weight products at batch 32 (K = 32 = one K tile) are never split.
template <int kBlockTileM, int kBlockTileN, int kBlockTileK>
Split choose_split(const GemmProblem& p, int resident_blocks) {
  const int k_tiles = (p.k + kBlockTileK - 1) / kBlockTileK;
  const int tiles =
      ((p.m + kBlockTileM - 1) / kBlockTileM) * ((p.n + kBlockTileN - 1) / kBlockTileN);
  const size_t fit_in_workspace = p.workspace ? p.workspace_floats / (size_t(p.m) * p.n) : 0;
  const int splits = static_cast<int>(
      std::min<size_t>({size_t(resident_blocks / tiles), size_t(k_tiles / kMinKTilesPerSplit),
                        size_t(kMaxSplits), fit_in_workspace}));
  if (splits <= 1) return {1, k_tiles};
  const int k_tiles_per_split = (k_tiles + splits - 1) / splits;
  return {(k_tiles + k_tiles_per_split - 1) / k_tiles_per_split, k_tiles_per_split};
}

}  // namespace mnist::split_k
