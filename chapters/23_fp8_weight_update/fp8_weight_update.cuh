// Chapter 14's weight update in FP8. At batch 256 a weight gradient dW = dZ^T X is 8192 x 8192 x
// 256: 256 multiply-adds an element, and an epilogue that reads each fp32 master, writes it back
// and writes its two e4m3 copies, w and w_t: 10 bytes of memory per element, as many as
// chapter 14's fp16 update moves. On chapter 21's 128 x 256 tiles, one block per SM, the epilogue
// loads the masters into registers, a group at a time, and waits for each group.
//
// Here, as in chapter 14, a block of one warpgroup takes 64 x 64 tiles of dW and their bytes wait
// in shared memory, never in registers. For each tile:
//   thread 0       TMA-loads the tile's masters (two boxes of 64 rows x 32 floats) and the
//                  operands dZ^T and X^T (64 x K codes each, K-major, zeros past K: one box of
//                  128 codes per K tile), all counted on one mbarrier
//   the warpgroup  multiplies each K tile (wgmma m64n64k32, promoted as chapter 20's: a K tile's
//                  products from zero, added to an fp32 total), updates each master where TMA put
//                  it, and writes the codes of w and of w_t into tiles of their own
//   thread 0       TMA-stores the three tiles
// Unlike chapter 14's, a block is persistent and holds two tiles' buffers: two blocks an SM, each
// taking every (2 x SMs)-th tile. While the warpgroup works on tile i in one buffer, tile i + 1's
// bytes arrive in the other, and as soon as the copy engine has read tile i's stores, thread 0
// loads tile i + 2 where tile i was:
//   buffer 0   | load i   | work i |  stores i, load i + 2   | work i + 2 | ...
//   buffer 1   | load i + 1        | work i + 1 |  stores i + 1, load i + 3  ...
// so every SM always has loads in flight. TMA clips the stores at the matrix's edges and reads
// zeros past them (a zero master, a zero gradient: amax does not move), so no thread tests a bound.
//
// A buffer, from a 1024-byte boundary (two of them, then their two mbarriers):
//   [ K tile 0: dZ^T 8 KB | X^T 8 KB ][ K tile 1 ... ][ masters 2 x 8 KB ]
//   once the products are done, K tile 0's place holds the codes: [ w 4 KB ][ w_t 4 KB ]
// A code tile's rows are 64 bytes, stored under TMA's 64-byte swizzle, whose layout chapter 21's
// staged() writes: a warp's column pairs of w_t fall on different banks.
//
// When: fp8_weight_update_takes() below; chapter 22's kernels take every other product.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "14_weight_update/weight_update.cuh"
#include "21_fp8_fused_epilogue/fused_epilogue.cuh"
#include "22_fp8_swap_ab/fp8_swap_ab.cuh"
#include "fp8_interface.cuh"
#include "fp8_quantise.cuh"
#include "fp8_scaling.cuh"

namespace mnist::fp8_weight_update {

using namespace fp8_gemm;
using weight_update::kMasterBoxes;     // 2 boxes of 32 floats: a tile row of masters
using weight_update::kUpdateBoxBytes;  // 8 KB: a master box, an operand's K tile
using weight_update::kUpdateTileCols;  // 64: the tile's columns, the layer's inputs
using weight_update::kUpdateTileRows;  // 64: its rows, the layer's outputs

// An operand's K tile: 64 rows of 128 codes, K-major, as chapter 07's tile of 64 halves.
using UpdateTile = SwizzledTile<kUpdateTileRows, true>;
constexpr int kStageBytes = 2 * UpdateTile::kBytes;                // dZ^T's tile, then X^T's
constexpr int kMaxUpdateKTiles = 2;                                // K <= 256: a batch of 256
constexpr int kCodeTileBytes = kUpdateTileRows * kUpdateTileCols;  // 4 KB of e4m3
constexpr int kCodeSwizzleBytes = 64;  // a code tile's row, TMA's 64-byte swizzle
static_assert(2 * kCodeTileBytes <= kStageBytes, "w and w_t fit where K tile 0 was");
static_assert(kUpdateTileRows == kCodeSwizzleBytes && kUpdateTileCols == kCodeSwizzleBytes,
              "a code tile's rows are staged()'s: 64 bytes");

constexpr int kBuffers = 2;  // tiles a block holds: one worked on, one arriving

// A block's shared memory for kKTiles K tiles (the picture above).
template <int kKTiles>
struct Fp8UpdateSmem {
  static constexpr int kMastersAt = kKTiles * kStageBytes;
  static constexpr int kTileBytes = kMastersAt + kMasterBoxes * kUpdateBoxBytes;  // TMA's bytes
  static constexpr int kBufferBytes =
      (kTileBytes + kSwizzleAtomBytes - 1) / kSwizzleAtomBytes * kSwizzleAtomBytes;
  static constexpr int kBarriersAt = kBuffers * kBufferBytes;
  static constexpr int kBytes = kSwizzleAtomBytes + kBarriersAt + kBuffers * int(sizeof(uint64_t));
};

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)

// The 64 x 64 sums of the block's tile: each K tile's four k32 steps from zero, then added to the
// fp32 total, as chapter 20's consumer adds its parts (the same sums, bit for bit).
template <int kKTiles>
__device__ __forceinline__ void multiply_tile(float (&total)[kUpdateTileCols / 2], uint32_t tiles) {
  constexpr int kCount = kUpdateTileCols / 2;  // accumulators a thread: 64 x 64 / 128
  float part[kCount];
#pragma unroll
  for (int i = 0; i < kCount; ++i) total[i] = 0.0f;
#pragma unroll
  for (int t = 0; t < kKTiles; ++t) {
    const uint32_t a = tiles + t * kStageBytes, b = a + UpdateTile::kBytes;
    wgmma_fence();
#pragma unroll
    for (int k = 0; k < kFp8TileK / kFp8WgmmaK; ++k) {
      fp8_swap_ab::wgmma_m64nNk32_e4m3<kCount>(
          part, matrix_descriptor<UpdateTile>(a + k * kFp8WgmmaK),
          matrix_descriptor<UpdateTile>(b + k * kFp8WgmmaK), k > 0);
    }
    wgmma_commit();
    wgmma_wait<0>();
#pragma unroll
    for (int i = 0; i < kCount; ++i) {
      asm volatile("" : "+f"(part[i])::"memory");  // written by the wgmmas
      total[i] += part[i];
    }
  }
}

// Raises *amax to the largest of the warps' maxima, once a block, after its last tile.
__device__ __forceinline__ void record_block_amax(
    unsigned* amax, const unsigned (&warp_amax)[kWarpgroupThreads / 32]) {
  unsigned largest = 0;
  for (const unsigned m : warp_amax) largest = max(largest, m);
  atomicMax(amax, largest);
}

// Thread 0: the TMA loads of tile `tile` (its masters, every K tile of its operands) into the
// buffer at `buffer`, counted on `barrier`.
template <int kKTiles>
__device__ __forceinline__ void load_tile(const CUtensorMap& map_a, const CUtensorMap& map_b,
                                          const CUtensorMap& map_master, int tile, int column_tiles,
                                          uint32_t buffer, uint32_t barrier) {
  using Smem = Fp8UpdateSmem<kKTiles>;
  const int row0 = tile / column_tiles * kUpdateTileRows;
  const int col0 = tile % column_tiles * kUpdateTileCols;
  mbarrier_arrive_expect_tx(barrier, Smem::kTileBytes);
  for (int box = 0; box < kMasterBoxes; ++box) {
    tma_load(buffer + Smem::kMastersAt + box * kUpdateBoxBytes, map_master,
             col0 + box * kStoreBoxColumns, row0, barrier);
  }
#pragma unroll
  for (int t = 0; t < kKTiles; ++t) {
    const uint32_t stage = buffer + t * kStageBytes;
    tma_load_tile<UpdateTile>(map_a, stage, row0, t * kTileK, barrier);
    tma_load_tile<UpdateTile>(map_b, stage + UpdateTile::kBytes, col0, t * kTileK, barrier);
  }
}

#endif  // sm_90a

// tile_count tiles of 64 x 64, gridDim.x blocks; map_w_t: only where e.x_t is not null.
template <int kKTiles>
__global__ void __launch_bounds__(kWarpgroupThreads)
    fp8_weight_update_kernel(const __grid_constant__ CUtensorMap map_a,
                             const __grid_constant__ CUtensorMap map_b,
                             const __grid_constant__ CUtensorMap map_master,
                             const __grid_constant__ CUtensorMap map_w,
                             const __grid_constant__ CUtensorMap map_w_t, int n, int tile_count,
                             const float* scale_a, const float* scale_b,
                             const __grid_constant__ Fp8Epilogue e) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using Smem = Fp8UpdateSmem<kKTiles>;
  extern __shared__ __align__(16) uint8_t smem[];
  const uint32_t buffers = ring_start(smem);  // every box from a swizzle atom
  uint8_t* const buffers_pointer = smem + (buffers - shared_address(smem));
  const uint32_t barriers = buffers + Smem::kBarriersAt;
  const int column_tiles = (n + kUpdateTileCols - 1) / kUpdateTileCols;
  if (threadIdx.x == 0) {
    for (int b = 0; b < kBuffers; ++b) mbarrier_init(barriers + b * sizeof(uint64_t), 1);
    fence_proxy_async();
    for (int b = 0; b < kBuffers; ++b) {  // the block's first two tiles
      const int tile = blockIdx.x + b * gridDim.x;
      if (tile < tile_count) {
        load_tile<kKTiles>(map_a, map_b, map_master, tile, column_tiles,
                           buffers + b * Smem::kBufferBytes, barriers + b * sizeof(uint64_t));
      }
    }
  }
  __syncthreads();  // the barriers exist before anyone waits on them
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const float unscale = *scale_a * *scale_b;  // the operands' factors: g is dW
  const float scale = e.scaling->scale;       // w's factor
  float amax = 0.0f;
  int i = 0;  // the block's tiles so far: tile i is in buffer i % 2, that buffer's (i / 2)-th
  for (int tile = blockIdx.x; tile < tile_count; tile += gridDim.x, ++i) {
    const int b = i % kBuffers;
    const uint32_t buffer = buffers + b * Smem::kBufferBytes;
    const uint32_t barrier = barriers + b * sizeof(uint64_t);
    uint8_t* const buffer_pointer = buffers_pointer + b * Smem::kBufferBytes;
    const uint32_t masters = buffer + Smem::kMastersAt;
    const uint32_t w = buffer, w_t = buffer + kCodeTileBytes;  // in K tile 0's place, later
    const int row0 = tile / column_tiles * kUpdateTileRows;
    const int col0 = tile % column_tiles * kUpdateTileCols;
    mbarrier_wait(barrier, i / kBuffers % 2);
    float g[kUpdateTileCols / 2];
    multiply_tile<kKTiles>(g, buffer);
#pragma unroll
    for (float& x : g) x *= unscale;
    __syncthreads();  // every warp's wgmmas have read K tile 0 before the codes take its place

    // wgmma.cuh's layout: g[4 q + 2 h + j] is row 16 w + l / 4 + 8 h, column 8 q + 2 (l % 4) + j.
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = warp * 16 + lane / 4 + 8 * h;
#pragma unroll
      for (int q = 0; q < kUpdateTileCols / 8; ++q) {
        const int c = 8 * q + lane % 4 * 2;
        float2* const master = reinterpret_cast<float2*>(
            buffer_pointer + Smem::kMastersAt + c / kStoreBoxColumns * kUpdateBoxBytes +
            swizzled(r, c % kStoreBoxColumns * int(sizeof(float))));
        const float2 old = *master;
        const float2 updated =
            make_float2(__fmaf_rn(-e.learning_rate, g[4 * q + 2 * h], old.x),
                        __fmaf_rn(-e.learning_rate, g[4 * q + 2 * h + 1], old.y));
        *master = updated;
        amax = fmaxf(amax, fmaxf(fabsf(updated.x), fabsf(updated.y)));
        const uint16_t codes = quantise_pair(updated.x, updated.y, scale);
        asm volatile("st.shared.u16 [%0], %1;\n" ::"r"(fp8_fused_epilogue::staged(w, r, c)),
                     "h"(codes));
        asm volatile("st.shared.u8 [%0], %1;\n" ::"r"(fp8_fused_epilogue::staged(w_t, c, r)),
                     "h"(uint16_t(codes & 0xFF)));
        asm volatile("st.shared.u8 [%0], %1;\n" ::"r"(fp8_fused_epilogue::staged(w_t, c + 1, r)),
                     "h"(uint16_t(codes >> 8)));
      }
    }
    // The copy engine reads shared memory through the async proxy: each thread's writes above are
    // ordered before it by the fence, and every thread's before thread 0's stores by the barrier
    // (tests/check_tma_stores.py reads the machine code for both).
    fence_proxy_async();
    __syncthreads();
    if (threadIdx.x == 0) {  // chapter 10's TMA store, then the buffer's next tile
      const uint64_t policy = weight_update::l2_evict_normal();  // all three are read next step
      for (int box = 0; box < kMasterBoxes; ++box) {
        tile_scheduler::tma_store(map_master, col0 + box * kStoreBoxColumns, row0,
                                  masters + box * kUpdateBoxBytes, policy);
      }
      tile_scheduler::tma_store(map_w, col0, row0, w, policy);
      if (e.x_t) tile_scheduler::tma_store(map_w_t, row0, col0, w_t, policy);
      tile_scheduler::bulk_commit();
      // Every tile's stores read before the loop goes on: the buffer may be refilled, and the
      // block's last stores are read before it ends (check_tma_stores.py sees the wait after
      // each store).
      tile_scheduler::bulk_wait_read<0>();
      const int next = tile + kBuffers * gridDim.x;
      if (next < tile_count) {
        load_tile<kKTiles>(map_a, map_b, map_master, next, column_tiles, buffer, barrier);
      }
    }
  }
  __shared__ unsigned warp_amax[kWarpgroupThreads / 32];
  const unsigned largest = __reduce_max_sync(0xFFFFFFFFu, __float_as_uint(amax));  // amax >= 0
  if (lane == 0) warp_amax[warp] = largest;
  note_quantised(e.scaling, scale);
  __syncthreads();
  if (threadIdx.x == 0) {
    record_block_amax(&e.scaling->amax_bits, warp_amax);
    tile_scheduler::bulk_wait_all();  // w, w_t and the masters written when the kernel ends
  }
#else
  __trap();  // built without sm_90a: see wgmma.cuh
#endif
}

// e4m3 codes, `rows` rows of `row_length`, `pitch` bytes apart, in boxes of a code tile under
// TMA's 64-byte swizzle.
inline CUtensorMap code_map(uint8_t* codes, int row_length, int rows, int pitch, const char* what) {
  CUtensorMap map;
  const cuuint64_t size[2] = {cuuint64_t(row_length), cuuint64_t(rows)};  // innermost first
  const cuuint64_t row_stride[1] = {cuuint64_t(pitch)};
  const cuuint32_t box[2] = {kCodeSwizzleBytes, kUpdateTileRows};
  const cuuint32_t element_stride[2] = {1, 1};
  const CUresult result =
      tensor_map_encoder()(&map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 2, codes, size, row_stride, box,
                           element_stride, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_64B,
                           CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (result != CUDA_SUCCESS) {
    throw std::runtime_error("cuTensorMapEncodeTiled failed (CUresult " + std::to_string(result) +
                             ") for " + what);
  }
  return map;
}

// A weight update (kUpdate) whose K fits kMaxUpdateKTiles and whose tensors TMA can load and
// store: the operands 16-byte aligned, the masters' rows (n floats), w's (n codes) and w_t's
// (t_pitch codes) whole 16-byte pieces.
inline bool fp8_weight_update_takes(const Fp8Problem& p, const Fp8Epilogue& e) {
  const auto aligned = [](const void* x) { return reinterpret_cast<uintptr_t>(x) % 16 == 0; };
  return e.kind == Fp8EpilogueKind::kUpdate && p.k <= kMaxUpdateKTiles * kFp8TileK &&
         aligned(p.a) && aligned(p.b) &&
         weight_update::tma_rows(e.master, p.n * int(sizeof(float))) &&
         weight_update::tma_rows(e.x, p.n) && (!e.x_t || weight_update::tma_rows(e.x_t, e.t_pitch));
}

template <int kKTiles>
void launch_fp8_weight_update_of(const Fp8Problem& fp8, const Fp8Epilogue& e, cudaStream_t stream) {
  constexpr int kSmemBytes = Fp8UpdateSmem<kKTiles>::kBytes;
  const auto kernel = fp8_weight_update_kernel<kKTiles>;
  GemmProblem p = as_halves(fp8, nullptr);
  p.epilogue.master = e.master;
  const TensorMaps<UpdateTile, UpdateTile> operands(p);
  const CUtensorMap w = code_map(e.x, p.n, p.m, p.n, "the e4m3 weights");
  const CUtensorMap w_t =
      e.x_t ? code_map(e.x_t, p.m, p.n, e.t_pitch, "the transposed e4m3 weights") : CUtensorMap{};
  const int tiles = (p.m + kUpdateTileRows - 1) / kUpdateTileRows *
                    ((p.n + kUpdateTileCols - 1) / kUpdateTileCols);
  static const int resident = resident_blocks(kernel, kWarpgroupThreads, kSmemBytes);
  kernel<<<std::min(tiles, resident), kWarpgroupThreads, kSmemBytes, stream>>>(
      operands.a, operands.b, weight_update::master_map(p), w, w_t, p.n, tiles, fp8.scale_a,
      fp8.scale_b, e);
  CUDA_CHECK(cudaGetLastError());
}

// Needs fp8_weight_update_takes(p, e).
inline void launch_fp8_weight_update(const Fp8Problem& p, const Fp8Epilogue& e,
                                     cudaStream_t stream) {
  if (!fp8_weight_update_takes(p, e)) {
    throw std::invalid_argument("launch_fp8_weight_update: a product this kernel does not take");
  }
  if (p.k <= kFp8TileK) return launch_fp8_weight_update_of<1>(p, e, stream);
  launch_fp8_weight_update_of<kMaxUpdateKTiles>(p, e, stream);
}

}  // namespace mnist::fp8_weight_update
