// Chapter 14: the weight update. At a small batch a weight gradient is a stream of the master
// weights, and this kernel moves them through shared memory, TMA loads and TMA stores, without
// registers.
//
// dW = dY^T X has K = batch. At batch 32 it is one K tile of 64, half of it TMA's zeros, and the
// SGD epilogue (gemm_interface.cuh) reads the fp32 master weight, writes it back and writes its
// fp16 copy: 10 bytes of memory per element for 64 flops, so the product is the stream. Through
// registers, an epilogue has the master loads of a few elements in flight at a time; loading them
// all before the main loop costs more registers than one block per SM leaves
// (docs/14_weight_update.md has the measurements).
//
// Here a block of one warpgroup takes a 64 x 64 tile of dW, and its bytes wait in shared memory:
//   thread 0       TMA-loads the tile's masters (two boxes of 64 rows x 32 floats), dY's and X's
//                  tiles (64 x K each, zeros past K, one stage per K tile of 64), all counted on
//                  one mbarrier
//   the warpgroup  waits, multiplies the K tiles (chapter 12's wgmma, 64 x 64, both operands
//                  MN-major), updates each master where TMA put it, m -= lr acc, and writes the
//                  fp16 copy into a tile of its own
//   thread 0       after a proxy fence and a barrier, TMA-stores both tiles (chapter 10's store)
//                  and waits until they are written: the block's shared memory must outlive the
//                  copy engine's reads of it
// 40 KB of shared memory a block at one K tile: five blocks share an SM, each at another point of
// its life, so some block's copies are always in flight (89 KB and two blocks at four K tiles). TMA
// clips the stores at the matrix's edges and reads zeros past them, so no thread tests a bound.
//
// Shared memory, from a 1024-byte boundary (each box is 8 swizzle atoms of 128-byte rows):
//   [ dY^T tile 8 KB ][ X tile 8 KB ][ masters 2 x 8 KB ][ fp16 copies 8 KB ][ mbarrier ]
// The masters and copies are swizzled as the operands are, and addressed as chapter 10's staging
// boxes are (swizzled), so a warp's 8 rows of one 8-column block land on different banks.
//
// The plain product, dW itself (kStore: what the benchmark times against cuBLAS; the trainer never
// asks for it), is the same stream without the masters: the accumulators go into the masters'
// boxes and leave by TMA store, 4 bytes per element, with nothing to load but the operands.
//
// When: weight_update_takes() below; chapter 13's GEMM takes every other product.
#pragma once

#include <cstdint>

#include "02_smem_tiling/smem_tile.cuh"
#include "07_tma/tma.cuh"
#include "08_wgmma/wgmma.cuh"
#include "10_tile_scheduler/tma_store.cuh"
#include "12_swap_ab/swap_ab.cuh"
#include "13_split_k_in_kernel/split_kernel.cuh"
#include "epilogue.cuh"
#include "gemm_interface.cuh"
#include "occupancy.cuh"

namespace mnist::weight_update {

using namespace wgmma;
using tile_scheduler::kStoreBoxColumns;  // 32 floats: a box row of the masters, as of C

constexpr int kUpdateTileRows = kWgmmaM;                          // rows of dW per block: outputs
constexpr int kUpdateTileCols = 64;                               // columns: the layer's inputs
constexpr int kCopyBoxCols = kSwizzleHalves;                      // 64 halves a row
constexpr int kUpdateBoxBytes = kUpdateTileRows * kSwizzleBytes;  // 8 KB
constexpr int kMasterBoxes = kUpdateTileCols / kStoreBoxColumns;  // 2
constexpr int kCopyBoxes = kUpdateTileCols / kCopyBoxCols;        // 1

// The operand tiles as chapter 07's ring lays out one stage: dY^T (A: T) then X (B: N), MN-major.
using UpdateTiles = TmaRing<kUpdateTileRows, kUpdateTileCols, Op::T, Op::N, 1, 1>;
// K tiles a block holds at once, all of its K: one at a batch of at most 64, up to four (K <= 256)
// through the SGD epilogue (weight_update_takes below says why only there).
constexpr int kMaxUpdateKTiles = 4;

// A block's shared memory, from a 1024-byte boundary, for kKTiles K tiles (the picture above
// with kKTiles operand stages).
template <int kKTiles>
struct UpdateSmem {
  static constexpr int kMastersAt = kKTiles * UpdateTiles::kStageBytes;
  static constexpr int kCopiesAt = kMastersAt + kMasterBoxes * kUpdateBoxBytes;
  static constexpr int kBarrierAt = kCopiesAt + kCopyBoxes * kUpdateBoxBytes;
  static constexpr int kBytes = kSwizzleAtomBytes + kBarrierAt + int(sizeof(uint64_t));
};

// L2's normal policy for the lines a TMA store writes, where chapter 10 stores C under evict_first:
// the masters and their fp16 copies are read again by the next step (evict_first on them measured
// no faster). dW alone (kStore) is C, and leaves as chapter 10's C does.
__device__ __forceinline__ uint64_t l2_evict_normal() {
  uint64_t policy;
  asm volatile("createpolicy.fractional.L2::evict_normal.b64 %0, 1.0;\n" : "=l"(policy));
  return policy;
}

// kKind: kSgd (map_master: the masters, map_copy: their fp16 copies) or kStore (map_master: C).
template <EpilogueKind kKind, int kKTiles>
__global__ void __launch_bounds__(kWarpgroupThreads)
    weight_update_kernel(const __grid_constant__ CUtensorMap map_a,
                         const __grid_constant__ CUtensorMap map_b,
                         const __grid_constant__ CUtensorMap map_master,
                         const __grid_constant__ CUtensorMap map_copy, int n, float learning_rate) {
  constexpr bool kUpdate = kKind == EpilogueKind::kSgd;  // else the plain store of dW
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using Smem = UpdateSmem<kKTiles>;
  constexpr int kMastersAt = Smem::kMastersAt, kCopiesAt = Smem::kCopiesAt;
  extern __shared__ __align__(16) uint8_t smem[];
  const uint32_t tiles = ring_start(smem);  // every box from a swizzle atom
  uint8_t* const tiles_pointer = smem + (tiles - shared_address(smem));
  const uint32_t barrier = tiles + Smem::kBarrierAt;
  const int column_tiles = (n + kUpdateTileCols - 1) / kUpdateTileCols;
  const int row0 = blockIdx.x / column_tiles * kUpdateTileRows;
  const int col0 = blockIdx.x % column_tiles * kUpdateTileCols;
  if (threadIdx.x == 0) {
    mbarrier_init(barrier, 1);
    fence_proxy_async();
    mbarrier_arrive_expect_tx(barrier, kMastersAt + (kUpdate ? kMasterBoxes * kUpdateBoxBytes : 0));
    for (int box = 0; kUpdate && box < kMasterBoxes; ++box) {
      tma_load(tiles + kMastersAt + box * kUpdateBoxBytes, map_master,
               col0 + box * kStoreBoxColumns, row0, barrier);
    }
#pragma unroll
    for (int t = 0; t < kKTiles; ++t) {  // K tile t in stage t
      const uint32_t stage = tiles + t * UpdateTiles::kStageBytes;
      tma_load_tile<UpdateTiles::A>(map_a, stage, row0, t * kTileK, barrier);
      tma_load_tile<UpdateTiles::B>(map_b, stage + UpdateTiles::A::kBytes, col0, t * kTileK,
                                    barrier);
    }
  }
  __syncthreads();  // the barrier exists before anyone waits on it
  mbarrier_wait(barrier, 0);

  float acc[kUpdateTileRows * kUpdateTileCols / kWarpgroupThreads];
#pragma unroll
  for (int t = 0; t < kKTiles; ++t) {
    const uint32_t stage = tiles + t * UpdateTiles::kStageBytes;
    swap_ab::multiply_k_tile<UpdateTiles::A, UpdateTiles::B>(acc, stage,
                                                             stage + UpdateTiles::A::kBytes, t > 0);
  }
  wgmma_wait<0>();
  swap_ab::accumulators_settled(acc);

  // wgmma.cuh's layout: acc[4 i + 2 h + j] is row 16 w + l / 4 + 8 h, column 8 i + 2 (l % 4) + j.
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int row = warp * 16 + lane / 4 + 8 * h;
#pragma unroll
    for (int i = 0; i < kUpdateTileCols / 8; ++i) {
      const int col = 8 * i + lane % 4 * 2;
      float2* const master = reinterpret_cast<float2*>(
          tiles_pointer + kMastersAt + col / kStoreBoxColumns * kUpdateBoxBytes +
          swizzled(row, col % kStoreBoxColumns * int(sizeof(float))));
      if constexpr (!kUpdate) {
        *master = make_float2(acc[4 * i + 2 * h], acc[4 * i + 2 * h + 1]);  // C's tile
        continue;
      }
      __half2* const copy = reinterpret_cast<__half2*>(
          tiles_pointer + kCopiesAt + col / kCopyBoxCols * kUpdateBoxBytes +
          swizzled(row, col % kCopyBoxCols * int(sizeof(__half))));
      const float2 old = *master;
      const float2 updated = make_float2(old.x - learning_rate * acc[4 * i + 2 * h],
                                         old.y - learning_rate * acc[4 * i + 2 * h + 1]);
      *master = updated;
      *copy = __floats2half2_rn(updated.x, updated.y);
    }
  }
  // The copy engine reads shared memory through the async proxy: each thread's writes above are
  // ordered before it by the fence, and every thread's before thread 0's stores by the barrier
  // (tests/check_tma_stores.py reads the machine code for both).
  fence_proxy_async();
  __syncthreads();
  if (threadIdx.x == 0) {  // chapter 10's TMA store, and its wait before the block ends
    const uint64_t policy = kUpdate ? l2_evict_normal() : tile_scheduler::l2_evict_first();
    for (int box = 0; box < kMasterBoxes; ++box) {
      tile_scheduler::tma_store(map_master, col0 + box * kStoreBoxColumns, row0,
                                tiles + kMastersAt + box * kUpdateBoxBytes, policy);
    }
    for (int box = 0; kUpdate && box < kCopyBoxes; ++box) {
      tile_scheduler::tma_store(map_copy, col0 + box * kCopyBoxCols, row0,
                                tiles + kCopiesAt + box * kUpdateBoxBytes, policy);
    }
    tile_scheduler::bulk_commit();
    tile_scheduler::bulk_wait_all();
  }
#else
  __trap();  // built without sm_90a: see wgmma.cuh
#endif
}

// A matrix of fp32 or fp16 rows that TMA can load and store: 16-byte aligned, every row whole
// 16-byte pieces.
inline bool tma_rows(const void* x, int row_bytes) {
  return row_bytes % 16 == 0 && reinterpret_cast<uintptr_t>(x) % 16 == 0;
}

// The products the kernel is built for: the weight gradient (A transposed) through the SGD
// epilogue or the plain store.
template <Op kOpA, EpilogueKind kKind>
constexpr bool kWeightUpdateBuilt = kOpA == Op::T &&
                                    (kKind == EpilogueKind::kSgd || kKind == EpilogueKind::kStore);

// Of those, the ones with K within one K tile (a batch of at most 64), or for the SGD epilogue
// within kMaxUpdateKTiles (the batch of 256), and every matrix TMA can take: dY (K x M) and X (K x
// N), and what the kernel writes, the masters (M x N fp32) and their fp16 copies, or C. At K = 256
// the 64 x 64 tile reads 16 bytes of operands from L2 per element, where a tile of 128 x 256 reads
// 6; through the SGD epilogue the 10 bytes of DRAM per element still dominate, but the plain store,
// 4 bytes per element against 16 of operands, measured slower here past one K tile.
template <EpilogueKind kKind>
bool weight_update_takes(const GemmProblem& p) {
  const int max_k = (kKind == EpilogueKind::kSgd ? kMaxUpdateKTiles : 1) * kTileK;
  if (p.k > max_k || !smem_tiling::vectorizable(p.a, p.m) || !smem_tiling::vectorizable(p.b, p.n)) {
    return false;
  }
  if constexpr (kKind == EpilogueKind::kSgd) {
    return tma_rows(p.epilogue.master, p.n * int(sizeof(float))) &&
           tma_rows(p.epilogue.out, p.n * int(sizeof(__half)));
  }
  return tile_scheduler::stores_by_tma(p);  // C, as chapter 10 stores it
}

// The masters, loaded and stored in the boxes in which chapter 10 stores C (store_map).
inline CUtensorMap master_map(const GemmProblem& p) {
  return encode_tensor_map(p.epilogue.master, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, int(sizeof(float)),
                           p.n, p.m, kStoreBoxColumns, kUpdateTileRows,
                           CU_TENSOR_MAP_L2_PROMOTION_L2_256B, "the master weights");
}

template <EpilogueKind kKind, int kKTiles>
void launch_weight_update_of(const GemmProblem& p, cudaStream_t stream) {
  constexpr bool kUpdate = kKind == EpilogueKind::kSgd;
  constexpr int kUpdateSmemBytes = UpdateSmem<kKTiles>::kBytes;
  const auto kernel = weight_update_kernel<kKind, kKTiles>;
  [[maybe_unused]] static const bool opted_in = allow_shared_memory(kernel, kUpdateSmemBytes);
  const TensorMaps<UpdateTiles::A, UpdateTiles::B> operands(p);
  const CUtensorMap fp32 = kUpdate ? master_map(p) : tile_scheduler::store_map(p);
  const CUtensorMap copy =
      kUpdate ? encode_tensor_map(p.epilogue.out, CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
                                  int(sizeof(__half)), p.n, p.m, kCopyBoxCols, kUpdateTileRows,
                                  CU_TENSOR_MAP_L2_PROMOTION_L2_256B, "the fp16 weights")
              : CUtensorMap{};
  const int blocks = (p.m + kUpdateTileRows - 1) / kUpdateTileRows *
                     ((p.n + kUpdateTileCols - 1) / kUpdateTileCols);
  kernel<<<blocks, kWarpgroupThreads, kUpdateSmemBytes, stream>>>(
      operands.a, operands.b, fp32, copy, p.n, p.epilogue.learning_rate);
}

// The kernel with as many K tiles as K has (weight_update_takes allows more than one only for
// kSgd).
template <EpilogueKind kKind>
void launch_weight_update(const GemmProblem& p, cudaStream_t stream) {
  const int k_tiles = (p.k + kTileK - 1) / kTileK;
  if (kKind != EpilogueKind::kSgd || k_tiles == 1) {
    return launch_weight_update_of<kKind, 1>(p, stream);
  }
  if constexpr (kKind == EpilogueKind::kSgd) {
    if (k_tiles == 2) return launch_weight_update_of<kKind, 2>(p, stream);
    if (k_tiles == 3) return launch_weight_update_of<kKind, 3>(p, stream);
    launch_weight_update_of<kKind, kMaxUpdateKTiles>(p, stream);
  }
}

// Chapter 14's GEMM: the weight update where weight_update_takes the product, chapter 13's GEMM
// elsewhere. Chapter 16 sends it every product outside its own kernel. Compiled once, in
// weight_update.cu: the chapters after this one hand it the products their own kernels do not
// take, and link it rather than compile it again.
void launch_weight_update_or_fall_back(const GemmProblem& p, cudaStream_t stream);

}  // namespace mnist::weight_update
