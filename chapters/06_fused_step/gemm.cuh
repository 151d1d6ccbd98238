// Chapter 06: the fused step. The GEMM finishes the MLP's work on each element itself.
//
// After chapter 05 the products of a small training step take a few microseconds each, and the
// step is mostly everything around them: at batch 32 a step of 784-h-h-h-10 was 25 kernels, 11 of
// them GEMMs; the other 14 read a product that a GEMM had just written to memory, did one or two
// operations per element and wrote the result back. Each of those costs a launch and a round
// trip of the product through memory (for the weight gradient at hidden 8192, 256 MiB written and
// read again). Here each product's accumulator goes through the MLP's epilogue while it is still
// in registers, a thread's two neighbouring columns at a time (finish_pair in
// common/epilogue.cuh; the kind of epilogue is a template parameter of the kernel, so that each
// kernel holds only its own: docs/06_fused_step.md measures both choices):
//
//   product          before (kernel, then a pass over C)        now (in the GEMM's store)
//   forward hidden   Z = X W^T; Y = fp16(ReLU(Z + b))             Y = fp16(ReLU(acc + b))
//   forward output   Z = X W^T; logits = Z + b                    logits = acc + b
//   backward data    G = dZ W;  dZ' = fp16(G * (Y > 0))           dZ' = fp16(Y > 0 ? acc : 0)
//   backward weight  dW = dZ^T X; W -= lr dW; W16 = fp16(W)       W -= lr acc; W16 = fp16(W)
//
// so the float matrices Z, G and dW are never written at all: the weight gradient exists only in
// registers. With split-K the partial sums still go to the workspace and sum_splits applies the
// epilogue to their total. The arithmetic is the same, operation for operation, as the separate
// pass, so the trainer's results do not change. The trainer (common/trainer.cu) notices that a
// chapter fuses (kFusedEpilogue) and then also records each step once in a CUDA graph and
// replays it, so that a step costs one launch from the host instead of one per kernel: see
// docs/06_fused_step.md for the kernel count and the time per step.
//
// One more change serves the large steps, whose time is the weights' trip from DRAM: each 16-byte
// copy asks L2 to fetch the whole 128-byte line it lies in (`.L2::128B` in cp_async_16). A block
// tile of a K-contiguous operand (W^T, the weights of the forward product) is 128 rows of 64
// bytes, K halves apart, so every K step asks DRAM for 128 separate 64-byte pieces; with the hint
// the request for the first half of a line also brings its second half, the next K step's piece,
// and each line comes from DRAM in one piece instead of two. On the H100 the forward product
// 32 x 8192 x 8192 went from 0.082 to 0.063 ms and the step at batch 32, hidden 8192 from 1.019 to
// 0.982 ms; a 256-byte hint made the 4096^3 products 12-16% slower (docs/06_fused_step.md).
//
// The rest is chapter 05's, unchanged:
//
// Parallel K (split-K) for products with few tiles of C and a long K.
//
// Chapters 01-04 give each block tile of C to one block, which walks the whole of K alone. At
// batch 32 the trainer's forward and backward-data products are M = 32 rows by N = 10..8192
// columns, K = 784..8192 deep: 32 x 1024 x 1024 has ceil(32 / 128) x ceil(1024 / 128) = 8 tiles of
// C, so 8 blocks for an H100's 132 SMs, each stepping through 32 K tiles one after another while
// 124 SMs idle. Smaller tiles of C cannot fix that (M is 32); the long dimension is K, so we cut
// it. Block (x, y, z) of a grid of ceil(N / 128) x ceil(M / 128) x splits computes tile (y, x) over
// the z-th range of whole K tiles, exactly as chapter 04 computes it over all of K (same ring,
// same loop, from k_tile_begin to k_tile_end), and since C = sum over z of A[:, range z] .
// B[range z, :], adding the partial tiles gives C:
//
//          K ->   range 0      range 1      range 2
//   A  [ M x K ] |==========|============|==========|      block z = 0, 1, 2 each multiply one
//   B  [ K x N ]  (the same ranges of rows)                range: partial_z = A_z . B_z (M x N)
//   C  = partial_0 + partial_1 + partial_2                 then one pass adds them up
//
// How the partial tiles meet: a second pass, in a fixed order. Each block stores its partial tile
// to the workspace (GemmProblem::workspace, splits x M x N floats, from the caller's arena), and
// a second kernel, sum_splits, adds the splits of every element in the order z = 0, 1, 2, ...
// and writes C. The alternative, atomicAdd of every partial result into a zeroed C, needs no
// workspace, but floating-point addition is not associative and the order in which the blocks'
// atomics land changes from run to run: the result would differ in its last bits between two
// runs on the same inputs, and so would a whole training run. With a fixed order the result is
// the same, bit for bit, every time (the GEMM test checks it). Both ways cost one more launch:
// the atomics need C zeroed first. The partial tiles are written and read once each, at L2
// speed, and the extra traffic is splits x M x N x 8 bytes: 6.4 MB for 32 x 784 with 32 splits.
//
// How many splits: choose_split() below. As many blocks as the GPU runs at once (the SMs times the
// blocks of this kernel that fit on one SM, asked of the CUDA runtime) and no more, since a
// second, partial wave of blocks would take as long as the first; but every split at least
// kMinKTilesPerSplit K tiles long, so that its ring runs for more than a prologue, at most
// kMaxSplits, and no more than the workspace holds. Products whose tiles already fill the GPU
// keep one split, which writes C directly, with no second pass. Each split then gets
// ceil(k_tiles / splits) tiles and splits is recomputed, so that no split is left empty. The
// backward-weight products (K = batch = 32 = one K tile) cannot be split at all.
//
// One more change serves the same M = 32 products: warps whose whole warp tile lies below C skip
// their MMAs (see warp_inside_c in the kernel).
//
// The rest is chapter 04's, unchanged:
//
// Asynchronous copies (`cp.async`) and a multi-stage shared-memory ring (chapter 04).
//
// Chapter 03's K loop was strictly serial: load a tile, barrier, multiply it, barrier, load the
// next. While a tile travels from global memory (hundreds of cycles) the tensor cores wait, and
// while they work nothing travels. Here the loads of the next kStages - 1 tiles are in flight
// while the MMAs of the current one run. Shared memory holds a ring of kStages stages, each one
// block tile of A and one of B; with kStages = 4, at K step t:
//
//              step t        step t+1      step t+2      step t+3      step t+4
//   stage 0    mma t         load t+4 ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~> mma t+4
//   stage 1    ~~~~~~~~~~~>  mma t+1       load t+5 ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~>
//   stage 2    ~~~~~~~~~~~~~~~~~~~~~~~~~>  mma t+2       load t+6 ~~~~~~~~~~~~~~~~~~~~>
//   stage 3    load t+3 ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~> mma t+3       load t+7 ~~~~~~>
//
// (t a multiple of 4; ~~> is a copy in flight). Each step starts the load of the tile kStages - 1
// ahead into the stage the previous step computed on, then computes on a stage whose copy has
// landed: a tile has kStages - 1 steps of MMAs to arrive in.
//
// Why cp.async. A plain copy is `ld.global` into registers, then `st.shared`: the store must wait
// for the load, so the thread stalls for the whole memory latency, or else keeps every tile in
// flight in registers. `cp.async` goes from global to shared memory without passing through
// registers; the thread only issues it and carries on. `.cg` ("cache global") caches the data in
// L2 only and bypasses L1: each element is read once per block, from shared memory afterwards, so
// it would only evict useful lines from L1 (.cg requires 16-byte copies; .ca, through L1, allows 4
// and 8). A copy is waited for in groups: `cp.async.commit_group` closes the group of this thread's
// copies issued since the last commit, and `cp.async.wait_group N` waits until at most the N most
// recently committed groups of this thread are still pending, i.e. all older ones have landed.
// Both are per thread: a barrier afterwards makes everyone's copies visible to everyone.
//
// The tensor-core part is chapter 03's, unchanged:
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
// 16-byte copies need the stored rows to be a multiple of 8 halves and the base 16-byte aligned;
// launch_gemm checks both per operand. A piece wholly outside the matrix is a cp.async of 0 source
// bytes, which writes 16 bytes of zeros. An operand that cannot take 16-byte copies is gathered
// half by half with ordinary loads and stores into the same stage: slower, since those do wait,
// but the barrier orders them exactly as it orders the asynchronous copies.
#pragma once

#include <algorithm>
#include <cstdint>

#include "cuda_check.cuh"
#include "epilogue.cuh"
#include "gemm_interface.cuh"

namespace mnist {

// The kernels apply the epilogue (gemm_interface.cuh) themselves.
constexpr bool kFusedEpilogue = true;

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
constexpr int kStages = 4;                         // block tiles in the shared-memory ring
constexpr int kMinKTilesPerSplit = 4;              // K tiles each split walks at least
constexpr int kMaxSplits = 32;                     // most ranges K is cut into

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

// One stage of the ring: the A tile, then the B tile. Both sizes are multiples of 16 bytes, so
// every tile, and every 16-byte piece of it, starts 16-byte aligned.
template <bool kAKContiguous, bool kBKContiguous>
struct Stage {
  using A = SmemTile<kBlockTileM, kAKContiguous>;
  using B = SmemTile<kBlockTileN, kBKContiguous>;
  static constexpr int kElements = A::kElements + B::kElements;
  static constexpr int kRingBytes = kStages * kElements * int(sizeof(__half));
  static_assert(A::kElements % kVector == 0 && B::kElements % kVector == 0, "16-byte alignment");
};

// Starts copying 16 bytes from global to shared memory, without waiting and without registers.
// Only the first src_bytes (16 or 0) are read; the rest of the 16 are filled with zeros. L2 fetches
// the 128-byte line around src (see the top of the file).
__device__ __forceinline__ void cp_async_16(__half* dst, const __half* src, int src_bytes) {
  const auto shared = static_cast<uint32_t>(__cvta_generic_to_shared(dst));
  const auto global = __cvta_generic_to_global(src);
  asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], 16, %2;\n" ::"r"(shared),
               "l"(global), "r"(src_bytes)
               : "memory");
}

// Closes this thread's group of the copies issued since the last commit.
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}

// Waits until at most kPending of this thread's committed groups are still in flight.
template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
}

// Starts copying the block tile of an operand whose op(X) tile starts at (mn0, k0) into shared
// memory, zeros outside the matrix. Stored, the operand is mn_extent x k_extent (k contiguous) or
// k_extent x mn_extent (mn contiguous). Each thread moves 16-byte pieces; consecutive threads take
// consecutive pieces of a row, so a warp's loads cover whole 32-byte memory sectors. `vectorized`
// says the whole matrix allows 16-byte copies, which are asynchronous; otherwise each piece is
// gathered half by half and stored at once.
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
    __half* dst = tile + r * Tile::kStride + c;
    if (vectorized) {
      // cols % 8 == 0 and col % 8 == 0: the piece is wholly inside or wholly outside. Outside, copy
      // 0 bytes (16 zeros) from an address that is still valid: the matrix's first element.
      const bool inside = row < rows && col < cols;
      cp_async_16(dst, inside ? x + static_cast<size_t>(row) * cols + col : x, inside ? 16 : 0);
    } else {
      uint32_t words[kVector / 2] = {};  // element j goes to the low or high half of word j / 2
      if (row < rows) {
        const __half* src = x + static_cast<size_t>(row) * cols + col;
#pragma unroll
        for (int j = 0; j < kVector; ++j) {
          if (col + j < cols) words[j / 2] |= uint32_t(__half_as_ushort(src[j])) << (16 * (j % 2));
        }
      }
      *reinterpret_cast<uint4*>(dst) = make_uint4(words[0], words[1], words[2], words[3]);
    }
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

template <Op kOpA, Op kOpB, EpilogueKind kKind>
__global__ void __launch_bounds__(kThreads)
    split_k_gemm_kernel(GemmProblem p, bool a_vectorized, bool b_vectorized,
                        int k_tiles_per_split) {
  constexpr bool kAKContiguous = kOpA == Op::N;
  constexpr bool kBKContiguous = kOpB == Op::T;
  using Ring = Stage<kAKContiguous, kBKContiguous>;
  // kStages stages of Ring::kElements halves: more than the 48 KB a static array may take, so the
  // size is given at launch (dynamic shared memory).
  extern __shared__ __align__(16) __half ring[];

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int block_row = blockIdx.y * kBlockTileM, block_col = blockIdx.x * kBlockTileN;
  const int warp_row = warp / kWarpsN * kWarpTileM, warp_col = warp % kWarpsN * kWarpTileN;

  // This block's K range: tiles [k_tile_begin, k_tile_end), never empty (see choose_split).
  const int k_tiles = (p.k + kBlockTileK - 1) / kBlockTileK;
  const int k_tile_begin = blockIdx.z * k_tiles_per_split;
  const int k_tile_end = min(k_tile_begin + k_tiles_per_split, k_tiles);

  // Starts loading block tile t (K from t * kBlockTileK) into stage t % kStages, as one group. Past
  // the range's last tile the group is empty: every step then commits exactly one group, so "tile
  // t has landed" is always the same wait_group count, and the last kStages - 1 steps drain the
  // ring.
  const auto load_stage = [&](int t) {
    if (t < k_tile_end) {
      __half* stage = ring + t % kStages * Ring::kElements;
      const int k0 = t * kBlockTileK;
      load_tile<kBlockTileM, kAKContiguous>(p.a, p.m, p.k, block_row, k0, a_vectorized, stage);
      load_tile<kBlockTileN, kBKContiguous>(p.b, p.n, p.k, block_col, k0, b_vectorized,
                                            stage + Ring::A::kElements);
    }
    cp_async_commit();
  };

  // Prologue: the range's first kStages - 1 tiles in flight before the first MMA.
  for (int t = k_tile_begin; t < k_tile_begin + kStages - 1; ++t) load_stage(t);

  // At M = 32 the lower half of a 128-row block tile lies below C: its warps would only multiply
  // the zeros the loads put there, so they skip their MMAs (and still load and wait with the
  // others). One test per K step; finer skips, per mma tile, cost more in the inner loop than
  // they saved (measured: docs/05_split_k.md).
  const bool warp_inside_c = block_row + warp_row < p.m && block_col + warp_col < p.n;

  float acc[kMmaTilesM][kMmaTilesN][4] = {};
  for (int t = k_tile_begin; t < k_tile_end; ++t) {
    // Counting from k_tile_begin, kStages - 1 + (t - k_tile_begin) groups are committed and that
    // group holds tile t: allowing the kStages - 2 newest to be pending means this thread's
    // copies of tile t have landed.
    cp_async_wait<kStages - 2>();
    // One barrier per step does two jobs. (1) After it, every thread's part of tile t is in shared
    // memory. (2) Every thread has finished step t - 1, whose MMAs read stage (t - 1) % kStages,
    // which is exactly the stage the load below overwrites, (t + kStages - 1) % kStages. The stage
    // computed on now, t % kStages, is overwritten only at step t + 1, after the next barrier.
    __syncthreads();
    load_stage(t + kStages - 1);  // in flight during this step's MMAs and the next kStages - 2

    if (!warp_inside_c) continue;
    const __half* a_tile = ring + t % kStages * Ring::kElements;
    const __half* b_tile = a_tile + Ring::A::kElements;

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
  }

  // One split finishes its elements through the epilogue; several write their partial tiles to
  // the workspace, one M x N slab each, and sum_splits finishes them. The epilogue's inputs are
  // loaded for a row of mma tiles at a time, before any of its stores (see epilogue_input), and
  // each thread's two neighbouring columns go as one access where they can (see finish_pair).
  const bool finish = gridDim.z == 1;
  GemmProblem slab = p;  // a split's partial tile: a plain store into its own M x N slab
  slab.c = p.workspace + static_cast<size_t>(blockIdx.z) * p.m * p.n;
  const bool paired =
      finish ? columns_paired<kKind>(p) : columns_paired<EpilogueKind::kStore>(slab);
  const int group = lane / 4, pair = lane % 4 * 2;  // the accumulator fragment layout
  // Elements 2 h and 2 h + 1 of mma tile (i, j): row group (+ 8 for h = 1), columns pair, pair + 1.
  const auto row_of = [&](int i, int h) {
    return block_row + warp_row + i * kMmaM + group + h * 8;
  };
  const auto col_of = [&](int j) { return block_col + warp_col + j * kMmaN + pair; };
#pragma unroll
  for (int i = 0; i < kMmaTilesM; ++i) {
    float2 input[kMmaTilesN][2];
#pragma unroll
    for (int j = 0; j < kMmaTilesN; ++j) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int row = row_of(i, h), col = col_of(j);
        input[j][h] = finish && row < p.m && col < p.n
                          ? epilogue_input_pair<kKind>(p, row, col, paired)
                          : float2{0.0f, 0.0f};
      }
    }
#pragma unroll
    for (int j = 0; j < kMmaTilesN; ++j) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int row = row_of(i, h), col = col_of(j);
        if (row >= p.m || col >= p.n) continue;
        const float2 v = {acc[i][j][2 * h], acc[i][j][2 * h + 1]};
        if (finish) {
          finish_pair<kKind>(p, row, col, v, input[j][h], paired);
        } else {
          finish_pair<EpilogueKind::kStore>(slab, row, col, v, float2{}, paired);
        }
      }
    }
  }
}

// Every element: the sum of the splits' partial matrices, added in the order z = 0, 1, ... so that
// the result does not depend on which block finished first, through the epilogue.
template <EpilogueKind kKind>
__global__ void sum_splits_kernel(GemmProblem p, int splits) {
  const size_t count = static_cast<size_t>(p.m) * p.n;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count;
       i += size_t(gridDim.x) * blockDim.x) {
    float sum = p.workspace[i];
    for (int z = 1; z < splits; ++z) sum += p.workspace[z * count + i];
    const int row = static_cast<int>(i / p.n), col = static_cast<int>(i % p.n);
    finish_element<kKind>(p, row, col, sum, epilogue_input<kKind>(p, row, col));
  }
}

// How K is cut: `splits` ranges of k_tiles_per_split whole K tiles (the last may be shorter).
struct Split {
  int splits;
  int k_tiles_per_split;
};

// The heuristic explained at the top of the file; resident_blocks is how many blocks of the
// kernel the whole GPU runs at once.
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

// 16-byte copies need every stored row to start 16-byte aligned: a row length that is a multiple of
// 8 halves and a 16-byte aligned base.
bool vectorizable(const __half* x, int row_length) {
  return row_length % kVector == 0 && reinterpret_cast<uintptr_t>(x) % 16 == 0;
}

template <Op kOpA, Op kOpB, EpilogueKind kKind>
void launch(const GemmProblem& p, cudaStream_t stream) {
  const dim3 block(kThreads);
  const bool a_vectorized = vectorizable(p.a, kOpA == Op::N ? p.k : p.m);
  const bool b_vectorized = vectorizable(p.b, kOpB == Op::N ? p.n : p.k);
  // A kernel may use more than 48 KB of dynamic shared memory only after opting in, once; then
  // we ask how many of its blocks the GPU runs at once (the trainer uses one GPU throughout).
  constexpr int kSmemBytes = Stage<kOpA == Op::N, kOpB == Op::T>::kRingBytes;
  static const int resident_blocks = [] {
    const auto kernel = split_k_gemm_kernel<kOpA, kOpB, kKind>;
    CUDA_CHECK(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
    int device = 0, sms = 0, per_sm = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    CUDA_CHECK(
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, kSmemBytes));
    return sms * per_sm;
  }();
  const Split split = choose_split(p, resident_blocks);
  const dim3 grid((p.n + kBlockTileN - 1) / kBlockTileN, (p.m + kBlockTileM - 1) / kBlockTileM,
                  split.splits);
  split_k_gemm_kernel<kOpA, kOpB, kKind>
      <<<grid, block, kSmemBytes, stream>>>(p, a_vectorized, b_vectorized, split.k_tiles_per_split);
  if (split.splits > 1) {
    CUDA_CHECK_LAUNCH();
    const size_t count = static_cast<size_t>(p.m) * p.n;
    const int sum_blocks =
        static_cast<int>(std::min<size_t>((count + kThreads - 1) / kThreads, resident_blocks));
    sum_splits_kernel<kKind><<<sum_blocks, kThreads, 0, stream>>>(p, split.splits);
  }
}

}  // namespace

void launch_gemm(const GemmProblem& p, cudaStream_t stream) {
  with_epilogue_kind(p.epilogue.kind, [&](auto kind) {
    constexpr EpilogueKind kKind = decltype(kind)::value;
    if (p.op_a == Op::N) {
      p.op_b == Op::T ? launch<Op::N, Op::T, kKind>(p, stream)
                      : launch<Op::N, Op::N, kKind>(p, stream);
    } else {
      p.op_b == Op::T ? launch<Op::T, Op::T, kKind>(p, stream)
                      : launch<Op::T, Op::N, kKind>(p, stream);
    }
  });
}

}  // namespace mnist
