// An FP8 GEMM on Hopper's tensor cores, C = s_a s_b (A B^T): A (m x k) and B (n x k) in e4m3,
// both K-major (row-major with k contiguous), s_a and s_b the per-tensor factors that undo their
// quantisation (fp8_format.hpp), C (m x n) in fp32. A prototype for the FP8 chapter: chapter 10's
// warp-specialised persistent kernel with three changes.
//
//   bytes are bytes   a K tile of 128 e4m3 is one 128-byte swizzled row, the same bytes as
//                     chapter 07's 64 halves: the ring, the swizzle, the descriptors and the
//                     32-byte K step carry over; TMA reads the operands as UINT8.
//   the instruction   wgmma.m64n192k32.f32.e4m3.e4m3: both operands K-major, no transpose
//                     (FP8 wgmma has none); 4 of them per K tile.
//   promotion         the tensor cores add an FP8 product chain in reduced precision; every K
//                     tile the consumer waits for its wgmmas and adds their result to an fp32
//                     total in ordinary registers. A 64 x 256 consumer tile would need 256
//                     registers for both sets: the tile is 64 x 192.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "07_tma/tma.cuh"
#include "08_wgmma/wgmma.cuh"
#include "09_warp_specialized/roles.cuh"
#include "cuda_check.cuh"
#include "occupancy.cuh"

namespace mnist::fp8 {

using namespace wgmma;
using namespace warp_specialized;

// C = scale_a scale_b (A B^T); the scales are device pointers, so that a delayed scale computed on
// the GPU needs no trip to the host.
struct Fp8Problem {
  int m, n, k;
  const uint8_t* a;  // m x k e4m3, row r at a + r k
  const uint8_t* b;  // n x k e4m3
  const float* scale_a;
  const float* scale_b;
  float* c;  // m x n
};

constexpr int kFp8WgmmaN = 192;
constexpr int kFp8WgmmaK = 32;            // e4m3 per wgmma: 32 bytes of K
constexpr int kFp8TileK = kSwizzleBytes;  // 128 e4m3 per K tile
constexpr int kFp8Accumulators = kWgmmaM * kFp8WgmmaN / kWarpgroupThreads;  // 96 per thread
constexpr int kBlockTileM = 128;  // two consumer warpgroups of 64 rows
constexpr int kBlockTileN = kFp8WgmmaN;
constexpr int kConsumers = kBlockTileM / kWgmmaM;
constexpr int kThreads = (1 + kConsumers) * kWarpgroupThreads;
constexpr int kConsumerWarps = kConsumers * kWarpgroupThreads / 32;
constexpr int kStages = 5;
constexpr int kGroupTileRows = 16;
static_assert(kFp8TileK / kFp8WgmmaK * kFp8WgmmaK == kFp8TileK, "whole wgmmas per K tile");
static_assert(kFp8WgmmaK == int(k_step_bytes<SwizzledTile<kBlockTileM, true>>()),
              "an e4m3 K step covers the bytes of chapter 08's k16 step");

// The ring of chapter 07 for K-major A and B: its tile of kTileK halves is kFp8TileK e4m3.
using Ring = TmaRing<kBlockTileM, kBlockTileN, Op::N, Op::T, kStages, 2>;
constexpr int kSmemBytes = Ring::kSmemBytes;

__host__ __device__ inline int tile_count(const Fp8Problem& p) {
  return (p.m + kBlockTileM - 1) / kBlockTileM * ((p.n + kBlockTileN - 1) / kBlockTileN);
}

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)

// Chapter 10's grouped order: groups of kGroupTileRows tile rows, column by column in a group.
__device__ __forceinline__ void tile_origin(const Fp8Problem& p, int tile, int& row0, int& col0) {
  const int tiles_m = (p.m + kBlockTileM - 1) / kBlockTileM;
  const int tiles_n = (p.n + kBlockTileN - 1) / kBlockTileN;
  const int per_group = kGroupTileRows * tiles_n;
  const int first_row = tile / per_group * kGroupTileRows;
  const int group_rows = min(tiles_m - first_row, kGroupTileRows);
  const int in_group = tile % per_group;
  row0 = (first_row + in_group % group_rows) * kBlockTileM;
  col0 = in_group / group_rows * kBlockTileN;
}

// d = A . B + (accumulate ? d : 0) for a 64 x 192 x 32 step of this warpgroup, both operands
// K-major.
__device__ __forceinline__ void wgmma_m64n192k32_e4m3(float (&d)[kFp8Accumulators], uint64_t a,
                                                      uint64_t b, bool accumulate) {
  asm volatile(
      "{\n"
      ".reg .pred accumulate;\n"
      "setp.ne.b32 accumulate, %98, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n192k32.f32.e4m3.e4m3 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
      "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
      "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95"
      "}, %96, %97, accumulate, 1, 1;\n"
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
        "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95])
      : "l"(a), "l"(b), "r"(int(accumulate)));
}

// The producer (one thread), as chapter 10's: every K tile of every tile of this block.
__device__ __forceinline__ void produce(const CUtensorMap& map_a, const CUtensorMap& map_b,
                                        const Fp8Problem& p, uint32_t ring, uint32_t full,
                                        uint32_t empty) {
  const int k_tiles = (p.k + kFp8TileK - 1) / kFp8TileK;
  int stage = 0;
  uint32_t phase = 0;
  for (int tile = blockIdx.x; tile < tile_count(p); tile += gridDim.x) {
    int row0, col0;
    tile_origin(p, tile, row0, col0);
    for (int t = 0; t < k_tiles; ++t) {
      const uint32_t full_barrier = full + stage * sizeof(uint64_t);
      mbarrier_wait(empty + stage * sizeof(uint64_t), phase ^ 1);
      mbarrier_arrive_expect_tx(full_barrier, Ring::kStageBytes);
      const uint32_t a = ring + stage * Ring::kStageBytes;
      tma_load_tile<Ring::A>(map_a, a, row0, t * kFp8TileK, full_barrier);
      tma_load_tile<Ring::B>(map_b, a + Ring::A::kBytes, col0, t * kFp8TileK, full_barrier);
      if (++stage == kStages) stage = 0, phase ^= 1;
    }
  }
}

// A consumer warpgroup: rows [64 consumer, 64 consumer + 64) of every tile of this block. Each K
// tile's wgmmas start from zero (kPromote) and their sum joins the fp32 total once they are done;
// without kPromote they accumulate across K in the tensor cores, as chapter 10's do.
template <bool kPromote>
__device__ __forceinline__ void consume(int consumer, const Fp8Problem& p, uint32_t ring,
                                        uint32_t full, uint32_t empty) {
  const int warp = threadIdx.x / 32 % 4, lane = threadIdx.x % 32;
  const int k_tiles = (p.k + kFp8TileK - 1) / kFp8TileK;
  const float scale = *p.scale_a * *p.scale_b;
  float acc[kFp8Accumulators] = {};
  float total[kFp8Accumulators];
  int stage = 0;
  uint32_t phase = 0;
  for (int tile = blockIdx.x; tile < tile_count(p); tile += gridDim.x) {
    int row0, col0;
    tile_origin(p, tile, row0, col0);
    for (int t = 0; t < k_tiles; ++t) {
      mbarrier_wait(full + stage * sizeof(uint64_t), phase);
      const uint32_t a = ring + stage * Ring::kStageBytes + consumer * kWarpgroupRowsBytes;
      const uint32_t b = ring + stage * Ring::kStageBytes + Ring::A::kBytes;
      wgmma_fence();
#pragma unroll
      for (int k = 0; k < kFp8TileK / kFp8WgmmaK; ++k) {
        wgmma_m64n192k32_e4m3(acc, matrix_descriptor<Ring::A>(a + k * kFp8WgmmaK),
                              matrix_descriptor<Ring::B>(b + k * kFp8WgmmaK),
                              k > 0 || (!kPromote && t > 0));
      }
      wgmma_commit();
      wgmma_wait<0>();  // this K tile's wgmmas are done: its stage goes back to the producer
      if (lane == 0) mbarrier_arrive(empty + stage * sizeof(uint64_t));
#pragma unroll
      for (int i = 0; i < kFp8Accumulators; ++i) {
        asm volatile("" : "+f"(acc[i])::"memory");  // written by the wgmmas, behind the compiler
        if (kPromote) total[i] = t == 0 ? acc[i] : total[i] + acc[i];
      }
      if (++stage == kStages) stage = 0, phase ^= 1;
    }
    // The layout of chapter 08's accumulators: d[4 i + 2 h + j] is row 16 warp + lane / 4 + 8 h,
    // column 8 i + 2 (lane % 4) + j of the warpgroup's 64 x 192.
#pragma unroll
    for (int i = 0; i < kFp8Accumulators; ++i) {
      const int row = row0 + consumer * kWgmmaM + warp * 16 + lane / 4 + 8 * (i / 2 % 2);
      const int col = col0 + 8 * (i / 4) + 2 * (lane % 4) + i % 2;
      if (row < p.m && col < p.n) {
        p.c[size_t(row) * p.n + col] = scale * (kPromote ? total[i] : acc[i]);
      }
    }
  }
}

#endif  // sm_90a

template <bool kPromote>
__global__ void __launch_bounds__(kThreads, 1)
    fp8_gemm_kernel(const __grid_constant__ CUtensorMap map_a,
                    const __grid_constant__ CUtensorMap map_b, const Fp8Problem p) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ __align__(16) uint8_t smem[];
  const uint32_t ring = ring_start(smem);
  const uint32_t full = ring + kStages * Ring::kStageBytes;
  const uint32_t empty = full + kStages * sizeof(uint64_t);
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      mbarrier_init(full + s * sizeof(uint64_t), 1);
      mbarrier_init(empty + s * sizeof(uint64_t), kConsumerWarps);
    }
    fence_proxy_async();
  }
  __syncthreads();
  const int warpgroup = threadIdx.x / kWarpgroupThreads;
  if (warpgroup == 0) {
    setmaxnreg_dec<kProducerRegisters>();
    if (threadIdx.x == 0) produce(map_a, map_b, p, ring, full, empty);
  } else {
    setmaxnreg_inc<kConsumerRegisters>();
    consume<kPromote>(warpgroup - 1, p, ring, full, empty);
  }
#else
  __trap();  // built without sm_90a
#endif
}

// An e4m3 operand of `rows` rows of k bytes, read in boxes of one K tile by `box_rows` rows.
inline CUtensorMap fp8_operand_map(const uint8_t* x, int k, int rows, int box_rows) {
  return encode_tensor_map(const_cast<uint8_t*>(x), CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, k, rows,
                           kFp8TileK, box_rows, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                           "an e4m3 operand");
}

// Needs k a multiple of 16 (TMA's row pitch) and a GPU with sm_90a code.
template <bool kPromote = true>
void launch_fp8_gemm(const Fp8Problem& p, cudaStream_t stream) {
  const auto kernel = fp8_gemm_kernel<kPromote>;
  static const int resident = resident_blocks(kernel, kThreads, kSmemBytes);
  const CUtensorMap map_a = fp8_operand_map(p.a, p.k, p.m, kBlockTileM);
  const CUtensorMap map_b = fp8_operand_map(p.b, p.k, p.n, kBlockTileN);
  const int blocks = std::min(tile_count(p), resident);
  kernel<<<blocks, kThreads, kSmemBytes, stream>>>(map_a, map_b, p);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace mnist::fp8
