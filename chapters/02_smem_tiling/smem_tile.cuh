// A block tile of one operand in shared memory, and the copy that fills it: introduced by chapter
// 02 and used as they are by chapter 03 (chapter 04 makes the copy asynchronous).
//
// The tile is kept in fp16, exactly as the operand is stored in global memory, so that the copy is
// a straight 16-byte memcpy per thread and the kernel decides how to read it:
//
//   op(X) tile: kTileMn x kTileK             K-major (A: N, B: T)        MN-major (A: T, B: N)
//   (rows of A, or columns of B, by K)       kTileMn rows of kTileK      kTileK rows of kTileMn
//                                            halves, k contiguous        halves, m or n contiguous
//
// Every row is padded by kPad halves (16 bytes). Readers fetch 16-byte pieces of 8 rows at a time
// (chapter 03's ldmatrix), and a warp's request is served in one pass only if those 8 pieces fall
// in 8 distinct 16-byte slots of a 128-byte line (shared memory: 32 banks of 4 bytes). Unpadded
// rows of 32 halves (64 bytes) or 128 halves (256 bytes) put rows 0, 2, 4, ... or all 8 in the same
// slot; padded, the strides are 80 and 272 bytes, whose first 8 multiples are distinct modulo 128.
// Padding keeps every address a plain row * stride + column; chapter 07 swizzles instead.
#pragma once

#include <cuda_fp16.h>

#include <cstdint>

namespace mnist::smem_tiling {

constexpr int kVector = 8;  // halves per 16-byte copy
constexpr int kPad = 8;     // halves of padding per shared row, see above

template <int kTileMn, int kTileK, bool kKMajorLayout>
struct SmemTile {
  static constexpr bool kKMajor = kKMajorLayout;
  static constexpr int kRows = kKMajor ? kTileMn : kTileK;
  static constexpr int kCols = kKMajor ? kTileK : kTileMn;
  static constexpr int kStride = kCols + kPad;  // halves from one row to the next
  static constexpr int kElements = kRows * kStride;
  static constexpr int kVectors = kRows * kCols / kVector;  // 16-byte pieces to copy
  static_assert(kCols % kVector == 0, "rows of whole 16-byte pieces");
  static_assert(kElements % kVector == 0, "the tile after this one starts 16-byte aligned");
};

// 16-byte copies need every stored row to start 16-byte aligned: a row length that is a multiple
// of 8 halves and a 16-byte aligned base.
inline bool vectorizable(const __half* x, int row_length) {
  return row_length % kVector == 0 && reinterpret_cast<uintptr_t>(x) % 16 == 0;
}

// Calls f(row, col, rows, cols, dst) for each of this thread's 16-byte pieces of the Tile of an
// operand whose op(X) tile starts at (mn0, k0): the piece's first element (row, col) in the operand
// as stored, rows x cols halves (mn_extent x k_extent K-major, k_extent x mn_extent MN-major), and
// where it goes in the tile. Consecutive threads take consecutive pieces of a row, so a warp's
// loads cover whole 32-byte memory sectors.
template <class Tile, int kThreads, class F>
__device__ __forceinline__ void for_each_piece(int mn_extent, int k_extent, int mn0, int k0,
                                               __half* tile, F&& f) {
  static_assert(Tile::kVectors % kThreads == 0, "the tile splits evenly over the threads");
  const int rows = Tile::kKMajor ? mn_extent : k_extent;
  const int cols = Tile::kKMajor ? k_extent : mn_extent;
  const int row0 = Tile::kKMajor ? mn0 : k0;
  const int col0 = Tile::kKMajor ? k0 : mn0;
#pragma unroll
  for (int i = 0; i < Tile::kVectors / kThreads; ++i) {
    const int piece = threadIdx.x + i * kThreads;
    const int r = piece / (Tile::kCols / kVector), c = piece % (Tile::kCols / kVector) * kVector;
    f(row0 + r, col0 + c, rows, cols, tile + r * Tile::kStride + c);
  }
}

// The 8 halves from (row, col) of a rows x cols matrix, zeros outside it, read half by half: for a
// matrix whose rows do not allow 16-byte loads.
__device__ __forceinline__ uint4 gather_piece(const __half* x, int row, int col, int rows,
                                              int cols) {
  uint32_t words[kVector / 2] = {};  // element j goes to the low or high half of word j / 2
  if (row < rows) {
    const __half* src = x + static_cast<size_t>(row) * cols + col;
#pragma unroll
    for (int j = 0; j < kVector; ++j) {
      if (col + j < cols) words[j / 2] |= uint32_t(__half_as_ushort(src[j])) << (16 * (j % 2));
    }
  }
  return make_uint4(words[0], words[1], words[2], words[3]);
}

// Copies the Tile of an operand whose op(X) tile starts at (mn0, k0) into shared memory, zeros
// outside the matrix, 16 bytes per piece (for_each_piece). `vectorized` (vectorizable() of the
// operand) says the whole matrix allows 16-byte loads; otherwise each piece is gathered half by
// half, with the same result.
template <class Tile, int kThreads>
__device__ __forceinline__ void load_tile(const __half* x, int mn_extent, int k_extent, int mn0,
                                          int k0, bool vectorized, __half* tile) {
  for_each_piece<Tile, kThreads>(
      mn_extent, k_extent, mn0, k0, tile, [&](int row, int col, int rows, int cols, __half* dst) {
        uint4 data = make_uint4(0, 0, 0, 0);
        if (!vectorized) {
          data = gather_piece(x, row, col, rows, cols);
        } else if (row < rows && col < cols) {
          // cols % 8 == 0 and col % 8 == 0: the piece is wholly inside or wholly outside.
          data = *reinterpret_cast<const uint4*>(x + static_cast<size_t>(row) * cols + col);
        }
        *reinterpret_cast<uint4*>(dst) = data;
      });
}

}  // namespace mnist::smem_tiling
