// Chapter 07: TMA. Chapter 06's kernel, with its copies handed to Hopper's copy engine.
//
// In chapter 06 all 256 threads copy every stage: each computes the addresses of its 16-byte
// pieces, tests them against the matrix's edges and issues 4-8 cp.async. Here one thread hands a
// whole tile to the Tensor Memory Accelerator (tma.cuh) with one instruction per operand. The
// loop is chapter 06's, with the K tile widened to the swizzle span (64 halves):
//
//   prologue: thread 0 starts K tiles 0 .. kStages - 2, each counting its 32 KiB on full[stage]
//   K step t: everyone waits on full[t % kStages] (parity: the stage's use count & 1); one
//             __syncthreads, after which thread 0 refills the stage of step t - 1; every warp
//             multiplies, each lane's ldmatrix row found through the swizzle
//
// When: tma_kernel_takes() in dispatch.cuh; every other product goes to chapter 06's kernel.
#pragma once

#include <cstdint>

#include "03_mma_sync/mma.cuh"
#include "07_tma/dispatch.cuh"
#include "07_tma/tma.cuh"
#include "epilogue.cuh"
#include "gemm_interface.cuh"
#include "occupancy.cuh"

namespace mnist::tma {

using namespace mma_sync;

// The kernels apply the epilogue (gemm_interface.cuh) themselves, and the trainer replays each
// step as a CUDA graph.
constexpr bool kFusedEpilogue = true;
constexpr bool kReplayStepAsGraph = true;

// TMA needs an H100-class GPU and sm_90a code: common/gpu_requirements.hpp checks both.
constexpr bool kNeedsSm90a = true;

constexpr int kBlockTileM = 128;  // rows of C per block
constexpr int kBlockTileN = 128;  // columns of C per block
constexpr int kWarpTileM = 64;    // rows of C per warp
constexpr int kWarpTileN = 32;    // columns of C per warp

constexpr int kWarpsM = kBlockTileM / kWarpTileM;  // 2
constexpr int kWarpsN = kBlockTileN / kWarpTileN;  // 4
constexpr int kThreads = kWarpsM * kWarpsN * 32;   // 256 threads, 8 warps, per block
constexpr int kMmaTilesM = kWarpTileM / kMmaM;     // 4 mma tiles down a warp tile
constexpr int kMmaTilesN = kWarpTileN / kMmaN;     // 4 across
constexpr int kStages = 4;                         // block tiles in the shared-memory ring

// The ring (tma.cuh): kStages stages of 32 KiB, then one barrier per stage, full[s].
template <Op kOpA, Op kOpB>
using RingFor = TmaRing<kBlockTileM, kBlockTileN, kOpA, kOpB, kStages, 1>;

// Chapter 03's ldmatrix.x4 of a 16 x 16 piece, from a swizzled tile: lane l names row l % 8 of
// matrix l / 8, found where the swizzle put it (stored rows run along mn for a K-major tile, along
// k for an MN-major one, which ldmatrix transposes). The matrices lie at (mn, k) offsets (0, 0),
// (8, 0), (0, 8), (8, 8) for an A fragment, and (0, 0), (0, 8), (8, 0), (8, 8) for two B ones.
template <class Tile, bool kB>
__device__ __forceinline__ void load_fragments(const uint8_t* tile, int mn, int k, int lane,
                                               uint32_t (&r)[4]) {
  const int matrix = lane / 8, row = lane % 8;
  const int mi = mn + (kB ? matrix / 2 : matrix % 2) * 8,
            ki = k + (kB ? matrix % 2 : matrix / 2) * 8;
  const int at = Tile::kKMajor ? Tile::offset(mi + row, ki) : Tile::offset(mi, ki + row);
  ldmatrix_x4<!Tile::kKMajor>(reinterpret_cast<const __half*>(tile + at), r);
}

// One block per tile of C. p is __grid_constant__ because finish_pair takes it by reference: the
// kernel then reads it where it is, without a copy per thread.
template <Op kOpA, Op kOpB, EpilogueKind kKind>
__global__ void __launch_bounds__(kThreads)
    tma_gemm_kernel(const __grid_constant__ CUtensorMap map_a,
                    const __grid_constant__ CUtensorMap map_b,
                    const __grid_constant__ GemmProblem p) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using Ring = RingFor<kOpA, kOpB>;
  using ATile = typename Ring::A;
  using BTile = typename Ring::B;
  extern __shared__ __align__(16) uint8_t smem[];
  const uint32_t ring = ring_start(smem);
  const uint8_t* const ring_pointer = smem + (ring - shared_address(smem));
  const uint32_t full = ring + kStages * Ring::kStageBytes;  // full[s] at full + 8 s

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int block_row = blockIdx.y * kBlockTileM, block_col = blockIdx.x * kBlockTileN;
  const int warp_row = warp / kWarpsN * kWarpTileM, warp_col = warp % kWarpsN * kWarpTileN;
  const int k_tiles = (p.k + kTileK - 1) / kTileK;

  // Thread 0 starts K tile t into stage t % kStages; the copies count their bytes on its barrier.
  const auto load_stage = [&](int t) {
    if (t >= k_tiles) return;
    const int stage = t % kStages;
    const uint32_t barrier = full + stage * sizeof(uint64_t);
    const uint32_t a = ring + stage * Ring::kStageBytes;
    mbarrier_arrive_expect_tx(barrier, Ring::kStageBytes);
    tma_load_tile<ATile>(map_a, a, block_row, t * kTileK, barrier);
    tma_load_tile<BTile>(map_b, a + ATile::kBytes, block_col, t * kTileK, barrier);
  };

  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) mbarrier_init(full + s * sizeof(uint64_t), 1);
    fence_proxy_async();
    for (int t = 0; t < kStages - 1; ++t) load_stage(t);  // prologue
  }
  __syncthreads();  // the barriers exist before anyone waits on them

  // At M = 32 the lower half of a 128-row block tile lies below C: its warps would only multiply
  // the zeros the loads put there, so they skip their MMAs (and still load and wait with the
  // others). One test per K step; finer skips, per mma tile, cost more in the inner loop than
  // they saved (measured: docs/05_split_k.md).
  const bool warp_inside_c = block_row + warp_row < p.m && block_col + warp_col < p.n;

  float acc[kMmaTilesM][kMmaTilesN][4] = {};
  for (int t = 0; t < k_tiles; ++t) {
    const int stage = t % kStages;
    mbarrier_wait(full + stage * sizeof(uint64_t), t / kStages % 2);  // tile t has landed
    __syncthreads();  // every warp is done with step t - 1's stage, which the load below refills
    if (threadIdx.x == 0) load_stage(t + kStages - 1);

    if (!warp_inside_c) continue;
    const uint8_t* const a_tile = ring_pointer + stage * Ring::kStageBytes;
    const uint8_t* const b_tile = a_tile + ATile::kBytes;
#pragma unroll
    for (int k = 0; k < kTileK; k += kMmaK) {
      uint32_t a[kMmaTilesM][4], b[kMmaTilesN / 2][4];  // b[j / 2]: mma tiles j and j + 1
#pragma unroll
      for (int i = 0; i < kMmaTilesM; ++i) {
        load_fragments<ATile, false>(a_tile, warp_row + i * kMmaM, k, lane, a[i]);
      }
#pragma unroll
      for (int j = 0; j < kMmaTilesN; j += 2) {
        load_fragments<BTile, true>(b_tile, warp_col + j * kMmaN, k, lane, b[j / 2]);
      }
#pragma unroll
      for (int i = 0; i < kMmaTilesM; ++i) {
#pragma unroll
        for (int j = 0; j < kMmaTilesN; ++j) {
          const uint32_t b_pair[2] = {b[j / 2][j % 2 * 2], b[j / 2][j % 2 * 2 + 1]};
          mma_m16n8k16(acc[i][j], a[i], b_pair);
        }
      }
    }
  }

  // Chapter 06's epilogue: the inputs of a row of mma tiles loaded before any of its stores.
  const bool paired = columns_paired<kKind>(p);
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
        input[j][h] = row < p.m && col < p.n ? epilogue_input_pair<kKind>(p, row, col, paired)
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
        finish_pair<kKind>(p, row, col, v, input[j][h], paired);
      }
    }
  }
#else
  __trap();  // built without sm_90a: see kNeedsSm90a
#endif
}

template <Op kOpA, Op kOpB, EpilogueKind kKind>
void launch_tma(const GemmProblem& p, cudaStream_t stream) {
  using Ring = RingFor<kOpA, kOpB>;
  const auto kernel = tma_gemm_kernel<kOpA, kOpB, kKind>;
  [[maybe_unused]] static const bool opted_in = allow_shared_memory(kernel, Ring::kSmemBytes);
  const TensorMaps<typename Ring::A, typename Ring::B> maps(p);
  const dim3 grid((p.n + kBlockTileN - 1) / kBlockTileN, (p.m + kBlockTileM - 1) / kBlockTileM);
  kernel<<<grid, kThreads, Ring::kSmemBytes, stream>>>(maps.a, maps.b, p);
}

inline void launch_gemm(const GemmProblem& p, cudaStream_t stream) {
  launch_or_fall_back(p, stream, [&](auto op_a, auto op_b, auto kind) {
    launch_tma<decltype(op_a)::value, decltype(op_b)::value, decltype(kind)::value>(p, stream);
  });
}

}  // namespace mnist::tma
