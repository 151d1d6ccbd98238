// The warp-wide tensor-core instruction and the loads that feed it, introduced by chapter 03 and
// included by chapters 04-06: `mma.sync.aligned.m16n8k16` and `ldmatrix`, each wrapped once, and
// the fragment loads that pick a warp's operands out of a SmemTile (02_smem_tiling/smem_tile.cuh).
//
// The fragment. mma wants its operands in registers, spread over the 32 threads of the warp in a
// fixed pattern (PTX ISA, "Matrix Fragments for mma.m16n8k16 with floating point type"). For a
// 16 x 8 tile of C, and likewise for A (16 x 16) and B (16 x 8) in 8 x 8 pieces:
//
//          columns  0 1 | 2 3 | 4 5 | 6 7            lane l holds row l / 4 (its "group") and
//   row 0          l0   | l1  | l2  | l3             columns 2 (l % 4), 2 (l % 4) + 1 (its
//   row 1          l4   | l5  | l6  | l7             "pair"): c[0], c[1]; and the same two
//   ...                                               columns of row l / 4 + 8: c[2], c[3].
//   row 7          l28  | l29 | l30 | l31
//   rows 8-15      the same lanes again: c[2], c[3]
//
// `ldmatrix` loads exactly that pattern from shared memory: each of the 32 lanes names one 16-byte
// row of an 8 x 8 matrix of halves (.x4: four matrices, lanes 0-7 the rows of the first, 8-15 of
// the second, ...), and every lane receives its two elements of each matrix, one 32-bit register
// per matrix. With `.trans` it delivers each matrix transposed, which is how one kernel reads
// both layouts of a tile.
//
// Layouts. mma's ".row.col" reads A as rows of K (op(A) row-major, M x K) and B as columns of K
// (op(B)^T row-major, N x K). The tiles are kept as the operands are stored, and ldmatrix
// transposes where needed:
//   A: N (K-major)   smem [m][k]  ldmatrix          (rows of A are rows of the tile)
//   A: T (MN-major)  smem [k][m]  ldmatrix.trans
//   B: T (K-major)   smem [n][k]  ldmatrix          (forward: W as PyTorch stores it)
//   B: N (MN-major)  smem [k][n]  ldmatrix.trans    (backward data and weight)
#pragma once

#include <cuda_fp16.h>

#include <cstdint>

namespace mnist::mma_sync {

constexpr int kMmaM = 16;  // the shape of one mma.sync.m16n8k16
constexpr int kMmaN = 8;
constexpr int kMmaK = 16;

// Four 8 x 8 matrices of halves from shared memory; lane l gives the address of row l % 8 of matrix
// l / 8 and receives, in register q, row l / 4, columns 2 (l % 4) and 2 (l % 4) + 1 of matrix q
// (with .trans: of matrix q transposed).
template <bool kTranspose>
__device__ __forceinline__ void ldmatrix_x4(const __half* row_address, uint32_t (&r)[4]) {
  const auto address = static_cast<uint32_t>(__cvta_generic_to_shared(row_address));
  if (kTranspose) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(address));
  } else {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(address));
  }
}

// acc += a . b for one 16 x 8 x 16 tile. acc[0..1] are row lane / 4, acc[2..3] row lane / 4 + 8,
// columns 2 (lane % 4) and 2 (lane % 4) + 1 of the 16 x 8 tile of C.
__device__ __forceinline__ void mma_m16n8k16(float (&acc)[4], const uint32_t (&a)[4],
                                             const uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// The A fragment of the 16 x 16 piece of op(A) at (m, k) of the Tile. mma wants its four registers
// to hold the 8 x 8 matrices (rows, cols of op(A)) at (0, 0), (8, 0), (0, 8), (8, 8).
template <class Tile>
__device__ __forceinline__ void load_a_fragment(const __half* tile, int m, int k, int lane,
                                                uint32_t (&a)[4]) {
  const int matrix = lane / 8, row = lane % 8;
  const int mi = m + matrix % 2 * 8, ki = k + matrix / 2 * 8;  // this lane's matrix origin
  if (Tile::kKMajor) {
    ldmatrix_x4<false>(tile + (mi + row) * Tile::kStride + ki, a);  // stored rows run along m
  } else {
    ldmatrix_x4<true>(tile + (ki + row) * Tile::kStride + mi, a);  // stored rows run along k
  }
}

// The B fragments of two 16 x 8 pieces of op(B), at (k, n) and (k, n + 8). mma wants each piece as
// two registers holding the 8 x 8 matrices (rows k, cols n) at (0, 0) and (8, 0); one ldmatrix.x4
// fetches both pieces: matrices at (0, 0), (8, 0), (0, 8), (8, 8).
template <class Tile>
__device__ __forceinline__ void load_b_fragments(const __half* tile, int k, int n, int lane,
                                                 uint32_t (&b0)[2], uint32_t (&b1)[2]) {
  const int matrix = lane / 8, row = lane % 8;
  const int ki = k + matrix % 2 * 8, ni = n + matrix / 2 * 8;  // this lane's matrix origin
  uint32_t r[4];
  if (Tile::kKMajor) {
    // Stored N x K: a stored row is a column of op(B), which is how .col wants it, no transpose.
    ldmatrix_x4<false>(tile + (ni + row) * Tile::kStride + ki, r);
  } else {
    ldmatrix_x4<true>(tile + (ki + row) * Tile::kStride + ni, r);  // stored K x N: transpose
  }
  b0[0] = r[0], b0[1] = r[1], b1[0] = r[2], b1[1] = r[3];
}

}  // namespace mnist::mma_sync
