// Chapter 12: swap AB. Chapter 10's producer and consumers, with the batch on wgmma's N.
//
// The forward and backward-data products have M = batch (32 or 256) against N and K up to 8192:
// on chapter 10's 128 x 256 tile most of each wgmma multiplies zeros, and there are few tiles.
// C^T = op(B)^T . op(A)^T is the same product with the roles exchanged: the warpgroup's 64 rows go
// to the weights and wgmma's N to the batch. The operands are copied as stored (swapped() describes
// C^T to the tensor maps); only the epilogue knows that accumulator (r, q) is C[q][r], and it skips
// what lies outside C. A block has one or two consumers (tiles.cuh) and walks its tiles, K whole.
//
//   C (M x N)         C^T (N x M)             block tile of C^T: 64 (or 128) rows x batch tile
//   +--------------+  +---+---+               rows: op(B)^T, the weights, wgmma's "A"
//   |  batch x N   |  |   |   | N rows        columns: op(A)^T, the batch, wgmma's "B" (N <= 256)
//   +--------------+  |   |   |
//                     +---+---+ M columns, in batch tiles
#pragma once

#include <algorithm>
#include <cstdint>

#include "09_warp_specialized/roles.cuh"
#include "10_tile_scheduler/persistent_gemm.cuh"
#include "12_swap_ab/tiles.cuh"
#include "epilogue.cuh"
#include "gemm_interface.cuh"
#include "occupancy.cuh"

namespace mnist::swap_ab {

using namespace wgmma;
using namespace warp_specialized;

constexpr Op flipped(Op op) {
  return op == Op::N ? Op::T : Op::N;
}

// C^T = op(B)^T . op(A)^T as a problem: op(X) stored as X is op(X)^T stored as X, the other Op.
inline GemmProblem swapped(const GemmProblem& p) {
  GemmProblem t = p;
  t.m = p.n, t.n = p.m, t.a = p.b, t.b = p.a;
  t.op_a = flipped(p.op_b), t.op_b = flipped(p.op_a);
  return t;
}

// The block for a tile of kTileRows weight rows by kBatchTile columns of C^T.
template <Op kOpA, Op kOpB, int kTileRowsOf, int kBatchTileOf>
struct Block {
  static constexpr int kTileRows = kTileRowsOf, kBatchTile = kBatchTileOf;
  static constexpr int kConsumers = consumers_for(kBatchTile);                // consumer warpgroups
  static constexpr int kThreads = (1 + kConsumers) * kWarpgroupThreads;       // the producer first
  static constexpr int kConsumerWarps = kConsumers * kWarpgroupThreads / 32;  // empty a stage
  static constexpr int kBlocksPerSm = kConsumers == 1 ? 2 : 1;
  // Each consumer's part: 64 rows of the tile, or, in a tile of 64 rows, half its columns.
  static constexpr bool kConsumersSplitBatch = kTileRows < kConsumers * kWgmmaM;
  static constexpr int kConsumerColumns = kBatchTile / (kConsumersSplitBatch ? kConsumers : 1);
  static constexpr int kAccumulators = kWgmmaM * kConsumerColumns / kWarpgroupThreads;  // a thread
  static constexpr int kStageBytes = (kTileRows + kBatchTile) * kTileK * int(sizeof(__half));
  static constexpr int kStages = std::min(8, 192 * 1024 / kBlocksPerSm / kStageBytes);  // 192 KB/SM
  using Ring = TmaRing<kTileRows, kBatchTile, flipped(kOpB), flipped(kOpA), kStages, 2>;
};

// A unit of a block's work: tile `tile` of C^T, from (row0, col0), over K tiles [k_begin, k_end).
struct Unit {
  int tile, row0, col0, k_begin, k_end;
};

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)

// wgmma on the batch tiles: chapter 08's m64n256k16, multiply_k_tile and accumulators_settled for
// a 64 x N tile, N = 32, 64, 128 or 256: N / 2 accumulators a thread, whose count picks the wgmma.
#define MNIST_D4(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3])
#define MNIST_D16(i) MNIST_D4(i), MNIST_D4(i + 4), MNIST_D4(i + 8), MNIST_D4(i + 12)

template <bool kTransA, bool kTransB, int kCount>
__device__ __forceinline__ void wgmma_m64nNk16(float (&d)[kCount], uint64_t a, uint64_t b,
                                               bool accumulate) {
  if constexpr (kCount == 16) {
    asm volatile(
        "{\n.reg .pred accumulate;\nsetp.ne.b32 accumulate, %18, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, %16, %17, "
        "accumulate, 1, 1, %19, %20;\n}\n"
        : MNIST_D16(0)
        : "l"(a), "l"(b), "r"(int(accumulate)), "n"(int(kTransA)), "n"(int(kTransB)));
  } else if constexpr (kCount == 32) {
    asm volatile(
        "{\n.reg .pred accumulate;\nsetp.ne.b32 accumulate, %34, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "
        "%32, %33, accumulate, 1, 1, %35, %36;\n}\n"
        : MNIST_D16(0), MNIST_D16(16)
        : "l"(a), "l"(b), "r"(int(accumulate)), "n"(int(kTransA)), "n"(int(kTransB)));
  } else if constexpr (kCount == 64) {
    asm volatile(
        "{\n.reg .pred accumulate;\nsetp.ne.b32 accumulate, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
        "%64, %65, accumulate, 1, 1, %67, %68;\n}\n"
        : MNIST_D16(0), MNIST_D16(16), MNIST_D16(32), MNIST_D16(48)
        : "l"(a), "l"(b), "r"(int(accumulate)), "n"(int(kTransA)), "n"(int(kTransB)));
  } else {
    wgmma_m64n256k16<kTransA, kTransB>(d, a, b, accumulate);
  }
}

template <int kCount>
__device__ __forceinline__ void accumulators_settled(float (&d)[kCount]) {
#pragma unroll
  for (int i = 0; i < kCount; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

template <class ATile, class BTile, int kCount>
__device__ __forceinline__ void multiply_k_tile(float (&acc)[kCount], uint32_t a, uint32_t b,
                                                bool accumulate) {
  wgmma_fence();
#pragma unroll
  for (int k = 0; k < kTileK / kWgmmaK; ++k) {
    wgmma_m64nNk16<!ATile::kKMajor, !BTile::kKMajor>(
        acc, matrix_descriptor<ATile>(a + k * k_step_bytes<ATile>()),
        matrix_descriptor<BTile>(b + k * k_step_bytes<BTile>()), accumulate || k > 0);
  }
  wgmma_commit();
}

// The warpgroup's 64 x N accumulators of C^T from (n0, m0) through the epilogue, one at a time:
// acc[4 i + 2 h + j] is C[m0 + 8 i + 2 (l % 4) + j][n0 + 16 w + l / 4 + 8 h] (wgmma.cuh).
template <EpilogueKind kKind, int kCount>
__device__ __forceinline__ void finish_transposed(const GemmProblem& p, const float (&acc)[kCount],
                                                  int n0, int m0) {
  constexpr int kColumnBlocks = kCount / 4;  // 8-column blocks of the accumulator tile
  constexpr int kGroup = kColumnBlocks < kEpilogueGroup ? kColumnBlocks : kEpilogueGroup;
  const int warp = threadIdx.x / 32 % 4, lane = threadIdx.x % 32;  // warp within the warpgroup
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int n = n0 + warp * 16 + lane / 4 + 8 * h;
    if (n >= p.n) continue;
#pragma unroll
    for (int i0 = 0; i0 < kColumnBlocks; i0 += kGroup) {
      float input[kGroup][2];
#pragma unroll
      for (int i = 0; i < kGroup; ++i) {
        const int m = m0 + 8 * (i0 + i) + lane % 4 * 2;  // and m + 1
        input[i][0] = m < p.m ? epilogue_input<kKind>(p, m, n) : 0.0f;
        input[i][1] = m + 1 < p.m ? epilogue_input<kKind>(p, m + 1, n) : 0.0f;
      }
#pragma unroll
      for (int i = 0; i < kGroup; ++i) {
#pragma unroll
        for (int j = 0; j < 2; ++j) {
          const int m = m0 + 8 * (i0 + i) + lane % 4 * 2 + j;
          if (m < p.m) finish_element<kKind>(p, m, n, acc[4 * (i0 + i) + 2 * h + j], input[i][j]);
        }
      }
    }
  }
}

// A block's units: count(), unit(i), and ready(acc, u, consumer): acc holds the unit's result.
// Here a unit is a tile, K whole, batch tile by batch tile: blocks at once share weight rows.
template <class Block>
struct WholeTiles {
  const GemmProblem& p;
  __device__ int count() const { return tiles_of(p, {Block::kTileRows, Block::kBatchTile}); }
  __device__ Unit unit(int tile) const {
    const int batch_tiles = batch_tiles_of(p.m, Block::kBatchTile);
    return {tile, tile / batch_tiles * Block::kTileRows, tile % batch_tiles * Block::kBatchTile, 0,
            (p.k + kTileK - 1) / kTileK};
  }
  __device__ bool ready(const float*, Unit, int) const { return true; }
};

// The producer (one thread): the K tiles of every unit of this block, as in chapter 10.
template <class Block, class Schedule>
__device__ __forceinline__ void produce(const CUtensorMap& map_a, const CUtensorMap& map_b,
                                        const Schedule& schedule, uint32_t ring, uint32_t full,
                                        uint32_t empty) {
  using Ring = typename Block::Ring;
  int stage = 0;
  uint32_t phase = 0;  // parity of the stage's current use, run on through the tiles (chapter 09)
  for (int unit = blockIdx.x; unit < schedule.count(); unit += gridDim.x) {
    const auto u = schedule.unit(unit);
    for (int t = u.k_begin; t < u.k_end; ++t) {
      const uint32_t full_barrier = full + stage * sizeof(uint64_t);
      mbarrier_wait(empty + stage * sizeof(uint64_t), phase ^ 1);  // the previous use is read
      mbarrier_arrive_expect_tx(full_barrier, Ring::kStageBytes);
      const uint32_t a = ring + stage * Ring::kStageBytes;
      tma_load_tile<typename Ring::A>(map_a, a, u.row0, t * kTileK, full_barrier);
      tma_load_tile<typename Ring::B>(map_b, a + Ring::A::kBytes, u.col0, t * kTileK, full_barrier);
      if (++stage == Block::kStages) stage = 0, phase ^= 1;
    }
  }
}

// A consumer warpgroup: its 64 rows, or columns, of every unit of this block.
template <class Block, EpilogueKind kKind, class Schedule>
__device__ __forceinline__ void consume(int consumer, const GemmProblem& p,
                                        const Schedule& schedule, uint32_t ring, uint32_t full,
                                        uint32_t empty) {
  using Ring = typename Block::Ring;
  const int lane = threadIdx.x % 32;
  const int row_part = Block::kConsumersSplitBatch ? 0 : consumer;
  const int column_part = Block::kConsumersSplitBatch ? consumer : 0;
  const uint32_t a_offset = row_part * kWarpgroupRowsBytes;
  const uint32_t b_offset = Ring::A::kBytes + column_part * kWarpgroupRowsBytes;
  float acc[Block::kAccumulators] = {};  // never reaches a wgmma uninitialised
  int stage = 0;
  uint32_t phase = 0;
  for (int unit = blockIdx.x; unit < schedule.count(); unit += gridDim.x) {
    const auto u = schedule.unit(unit);
    int previous = 0;  // the stage of the K tile before, still being read
    for (int t = u.k_begin; t < u.k_end; ++t) {
      mbarrier_wait(full + stage * sizeof(uint64_t), phase);  // its bytes have landed
      const uint32_t a = ring + stage * Ring::kStageBytes;    // the stage: A tile, then B tile
      multiply_k_tile<typename Ring::A, typename Ring::B>(acc, a + a_offset, a + b_offset,
                                                          t > u.k_begin);
      wgmma_wait<1>();  // K tile t - 1's wgmmas are done: its stage goes back to the producer
      if (t > u.k_begin && lane == 0) mbarrier_arrive(empty + previous * sizeof(uint64_t));
      previous = stage;
      if (++stage == Block::kStages) stage = 0, phase ^= 1;
    }
    wgmma_wait<0>();
    if (lane == 0) mbarrier_arrive(empty + previous * sizeof(uint64_t));
    accumulators_settled(acc);
    if (!schedule.ready(acc, u, consumer)) continue;
    finish_transposed<kKind>(p, acc, u.row0 + row_part * kWgmmaM,
                             u.col0 + column_part * Block::kConsumerColumns);
  }
}

// The block: chapter 09's barriers and roles, and with two consumers its setmaxnreg.
template <class Block, EpilogueKind kKind, class Schedule>
__device__ __forceinline__ void swap_ab_gemm(const CUtensorMap& map_a, const CUtensorMap& map_b,
                                             const GemmProblem& p, const Schedule& schedule) {
  using Ring = typename Block::Ring;
  extern __shared__ __align__(16) uint8_t smem[];
  const uint32_t ring = ring_start(smem);
  const uint32_t full = ring + Block::kStages * Ring::kStageBytes;
  const uint32_t empty = full + Block::kStages * sizeof(uint64_t);
  if (threadIdx.x == 0) {
    for (int s = 0; s < Block::kStages; ++s) {
      mbarrier_init(full + s * sizeof(uint64_t), 1);  // the producer's arrive.expect_tx
      mbarrier_init(empty + s * sizeof(uint64_t), Block::kConsumerWarps);
    }
    fence_proxy_async();
  }
  __syncthreads();  // the barriers exist before anyone waits on them

  const int warpgroup = threadIdx.x / kWarpgroupThreads;
  if (warpgroup == 0) {
    if constexpr (Block::kConsumers > 1) setmaxnreg_dec<kProducerRegisters>();
    if (threadIdx.x == 0) produce<Block>(map_a, map_b, schedule, ring, full, empty);
  } else {
    if constexpr (Block::kConsumers > 1) setmaxnreg_inc<kConsumerRegisters>();
    consume<Block, kKind>(warpgroup - 1, p, schedule, ring, full, empty);
  }
}

#endif  // sm_90a

template <Op kOpA, Op kOpB, EpilogueKind kKind, int kTileRows, int kBatchTile>
__global__ void __launch_bounds__(Block<kOpA, kOpB, kTileRows, kBatchTile>::kThreads,
                                  Block<kOpA, kOpB, kTileRows, kBatchTile>::kBlocksPerSm)
    swap_ab_gemm_kernel(const __grid_constant__ CUtensorMap map_a,
                        const __grid_constant__ CUtensorMap map_b,
                        const __grid_constant__ GemmProblem p) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using B = Block<kOpA, kOpB, kTileRows, kBatchTile>;
  swap_ab_gemm<B, kKind>(map_a, map_b, p, WholeTiles<B>{p});
#else
  __trap();  // built without sm_90a: see wgmma.cuh
#endif
}

// The blocks of `tile` the GPU runs at once (the kernel opted in to its shared memory).
template <Op kOpA, Op kOpB, EpilogueKind kKind>
int resident_swap_ab_blocks(SwapAbTile tile) {
  int blocks = 0;
  with_block_tile<kOpA>(tile, [&](auto rows, auto batch) {
    using B = Block<kOpA, kOpB, rows, batch>;
    const auto kernel = swap_ab_gemm_kernel<kOpA, kOpB, kKind, rows, batch>;
    static const int resident = resident_blocks(kernel, B::kThreads, B::Ring::kSmemBytes);
    blocks = resident;
  });
  return blocks;
}

template <Op kOpA, Op kOpB, EpilogueKind kKind, int kTileRows, int kBatchTile>
void launch_swap_ab(const GemmProblem& p, cudaStream_t stream) {
  using B = Block<kOpA, kOpB, kTileRows, kBatchTile>;
  const TensorMaps<typename B::Ring::A, typename B::Ring::B> maps(swapped(p));
  const int blocks = std::min(tiles_of(p, {kTileRows, kBatchTile}),
                              resident_swap_ab_blocks<kOpA, kOpB, kKind>({kTileRows, kBatchTile}));
  swap_ab_gemm_kernel<kOpA, kOpB, kKind, kTileRows, kBatchTile>
      <<<blocks, B::kThreads, B::Ring::kSmemBytes, stream>>>(maps.a, maps.b, p);
}

// Calls launch(op_a, op_b, kind, rows, batch) where the kernel takes p; returns whether it did.
template <class Launch>
bool launch_if_swap_ab_takes(const GemmProblem& p, Launch&& launch) {
  bool taken = false;
  with_epilogue_kind(p.epilogue.kind, [&](auto kind) {
    with_operand_ops(p, [&](auto op_a, auto op_b) {
      constexpr Op kOpA = decltype(op_a)::value, kOpB = decltype(op_b)::value;
      if (!swap_ab_takes<kOpA, kOpB>(p)) return;
      const SwapAbTile tile =
          block_tile_for<kOpA>(p, resident_swap_ab_blocks<kOpA, kOpB, decltype(kind)::value>);
      if (tile.batch == kNoSwapAbTile.batch) return;
      with_block_tile<kOpA>(tile, [&](auto rows, auto batch) {
        launch(op_a, op_b, kind, rows, batch);
        taken = true;
      });
    });
  });
  return taken;
}

// The products the kernel leaves, in chapters 12-14: the best square kernel (chapter 10's).
inline void launch_square_gemm(const GemmProblem& p, cudaStream_t stream) {
  tile_scheduler::launch_tile_scheduler_or_fall_back(p, stream);
}

}  // namespace mnist::swap_ab
