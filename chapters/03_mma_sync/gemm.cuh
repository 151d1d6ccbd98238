// Chapter 03: tensor cores, one warp-wide mma.sync at a time.
//
// Chapter 02 did every multiply-add with an FFMA, one per thread per instruction. A tensor core
// does a whole small matrix product per instruction: `mma.sync.aligned.m16n8k16` has the 32
// threads of a warp multiply a 16 x 16 tile of A by a 16 x 8 tile of B (fp16 in, fp32 sums) and add
// it to a 16 x 8 tile of C, 2048 multiply-adds at once. The work now splits into three levels of
// tiles, named as in CUTLASS:
//   block tile  128 x 128, stepping K by 32: staged through shared memory as in chapter 02, but
//               kept as halves, copied 16 bytes (8 halves) per thread per load;
//   warp tile    64 x  32: each of the 8 warps owns one, a 2 x 4 grid of warps;
//   mma tile     16 x   8 x 16: the instruction's shape; a warp tile is 4 x 4 of them, so each
//               warp keeps 16 accumulator tiles = 64 floats per thread in registers.
// The instruction wants its operands in registers, spread over the warp in a fixed pattern, the
// "fragment": thread `lane` holds elements of rows lane / 4 (+ 8) and columns 2 * (lane % 4) (+ 1,
// + 8) (PTX ISA, "Matrix Fragments for mma.m16n8k16 with floating point type"). `ldmatrix` loads
// exactly that pattern from shared memory: each of 32 lanes names one 16-byte row of an 8 x 8
// matrix, and every lane receives its two elements of each of the four matrices (.x4). With
// `.trans` it delivers each 8 x 8 matrix transposed, which is how one kernel serves both layouts.
//
// Layouts. mma's ".row.col" means A is read as rows of K (op(A) row-major, M x K) and B as columns
// of K, i.e. op(B)^T row-major, N x K. Shared memory keeps each tile exactly as it is stored in
// global memory, so that the copy is a straight 16-byte memcpy, and ldmatrix does any transposing:
//   A: N (M x K, k contiguous)  smem [m][k]  ldmatrix          (rows of A are rows of the tile)
//   A: T (K x M, m contiguous)  smem [k][m]  ldmatrix.trans
//   B: T (N x K, k contiguous)  smem [n][k]  ldmatrix          (forward: W as PyTorch stores it)
//   B: N (K x N, n contiguous)  smem [k][n]  ldmatrix.trans    (backward data and weight)
// The layout is a template parameter: the trainer's three products (and T x T) each get a kernel.
//
// Bank conflicts. Shared memory has 32 banks of 4 bytes; a request is served in one pass when its
// addresses fall in distinct banks. ldmatrix reads an 8 x 8 matrix as 8 rows of 16 bytes, i.e. 8
// groups of 4 banks, so it is conflict-free exactly when the 8 row addresses fall in 8 distinct
// 16-byte slots of a 128-byte line. A row of 32 halves (64 bytes) or 128 halves (256 bytes) puts
// rows 0, 2, 4, ... (or all 8) in the same slot. Padding every row by 8 halves (16 bytes) gives row
// strides of 80 and 272 bytes, whose first 8 multiples are distinct modulo 128: no conflicts. We
// pad rather than XOR-swizzle the column index: it costs 6-20% more shared memory but keeps every
// address a plain row * stride + column, which is what a first reader should see. (The 16-byte
// stores that fill the k-contiguous tiles can still meet 2-way conflicts; they are 1 in 8
// accesses.)
//
// Edges. Elements outside the matrices are stored into shared memory as zeros, which add nothing,
// and each accumulator is stored only where its row and column exist: any M, N, K works. The
// 16-byte loads need the stored rows to be a multiple of 8 halves and the base 16-byte aligned;
// launch_gemm checks both per operand and otherwise the kernel copies the same tiles half by half.
#pragma once

#include <cstdint>

#include "gemm_interface.cuh"

namespace mnist {

// The kernels store C only: gemm() applies the epilogue (gemm_interface.cuh) in a second pass over
// C. Chapter 06 moves it into the kernel.
constexpr bool kFusedEpilogue = false;

namespace {

constexpr int kBlockTileM = 128;  // rows of C per block
constexpr int kBlockTileN = 128;  // columns of C per block
constexpr int kBlockTileK = 32;   // depth of the tiles staged through shared memory at a time
constexpr int kWarpTileM = 64;    // rows of C per warp
constexpr int kWarpTileN = 32;    // columns of C per warp
constexpr int kMmaM = 16;         // the shape of one mma.sync.m16n8k16
constexpr int kMmaN = 8;
constexpr int kMmaK = 16;
constexpr int kWarpsM = kBlockTileM / kWarpTileM;  // 2
constexpr int kWarpsN = kBlockTileN / kWarpTileN;  // 4
constexpr int kThreads = kWarpsM * kWarpsN * 32;   // 256 threads, 8 warps, per block
constexpr int kMmaTilesM = kWarpTileM / kMmaM;     // 4 mma tiles down a warp tile
constexpr int kMmaTilesN = kWarpTileN / kMmaN;     // 4 across
constexpr int kVector = 8;                         // halves per 16-byte load
constexpr int kPad = 8;                            // halves of padding per shared row, see above

// A block tile of one operand in shared memory, stored as the operand is in global memory: kTileMn
// rows of kBlockTileK halves when k is contiguous (A: N, B: T), else kBlockTileK rows of kTileMn.
template <int kTileMn, bool kKContiguous>
struct SmemTile {
  static constexpr int kRows = kKContiguous ? kTileMn : kBlockTileK;
  static constexpr int kCols = kKContiguous ? kBlockTileK : kTileMn;
  static constexpr int kStride = kCols + kPad;  // halves from one row to the next
  static constexpr int kElements = kRows * kStride;
  static constexpr int kVectors = kRows * kCols / kVector;  // 16-byte pieces to copy
  static_assert(kCols % kVector == 0 && kVectors % kThreads == 0, "tile must split evenly");
};

// Copies the block tile of an operand whose op(X) tile starts at (mn0, k0) into shared memory,
// zeros outside the matrix. Stored, the operand is mn_extent x k_extent (k contiguous) or
// k_extent x mn_extent (mn contiguous). Each thread moves 16-byte pieces; consecutive threads take
// consecutive pieces of a row, so a warp's loads cover whole 32-byte memory sectors. `vectorized`
// says the whole matrix allows 16-byte loads; otherwise each piece is gathered half by half.
template <int kTileMn, bool kKContiguous>
__device__ __forceinline__ void load_tile(const __half* x, int mn_extent, int k_extent, int mn0,
                                          int k0, bool vectorized, __half* tile) {
  using Tile = SmemTile<kTileMn, kKContiguous>;
  const int rows = kKContiguous ? mn_extent : k_extent;  // the operand as stored
  const int cols = kKContiguous ? k_extent : mn_extent;
  const int row0 = kKContiguous ? mn0 : k0;
  const int col0 = kKContiguous ? k0 : mn0;
#pragma unroll
  for (int i = 0; i < Tile::kVectors / kThreads; ++i) {
    const int piece = threadIdx.x + i * kThreads;
    const int r = piece / (Tile::kCols / kVector), c = piece % (Tile::kCols / kVector) * kVector;
    const int row = row0 + r, col = col0 + c;
    uint4 data = make_uint4(0, 0, 0, 0);
    if (row < rows) {
      const __half* src = x + static_cast<size_t>(row) * cols + col;
      if (vectorized) {
        // cols % 8 == 0 and col % 8 == 0: the piece is wholly inside or wholly outside.
        if (col < cols) data = *reinterpret_cast<const uint4*>(src);
      } else {
        uint32_t words[kVector / 2] = {};  // element j goes to the low or high half of word j / 2
#pragma unroll
        for (int j = 0; j < kVector; ++j) {
          if (col + j < cols) words[j / 2] |= uint32_t(__half_as_ushort(src[j])) << (16 * (j % 2));
        }
        data = make_uint4(words[0], words[1], words[2], words[3]);
      }
    }
    *reinterpret_cast<uint4*>(tile + r * Tile::kStride + c) = data;
  }
}

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

// The A fragment of the 16 x 16 piece of op(A) at (m, k) of the block tile. mma wants its four
// registers to hold the 8 x 8 matrices (rows, cols of op(A)) at (0, 0), (8, 0), (0, 8), (8, 8).
template <bool kKContiguous>
__device__ __forceinline__ void load_a_fragment(const __half* tile, int m, int k, int lane,
                                                uint32_t (&a)[4]) {
  using Tile = SmemTile<kBlockTileM, kKContiguous>;
  const int matrix = lane / 8, row = lane % 8;
  const int mi = m + matrix % 2 * 8, ki = k + matrix / 2 * 8;  // this lane's matrix origin
  if (kKContiguous) {
    ldmatrix_x4<false>(tile + (mi + row) * Tile::kStride + ki, a);  // stored rows run along m
  } else {
    ldmatrix_x4<true>(tile + (ki + row) * Tile::kStride + mi, a);  // stored rows run along k
  }
}

// The B fragments of two 16 x 8 pieces of op(B), at (k, n) and (k, n + 8). mma wants each piece as
// two registers holding the 8 x 8 matrices (rows k, cols n) at (0, 0) and (8, 0); one ldmatrix.x4
// fetches both pieces: matrices at (0, 0), (8, 0), (0, 8), (8, 8).
template <bool kKContiguous>
__device__ __forceinline__ void load_b_fragments(const __half* tile, int k, int n, int lane,
                                                 uint32_t (&b0)[2], uint32_t (&b1)[2]) {
  using Tile = SmemTile<kBlockTileN, kKContiguous>;
  const int matrix = lane / 8, row = lane % 8;
  const int ki = k + matrix % 2 * 8, ni = n + matrix / 2 * 8;  // this lane's matrix origin
  uint32_t r[4];
  if (kKContiguous) {
    // Stored N x K: a stored row is a column of op(B), which is how .col wants it, no transpose.
    ldmatrix_x4<false>(tile + (ni + row) * Tile::kStride + ki, r);
  } else {
    ldmatrix_x4<true>(tile + (ki + row) * Tile::kStride + ni, r);  // stored K x N: transpose
  }
  b0[0] = r[0], b0[1] = r[1], b1[0] = r[2], b1[1] = r[3];
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

template <Op kOpA, Op kOpB>
__global__ void __launch_bounds__(kThreads)
    mma_sync_gemm_kernel(GemmProblem p, bool a_vectorized, bool b_vectorized) {
  constexpr bool kAKContiguous = kOpA == Op::N;
  constexpr bool kBKContiguous = kOpB == Op::T;
  __shared__ alignas(16) __half a_tile[SmemTile<kBlockTileM, kAKContiguous>::kElements];
  __shared__ alignas(16) __half b_tile[SmemTile<kBlockTileN, kBKContiguous>::kElements];

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int block_row = blockIdx.y * kBlockTileM, block_col = blockIdx.x * kBlockTileN;
  const int warp_row = warp / kWarpsN * kWarpTileM, warp_col = warp % kWarpsN * kWarpTileN;

  float acc[kMmaTilesM][kMmaTilesN][4] = {};
  for (int k0 = 0; k0 < p.k; k0 += kBlockTileK) {
    load_tile<kBlockTileM, kAKContiguous>(p.a, p.m, p.k, block_row, k0, a_vectorized, a_tile);
    load_tile<kBlockTileN, kBKContiguous>(p.b, p.n, p.k, block_col, k0, b_vectorized, b_tile);
    __syncthreads();  // the tiles are complete before anyone reads them

#pragma unroll
    for (int k = 0; k < kBlockTileK; k += kMmaK) {
      uint32_t a[kMmaTilesM][4], b[kMmaTilesN][2];
#pragma unroll
      for (int i = 0; i < kMmaTilesM; ++i) {
        load_a_fragment<kAKContiguous>(a_tile, warp_row + i * kMmaM, k, lane, a[i]);
      }
#pragma unroll
      for (int j = 0; j < kMmaTilesN; j += 2) {
        load_b_fragments<kBKContiguous>(b_tile, k, warp_col + j * kMmaN, lane, b[j], b[j + 1]);
      }
      // 16 tensor-core instructions on 6 ldmatrix loads: each A fragment serves 4 mma, each B 4.
#pragma unroll
      for (int i = 0; i < kMmaTilesM; ++i) {
#pragma unroll
        for (int j = 0; j < kMmaTilesN; ++j) mma_m16n8k16(acc[i][j], a[i], b[j]);
      }
    }
    __syncthreads();  // everyone is done reading before the next step overwrites the tiles
  }

  const int group = lane / 4, pair = lane % 4 * 2;  // the accumulator fragment layout
#pragma unroll
  for (int i = 0; i < kMmaTilesM; ++i) {
#pragma unroll
    for (int j = 0; j < kMmaTilesN; ++j) {
      const int col = block_col + warp_col + j * kMmaN + pair;
#pragma unroll
      for (int h = 0; h < 2; ++h) {  // h = 0: row group, acc[0..1]; h = 1: row group + 8, acc[2..3]
        const int row = block_row + warp_row + i * kMmaM + group + h * 8;
        if (row >= p.m) continue;
        float* out = p.c + static_cast<size_t>(row) * p.n + col;
        if (col < p.n) out[0] = acc[i][j][2 * h];
        if (col + 1 < p.n) out[1] = acc[i][j][2 * h + 1];
      }
    }
  }
}

// 16-byte loads need every stored row to start 16-byte aligned: a row length that is a multiple of
// 8 halves and a 16-byte aligned base.
bool vectorizable(const __half* x, int row_length) {
  return row_length % kVector == 0 && reinterpret_cast<uintptr_t>(x) % 16 == 0;
}

template <Op kOpA, Op kOpB>
void launch(const GemmProblem& p, cudaStream_t stream) {
  const dim3 block(kThreads);
  const dim3 grid((p.n + kBlockTileN - 1) / kBlockTileN, (p.m + kBlockTileM - 1) / kBlockTileM);
  const bool a_vectorized = vectorizable(p.a, kOpA == Op::N ? p.k : p.m);
  const bool b_vectorized = vectorizable(p.b, kOpB == Op::N ? p.n : p.k);
  mma_sync_gemm_kernel<kOpA, kOpB><<<grid, block, 0, stream>>>(p, a_vectorized, b_vectorized);
}

}  // namespace

void launch_gemm(const GemmProblem& p, cudaStream_t stream) {
  if (p.op_a == Op::N) {
    p.op_b == Op::T ? launch<Op::N, Op::T>(p, stream) : launch<Op::N, Op::N>(p, stream);
  } else {
    p.op_b == Op::T ? launch<Op::T, Op::T>(p, stream) : launch<Op::T, Op::N>(p, stream);
  }
}

}  // namespace mnist
