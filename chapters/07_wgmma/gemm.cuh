// Chapter 07: wgmma. Hopper's own tensor-core instruction, fed by its copy engine (TMA).
//
// Chapters 03-06 use the tensor cores as Ampere introduced them: every warp loads its fragments
// from shared memory into registers with ldmatrix and issues 16 x 8 x 16 mma.sync instructions,
// and all 256 threads copy tiles with cp.async, 16 bytes each. An H100 still runs that code, but
// at 39% of cuBLAS's speed on a large product (docs/05_split_k.md: 528 against 205 microseconds
// at 4096^3). Hopper's tensor cores reach their full rate only through three new pieces, and
// this chapter is the kernel built from them:
//
//   wgmma.mma_async   A warpgroup (4 consecutive warps, 128 threads) multiplies a 64 x N x 16
//                     tile, N up to 256, in one instruction. A and B come straight from shared
//                     memory, described by 64-bit "matrix descriptors": no ldmatrix, no operand
//                     registers. The accumulators stay in registers (N / 2 floats per thread).
//                     The instruction is asynchronous: the warpgroup issues it and goes on;
//                     wgmma.commit_group and wgmma.wait_group say when it is done.
//   TMA               cp.async.bulk.tensor copies a whole box of a matrix (here up to 256 x 64
//                     halves) from global to shared memory: one instruction from one thread.
//                     The copy engine computes the addresses from a "tensor map" made on the
//                     host (cuTensorMapEncodeTiled), fills what lies outside the matrix with
//                     zeros, lays the box out for conflict-free reads, and reports completion
//                     to an mbarrier in shared memory as a count of bytes.
//   warp specialisation  Since one thread issues all copies, the roles separate. Warpgroup 0,
//                     the producer, only waits for free stages and starts copies; warpgroups 1
//                     and 2, the consumers, only wait for full stages and multiply. They meet
//                     at two mbarriers per stage instead of at __syncthreads.
//
// The block: 384 threads compute a 128 x 256 tile of C, each consumer warpgroup a 64 x 256 half
// with m64n256k16 (128 accumulator floats per thread), stepping K by 64 through a ring of 4
// stages of 48 KB (A 128 x 64 and B 256 x 64 halves):
//
//   producer: thread 0                           consumers: warpgroups 1 and 2
//   for K tile t of the block, s = t % 4:        for K tile t, s = t % 4:
//     wait on empty[s]: stage s is free             wait on full[s]: stage s has landed
//     arrive on full[s], expecting 48 KB            wgmma.fence; 4 x wgmma (k 0-63) on stage s;
//     TMA: A tile -> stage s, B tile -> stage s       commit them as one group
//       (the copies count their bytes on full[s])   wait_group 1: tile t-1's group is done, so
//                                                     arrive on empty[(t-1) % 4]
//
//            +---------+---------+---------+---------+
//   ring:    | stage 0 | stage 1 | stage 2 | stage 3 |  then stage 0 again, ...
//            +---------+---------+---------+---------+
//   Both sides go round the ring in the same order: the producer fills each stage once it is
//   empty, the consumers multiply each stage once it is full and then hand it back.
//   full[s]:  a phase completes with 1 arrival (the producer's expect_tx) and 48 KB of TMA bytes
//   empty[s]: a phase completes with 8 arrivals (lane 0 of every consumer warp)
//
// The mbarrier protocol (PTX ISA, "Parallel Synchronization and Communication Instructions:
// mbarrier"). An mbarrier counts the arrivals, and with expect_tx the transaction bytes, of its
// current phase; when both are complete the phase completes and the next one begins. A waiter
// names the phase it waits for by its parity: `mbarrier.try_wait.parity P` returns once the
// latest phase of parity P has completed. Stage s is used for the k-th time by K tile
// t = k * 4 + s, counted through all the tiles of the block, and that use is phase k of both of
// its barriers. So the consumers wait on full[s] with parity k & 1, and the producer, before its
// k-th fill, waits for the consumers' (k-1)-th release, phase k - 1 of empty[s], parity
// (k & 1) ^ 1. For k = 0 there is nothing to wait for, and none is needed: on a fresh barrier,
// whose phase 0 is still running, a wait for parity 1 returns at once (the phase before phase 0
// counts as complete). The arrivals release and the waits acquire, so the copy's bytes are
// visible to the consumers after their wait, and the producer's next copy into a stage is
// ordered after the wgmmas that read it.
//
// Why each fence and wait is there:
//   fence.proxy.async.shared::cta after mbarrier.init. The copy engine works in the "async
//     proxy", a path to memory of its own, and ordinary stores (the "generic proxy", which
//     mbarrier.init writes through) are not ordered with it. Without the fence its first
//     complete_tx could meet a barrier it does not yet see initialised (PTX ISA, "Memory
//     Consistency Model": proxies). The ring needs no such fence: its only writer (TMA) and only
//     reader (wgmma) are both in the async proxy. Storing into a stage with st.shared and then
//     multiplying it would need one.
//   wgmma.fence before each K tile's wgmmas. It orders the warpgroup's earlier ordinary accesses
//     to the accumulator registers, the previous tile's epilogue reading them, before wgmma
//     writes them (PTX ISA, "wgmma.fence"). Only a tile's first K tile needs it: wgmmas of one
//     shape into the same accumulators are ordered without it. Issuing it every K tile keeps
//     the loop uniform at the cost of one instruction per four wgmmas.
//   wgmma.commit_group / wgmma.wait_group N. A wgmma is done, its reads of shared memory and its
//     writes of registers, only when wait_group says so: wait_group N returns when at most the N
//     newest committed groups of this thread are still pending. After issuing tile t we wait
//     with N = 1, which keeps tile t's group in flight but ends tile t-1's, whose stage can then
//     go back to the producer. After the last tile, N = 0, and only then are the accumulators
//     read.
//
// Layouts: the transpose flags. wgmma reads each operand as K-major (k contiguous) or, for 16-bit
// types, MN-major (m or n contiguous), chosen by its imm-trans-a / imm-trans-b operands (PTX
// ISA, "Shared Memory Matrix Layout"). So TMA copies every tile exactly as it is stored, as
// chapter 03's ldmatrix.trans did:
//   A: N  M x K, k contiguous  K-major   trans-a 0  box 64 (k) x 128 (m), one per stage
//   A: T  K x M, m contiguous  MN-major  trans-a 1  box 64 (m) x  64 (k), two: m 0-63, 64-127
//   B: T  N x K, k contiguous  K-major   trans-b 0  box 64 (k) x 256 (n), one per stage
//   B: N  K x N, n contiguous  MN-major  trans-b 1  box 64 (n) x  64 (k), four along n
// In both layouts the 64 rows of op(A) that one consumer multiplies are one contiguous 8 KB
// piece of the stage: rows 0-63 of the K-major tile, or the first box of the MN-major one.
//
// The 128-byte swizzle. wgmma reads 8 rows of 16 bytes at a time, like ldmatrix, and TMA cannot
// pad rows as chapter 03 did; instead, both sides agree on a permutation. Every row of a box is
// 128 bytes (64 halves: the box's inner size is limited to the swizzle span, which is why K
// steps by 64 and why the MN-major tiles come in boxes 64 wide), eight 16-byte chunks, and chunk
// c of row r is stored at position c ^ (r % 8): the 8 rows of a 1024-byte "swizzle atom" spread
// every chunk column over all 32 banks. TMA writes this (CU_TENSOR_MAP_SWIZZLE_128B) and wgmma
// reads it (descriptor swizzle mode 1); both apply it to address bits, chunk bits 4-6 XOR row
// bits 7-9, so every stage starts 1024-byte aligned and the descriptors' base offset is 0.
//
// The matrix descriptor (PTX ISA, "Matrix Descriptor Format"), all addresses and offsets in
// 16-byte units: bits 0-13 the start address, 16-29 the leading dimension byte offset (LBO),
// 32-45 the stride dimension byte offset (SBO), 49-51 the base offset, 62-63 the swizzle mode.
// With the 128-byte swizzle (PTX ISA, "Strides"):
//   K-major   SBO = 1024, from 8 rows of M (or N) to the next 8. LBO is not used: the 16 halves
//             of K of one instruction lie within one 128-byte row. K step kk of the stage
//             starts 32 kk bytes further, inside the rows; the swizzle, applied to the final
//             address, still finds each chunk.
//   MN-major  SBO = 1024, from 8 rows of K to the next 8. LBO = 8192, from one box of 64 along
//             M (or N) to the next. K step kk starts 16 rows of K = 2048 kk bytes further.
//
// The accumulators (PTX ISA, "Matrix Fragments for wgmma.mma_async.m64nNk16"): in warp w of the
// warpgroup, lane l holds in d[4 i + 2 h + j] row 16 w + l / 4 + 8 h and column
// 8 i + 2 (l % 4) + j of the 64 x 256 product: chapter 03's m16n8 fragment, once per 8 columns,
// each warp 16 rows. The pairs d[4 i + 2 h], d[4 i + 2 h + 1] leave through epilogue_input_pair
// and finish_pair, as in chapter 06.
//
// Registers (PTX ISA, "setmaxnreg"). 384 threads at one block per SM may use 168 registers each
// (65536 / 384, down to a multiple of 8). The producer needs few and the consumers' 128
// accumulators many, so the producer warpgroup gives registers back to the block's pool
// (setmaxnreg.dec to 40) and the consumers take them (setmaxnreg.inc to 232): 128 x 40 +
// 256 x 232 = 384 x 168.
//
// Schedule: persistent, grouped. The kernel launches one block per SM, and block b computes the
// tiles b, b + grid, b + 2 grid, ... of C; its producer keeps loading the next tile while the
// consumers finish the last one. The tiles are numbered in groups of 16 tile rows, column by
// column within a group, so that the ~132 tiles computed at once share their operands in L2:
// at 8192^3 they read 2048 rows of A and ~2100 columns of B, where row by row they would read
// ~530 rows of A and all 8192 columns of B.
//
// When: launch() below. The wgmma kernel takes a product where (1) the GPU is compute
// capability 9.0, (2) TMA can read both operands: 16-byte aligned, every stored row a multiple of
// 8 halves, the same condition as chapter 04's 16-byte copies, (3) K is at least 4 tiles of 64,
// so that the ring runs beyond its prologue (shorter products are mostly their epilogue, which
// chapter 06's kernel, at two blocks per SM, spreads over more warps), and (4) chapter 06 would
// not split K: the wgmma kernel has no split-K, and products whose few tiles need one stay with
// chapter 06's kernel, unchanged, as does everything else. wgmma and setmaxnreg belong to the
// sm_90a feature set, compiled only for -gencode arch=compute_90a,code=sm_90a (meson.build's
// default). Built for any other target the kernel's body is a trap, so that a build without it
// fails loudly on an H100 instead of leaving C unwritten.
//
// Edges. TMA writes zeros where a box reaches past the matrix (any M, N, K: the box still counts
// all its bytes), zeros add nothing, and the epilogue skips rows and columns outside C.
//
// The rest is chapter 06's, unchanged:
//
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

#include <cuda.h>
#include <cudaTypedefs.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

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

// Chapter 07's kernel: warp-specialised wgmma fed by TMA, as explained at the top of the file.
// Everything above is chapter 06's kernel, which keeps the products this one does not take.
namespace hopper {

constexpr int kBlockTileM = 128;  // rows of C per block tile: 64 per consumer warpgroup
constexpr int kBlockTileN = 256;  // columns of C per block tile: one wgmma's N
constexpr int kBlockTileK = 64;   // depth of a stage: 64 halves = 128 bytes, one swizzled row
constexpr int kWgmmaM = 64;       // the shape of one wgmma.mma_async.m64n256k16
constexpr int kWgmmaN = 256;
constexpr int kWgmmaK = 16;
constexpr int kWarpgroupThreads = 128;
constexpr int kConsumers = kBlockTileM / kWgmmaM;                     // 2 consumer warpgroups
constexpr int kThreads = (1 + kConsumers) * kWarpgroupThreads;        // 384, the producer first
constexpr int kConsumerWarps = kConsumers * kWarpgroupThreads / 32;   // 8 arrivals empty a stage
constexpr int kAccumulators = kWgmmaM * kWgmmaN / kWarpgroupThreads;  // 128 floats per thread
constexpr int kStages = 4;           // block tiles in the shared-memory ring
constexpr int kMinKTiles = kStages;  // K tiles a product needs for this kernel to take it
constexpr int kSwizzleBytes = 128;   // the swizzle span: one row of a box
constexpr int kSwizzleHalves = kSwizzleBytes / int(sizeof(__half));  // 64
constexpr int kSwizzleAtomBytes = 8 * kSwizzleBytes;  // 1024: 8 rows, where the pattern repeats
constexpr int kLaunchRegisters = 65536 / kThreads / 8 * 8;  // 168 per thread at one block per SM
constexpr int kProducerRegisters = 40;                      // per thread after setmaxnreg.dec
constexpr int kConsumerRegisters = 232;                     // per thread after setmaxnreg.inc
// 8-column blocks whose epilogue inputs are loaded together: 16 inputs, as in chapter 06 (with
// 32, they and the 128 accumulators no longer fit in the consumers' registers).
constexpr int kEpilogueGroup = 8;
constexpr int kGroupTileRows = 16;  // tile rows per group of the tile order
static_assert(kBlockTileN == kWgmmaN && kBlockTileK % kWgmmaK == 0, "the tile is whole wgmmas");
static_assert(kBlockTileK == kSwizzleHalves, "a K-major box row is one swizzle row");
static_assert(kProducerRegisters * kWarpgroupThreads +
                      kConsumerRegisters * kConsumers * kWarpgroupThreads <=
                  kLaunchRegisters * kThreads,
              "setmaxnreg can only hand out the registers the block was launched with");

// One operand's tile in a stage: kTileMn rows of op(A) (or columns of op(B)) by kBlockTileK, as
// TMA boxes. K-major: one box, kBlockTileK halves wide and kTileMn high. MN-major: kTileMn /
// kSwizzleHalves boxes, kSwizzleHalves wide and kBlockTileK high, one after another along M (N).
template <int kTileMn, bool kKMajorLayout>
struct Operand {
  static constexpr bool kKMajor = kKMajorLayout;
  static constexpr int kBoxInner = kKMajor ? kBlockTileK : kSwizzleHalves;  // the contiguous one
  static constexpr int kBoxOuter = kKMajor ? kTileMn : kBlockTileK;
  static constexpr int kBoxes = kKMajor ? 1 : kTileMn / kSwizzleHalves;
  static constexpr int kBoxBytes = kBoxInner * kBoxOuter * int(sizeof(__half));
  static constexpr int kBytes = kBoxes * kBoxBytes;
  // The matrix descriptor's offsets (see the top of the file; K-major's LBO is unused, and 16
  // bytes encode as the 1 that the PTX ISA assumes), and how far one K step of kWgmmaK moves its
  // start address.
  static constexpr uint32_t kLeadingBytes = kKMajor ? 16 : kBoxBytes;
  static constexpr uint32_t kStrideBytes = kSwizzleAtomBytes;
  static constexpr uint32_t kKStepBytes =
      kKMajor ? kWgmmaK * sizeof(__half) : kWgmmaK * kSwizzleBytes;
  static_assert(kBoxInner * int(sizeof(__half)) <= kSwizzleBytes && kBoxOuter <= 256,
                "TMA box limits (cuTensorMapEncodeTiled, 128-byte swizzle)");
  static_assert(kBoxBytes % kSwizzleAtomBytes == 0, "every box starts on a swizzle atom");
};

// The stages of the ring, each the A tile then the B tile, then the barriers: full[kStages],
// empty[kStages].
template <bool kAKMajor, bool kBKMajor>
struct Ring {
  using A = Operand<kBlockTileM, kAKMajor>;
  using B = Operand<kBlockTileN, kBKMajor>;
  static constexpr int kStageBytes = A::kBytes + B::kBytes;  // 48 KB: also full[s]'s bytes
  // One consumer's 64 rows of op(A): contiguous in both layouts (see the top of the file).
  static constexpr int kSlabBytes = kWgmmaM * kBlockTileK * int(sizeof(__half));
  static constexpr int kBarrierBytes = 2 * kStages * int(sizeof(uint64_t));
  // Dynamic shared memory starts 16-byte aligned: kSwizzleAtomBytes more lets the ring start on
  // a swizzle atom.
  static constexpr int kSmemBytes = kSwizzleAtomBytes + kStages * kStageBytes + kBarrierBytes;
  static_assert(A::kBytes % kSwizzleAtomBytes == 0 && kStageBytes % kSwizzleAtomBytes == 0 &&
                    kSlabBytes % kSwizzleAtomBytes == 0,
                "every tile, and each consumer's slab, starts on a swizzle atom");
};

// The device code below uses instructions that exist only in the sm_90a feature set.
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)

__device__ __forceinline__ uint32_t shared_address(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void mbarrier_init(uint32_t barrier, int arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(barrier), "r"(arrivals)
               : "memory");
}

// Makes the barriers' initialisation (generic proxy) visible to the copy engine (async proxy).
__device__ __forceinline__ void fence_proxy_async() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// Arrives on the barrier and adds `bytes` to the transaction bytes its current phase waits for.
__device__ __forceinline__ void mbarrier_arrive_expect_tx(uint32_t barrier, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(barrier), "r"(bytes)
               : "memory");
}

__device__ __forceinline__ void mbarrier_arrive(uint32_t barrier) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(barrier) : "memory");
}

// Returns once the latest phase of parity `parity` has completed. try_wait itself suspends the
// thread for a while before it reports "not yet", so the loop does not spin hot.
__device__ __forceinline__ void mbarrier_wait(uint32_t barrier, uint32_t parity) {
  uint32_t done = 0;
  while (!done) {
    asm volatile(
        "{\n"
        ".reg .pred complete;\n"
        "mbarrier.try_wait.parity.shared::cta.b64 complete, [%1], %2;\n"
        "selp.u32 %0, 1, 0, complete;\n"
        "}\n"
        : "=r"(done)
        : "r"(barrier), "r"(parity)
        : "memory");
  }
}

// Starts copying the box whose first element is (inner, outer), in elements of the operand as
// stored, to shared memory at `destination`; the copy adds its bytes to `barrier`'s phase.
__device__ __forceinline__ void tma_load(uint32_t destination, const CUtensorMap& map, int inner,
                                         int outer, uint32_t barrier) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes "
      "[%0], [%1, {%2, %3}], [%4];\n" ::"r"(destination),
      "l"(reinterpret_cast<uint64_t>(&map)), "r"(inner), "r"(outer), "r"(barrier)
      : "memory");
}

// Starts copying the Tile of an operand whose op(X) tile starts at (mn0, k0) into a stage.
template <class Tile>
__device__ __forceinline__ void load_tile(const CUtensorMap& map, uint32_t destination, int mn0,
                                          int k0, uint32_t barrier) {
#pragma unroll
  for (int box = 0; box < Tile::kBoxes; ++box) {
    if (Tile::kKMajor) {
      tma_load(destination, map, k0, mn0, barrier);
    } else {
      tma_load(destination + box * Tile::kBoxBytes, map, mn0 + box * kSwizzleHalves, k0, barrier);
    }
  }
}

template <int kRegisters>
__device__ __forceinline__ void setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegisters));
}

template <int kRegisters>
__device__ __forceinline__ void setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegisters));
}

// The 64-bit matrix descriptor of an operand at shared `address` (PTX ISA, "Matrix Descriptor
// Format"): 128-byte swizzle, base offset 0.
__device__ __forceinline__ uint64_t matrix_descriptor(uint32_t address, uint32_t leading_bytes,
                                                      uint32_t stride_bytes) {
  constexpr uint64_t kSwizzle128B = 1;
  return uint64_t((address & 0x3FFFF) >> 4) | uint64_t(leading_bytes >> 4) << 16 |
         uint64_t(stride_bytes >> 4) << 32 | kSwizzle128B << 62;
}

__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}

__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

// Waits until at most kPending of this thread's committed wgmma groups are still in flight.
template <int kPending>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
}

// wgmmas write the accumulators behind the compiler's back until wgmma_wait: this tells it that
// they change here, after the wait, so that it reads them no earlier.
__device__ __forceinline__ void accumulators_settled(float (&d)[kAccumulators]) {
#pragma unroll
  for (int i = 0; i < kAccumulators; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// d = A . B + (accumulate ? d : 0) for a 64 x 256 x 16 step of this warpgroup, A (64 x 16) and
// B (16 x 256) in shared memory; kTransA / kTransB: the operand is MN-major.
template <bool kTransA, bool kTransB>
__device__ __forceinline__ void wgmma_m64n256k16(float (&d)[kAccumulators], uint64_t a, uint64_t b,
                                                 bool accumulate) {
  asm volatile(
      "{\n"
      ".reg .pred accumulate;\n"
      "setp.ne.b32 accumulate, %130, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
      "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
      "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
      "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, "
      "%111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, "
      "%125, %126, %127}, %128, %129, accumulate, 1, 1, %131, %132;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
        "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
        "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]),
        "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),
        "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]),
        "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]),
        "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
        "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]),
        "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]),
        "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]),
        "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]),
        "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]),
        "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]),
        "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
        "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]),
        "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]),
        "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]),
        "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
      : "l"(a), "l"(b), "r"(int(accumulate)), "n"(int(kTransA)), "n"(int(kTransB)));
}

// The first row and column of C of tile `tile` in the grouped order: groups of kGroupTileRows
// tile rows (the last group may have fewer), numbered column by column within a group.
__device__ __forceinline__ void tile_origin(const GemmProblem& p, int tile, int& row0, int& col0) {
  const int tiles_m = (p.m + kBlockTileM - 1) / kBlockTileM;
  const int tiles_n = (p.n + kBlockTileN - 1) / kBlockTileN;
  const int per_group = kGroupTileRows * tiles_n;
  const int first_row = tile / per_group * kGroupTileRows;
  const int group_rows = min(tiles_m - first_row, kGroupTileRows);
  const int in_group = tile % per_group;
  row0 = (first_row + in_group % group_rows) * kBlockTileM;
  col0 = in_group / group_rows * kBlockTileN;
}

__device__ __forceinline__ int tile_count(const GemmProblem& p) {
  return ((p.m + kBlockTileM - 1) / kBlockTileM) * ((p.n + kBlockTileN - 1) / kBlockTileN);
}

// The producer (one thread): fills the ring, stage after stage, with the K tiles of every tile
// of this block, as fast as the consumers empty it.
template <class Stages>
__device__ __forceinline__ void produce(const CUtensorMap& map_a, const CUtensorMap& map_b,
                                        const GemmProblem& p, uint32_t ring, uint32_t full,
                                        uint32_t empty) {
  const int k_tiles = (p.k + kBlockTileK - 1) / kBlockTileK;
  int stage = 0;
  uint32_t phase = 0;  // parity of the stage's current use, as at the top of the file
  for (int tile = blockIdx.x; tile < tile_count(p); tile += gridDim.x) {
    int row0, col0;
    tile_origin(p, tile, row0, col0);
    for (int t = 0; t < k_tiles; ++t) {
      const uint32_t full_barrier = full + stage * sizeof(uint64_t);
      mbarrier_wait(empty + stage * sizeof(uint64_t), phase ^ 1);  // the previous use is read
      mbarrier_arrive_expect_tx(full_barrier, Stages::kStageBytes);
      const uint32_t a = ring + stage * Stages::kStageBytes;
      load_tile<typename Stages::A>(map_a, a, row0, t * kBlockTileK, full_barrier);
      load_tile<typename Stages::B>(map_b, a + Stages::A::kBytes, col0, t * kBlockTileK,
                                    full_barrier);
      if (++stage == kStages) stage = 0, phase ^= 1;
    }
  }
}

// A consumer warpgroup: rows [consumer * 64, consumer * 64 + 64) of every tile of this block.
template <class Stages, EpilogueKind kKind>
__device__ __forceinline__ void consume(int consumer, const GemmProblem& p, uint32_t ring,
                                        uint32_t full, uint32_t empty) {
  using A = typename Stages::A;
  using B = typename Stages::B;
  const int warp = threadIdx.x / 32 % 4, lane = threadIdx.x % 32;  // warp within the warpgroup
  const int k_tiles = (p.k + kBlockTileK - 1) / kBlockTileK;
  const bool paired = columns_paired<kKind>(p);
  // Each tile's first wgmma overwrites the accumulators; they are zeroed once only so that they
  // never reach a wgmma uninitialised.
  float acc[kAccumulators] = {};
  int stage = 0;
  uint32_t phase = 0;
  for (int tile = blockIdx.x; tile < tile_count(p); tile += gridDim.x) {
    int row0, col0;
    tile_origin(p, tile, row0, col0);
    int previous = 0;  // the stage of the K tile before, still being read
    for (int t = 0; t < k_tiles; ++t) {
      mbarrier_wait(full + stage * sizeof(uint64_t), phase);  // its bytes have landed
      const uint32_t a = ring + stage * Stages::kStageBytes + consumer * Stages::kSlabBytes;
      const uint32_t b = ring + stage * Stages::kStageBytes + A::kBytes;
      wgmma_fence();
#pragma unroll
      for (int k = 0; k < kBlockTileK / kWgmmaK; ++k) {
        // The tile's first step overwrites the accumulators: no zeroing between tiles.
        wgmma_m64n256k16<!A::kKMajor, !B::kKMajor>(
            acc, matrix_descriptor(a + k * A::kKStepBytes, A::kLeadingBytes, A::kStrideBytes),
            matrix_descriptor(b + k * B::kKStepBytes, B::kLeadingBytes, B::kStrideBytes),
            t > 0 || k > 0);
      }
      wgmma_commit();
      wgmma_wait<1>();  // K tile t - 1's wgmmas are done: its stage goes back to the producer
      if (t > 0 && lane == 0) mbarrier_arrive(empty + previous * sizeof(uint64_t));
      previous = stage;
      if (++stage == kStages) stage = 0, phase ^= 1;
    }
    wgmma_wait<0>();
    if (lane == 0) mbarrier_arrive(empty + previous * sizeof(uint64_t));
    accumulators_settled(acc);

    // acc[4 i + 2 h + j] is row 16 warp + lane / 4 + 8 h, column 8 i + 2 (lane % 4) + j of this
    // warpgroup's 64 x 256 (see the top of the file). As in chapter 06, the epilogue's inputs are
    // loaded for a group of elements before any of the group's stores (see epilogue_input), here
    // the column pairs of one row in kEpilogueGroup consecutive 8-column blocks, and each pair
    // goes as one access where it can (see finish_pair).
    const int col = col0 + lane % 4 * 2;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = row0 + consumer * kWgmmaM + warp * 16 + lane / 4 + 8 * h;
      if (row >= p.m) continue;
#pragma unroll
      for (int i0 = 0; i0 < kWgmmaN / 8; i0 += kEpilogueGroup) {
        float2 input[kEpilogueGroup];
#pragma unroll
        for (int i = 0; i < kEpilogueGroup; ++i) {
          const int c = col + 8 * (i0 + i);
          input[i] = c < p.n ? epilogue_input_pair<kKind>(p, row, c, paired) : float2{0.0f, 0.0f};
        }
#pragma unroll
        for (int i = 0; i < kEpilogueGroup; ++i) {
          const int c = col + 8 * (i0 + i);
          const float2 v = {acc[4 * (i0 + i) + 2 * h], acc[4 * (i0 + i) + 2 * h + 1]};
          if (c < p.n) finish_pair<kKind>(p, row, c, v, input[i], paired);
        }
      }
    }
  }
}

#endif  // sm_90a

// One block per SM, looping over tiles. p is __grid_constant__ because finish_element takes it by
// reference: the kernel then reads it where it is, without a copy per thread.
template <Op kOpA, Op kOpB, EpilogueKind kKind>
__global__ void __launch_bounds__(kThreads, 1)
    wgmma_gemm_kernel(const __grid_constant__ CUtensorMap map_a,
                      const __grid_constant__ CUtensorMap map_b,
                      const __grid_constant__ GemmProblem p) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using Stages = Ring<kOpA == Op::N, kOpB == Op::T>;
  extern __shared__ __align__(16) uint8_t wgmma_smem[];
  const uint32_t ring =
      (shared_address(wgmma_smem) + kSwizzleAtomBytes - 1) & ~uint32_t(kSwizzleAtomBytes - 1);
  const uint32_t full = ring + kStages * Stages::kStageBytes;
  const uint32_t empty = full + kStages * sizeof(uint64_t);
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      mbarrier_init(full + s * sizeof(uint64_t), 1);  // the producer's arrive.expect_tx
      mbarrier_init(empty + s * sizeof(uint64_t), kConsumerWarps);
    }
    fence_proxy_async();
  }
  __syncthreads();  // the barriers exist before anyone waits on them

  // setmaxnreg is executed by all warps of a warpgroup alike, so the roles split by warpgroup.
  const int warpgroup = threadIdx.x / kWarpgroupThreads;
  if (warpgroup == 0) {
    setmaxnreg_dec<kProducerRegisters>();
    if (threadIdx.x == 0) produce<Stages>(map_a, map_b, p, ring, full, empty);
  } else {
    setmaxnreg_inc<kConsumerRegisters>();
    consume<Stages, kKind>(warpgroup - 1, p, ring, full, empty);
  }
#else
  __trap();  // built without sm_90a: see the top of the file
#endif
}

// cuTensorMapEncodeTiled is a driver function; the runtime hands out its address, so that the
// build needs no link against libcuda.
PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
  static const PFN_cuTensorMapEncodeTiled_v12000 encode = [] {
    void* function = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &function, 12000,
                                                cudaEnableDefault, &found));
    if (found != cudaDriverEntryPointSuccess || !function) {
      throw std::runtime_error("cuTensorMapEncodeTiled: the CUDA driver does not provide it");
    }
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(function);
  }();
  return encode;
}

// The tensor map for Tile's boxes of an operand stored as `rows` rows of `row_length` halves.
// Outside the matrix the copies read zeros (CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE).
template <class Tile>
CUtensorMap make_tensor_map(const __half* x, int row_length, int rows) {
  CUtensorMap map;
  const cuuint64_t size[2] = {cuuint64_t(row_length), cuuint64_t(rows)};  // innermost first
  const cuuint64_t row_stride[1] = {cuuint64_t(row_length) * sizeof(__half)};
  const cuuint32_t box[2] = {Tile::kBoxInner, Tile::kBoxOuter};
  const cuuint32_t element_stride[2] = {1, 1};
  const CUresult result = tensor_map_encoder()(
      &map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, const_cast<__half*>(x), size, row_stride, box,
      element_stride, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
      CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (result != CUDA_SUCCESS) {
    throw std::runtime_error("cuTensorMapEncodeTiled failed (CUresult " + std::to_string(result) +
                             ") for a " + std::to_string(rows) + " x " +
                             std::to_string(row_length) + " operand");
  }
  return map;
}

// Whether the GPU is compute capability 9.0, asked once: the trainer uses one GPU throughout.
bool on_hopper() {
  static const bool hopper = [] {
    int device = 0, major = 0, minor = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
    return major == 9 && minor == 0;
  }();
  return hopper;
}

// Launches the wgmma kernel on p and returns true where it takes p (the rule at the top of the
// file; chapter 06's launch() has already found that it would not split K), else returns false.
template <Op kOpA, Op kOpB, EpilogueKind kKind>
bool launch(const GemmProblem& p, cudaStream_t stream) {
  using Stages = Ring<kOpA == Op::N, kOpB == Op::T>;
  if (!on_hopper() || p.k < kMinKTiles * kBlockTileK) return false;
  if (!vectorizable(p.a, kOpA == Op::N ? p.k : p.m) ||
      !vectorizable(p.b, kOpB == Op::N ? p.n : p.k)) {
    return false;
  }
  // The ring needs more than the 48 KB of shared memory a kernel gets unless it opts in, once;
  // then the persistent grid is as many blocks as the GPU runs at once (one per SM).
  static const int resident_blocks = [] {
    const auto kernel = wgmma_gemm_kernel<kOpA, kOpB, kKind>;
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    Stages::kSmemBytes));
    int device = 0, sms = 0, per_sm = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads,
                                                             Stages::kSmemBytes));
    return sms * per_sm;
  }();
  // Each operand as stored: rows of k (K-major) or of m / n (MN-major).
  const CUtensorMap map_a = kOpA == Op::N ? make_tensor_map<typename Stages::A>(p.a, p.k, p.m)
                                          : make_tensor_map<typename Stages::A>(p.a, p.m, p.k);
  const CUtensorMap map_b = kOpB == Op::T ? make_tensor_map<typename Stages::B>(p.b, p.k, p.n)
                                          : make_tensor_map<typename Stages::B>(p.b, p.n, p.k);
  const int tiles =
      ((p.m + kBlockTileM - 1) / kBlockTileM) * ((p.n + kBlockTileN - 1) / kBlockTileN);
  wgmma_gemm_kernel<kOpA, kOpB, kKind>
      <<<std::min(tiles, resident_blocks), kThreads, Stages::kSmemBytes, stream>>>(map_a, map_b, p);
  return true;
}

}  // namespace hopper

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
  // Chapter 07: a product that keeps one split goes to the wgmma kernel where it can take it.
  if (split.splits == 1 && hopper::launch<kOpA, kOpB, kKind>(p, stream)) return;
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
