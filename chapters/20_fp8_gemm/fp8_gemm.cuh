// An FP8 GEMM on Hopper's tensor cores, C = s_a s_b (A B^T): A (m x k) and B (n x k) in e4m3,
// both K-major (row-major with k contiguous), s_a and s_b the per-tensor factors that undo their
// quantisation (common/fp8.hpp), C (m x n) in fp32. Chapter 11's kernel with two changes.
//
//   bytes are bytes   a K tile of 128 e4m3 is one 128-byte swizzled row, the bytes of chapter
//                     07's 64 halves. Read as 16-bit elements (as_halves), the operands go through
//                     chapter 11's tensor maps, producer, schedule and TMA-store epilogue as they
//                     are; only the consumer's instruction changes: wgmma.m64n128k32.e4m3, both
//                     operands K-major (FP8 wgmma has no transpose), 32 bytes of K a step.
//   promotion         the tensor cores add an FP8 product chain keeping 13 bits below its largest
//                     term (measured: test_gemm_fp8). Each K tile's products start from zero in a
//                     64 x 128 part and join an fp32 total in ordinary registers once their
//                     wgmmas are done: the error of a sum then grows with K as fp32's does.
//
//   consumer (64 x 256 of C, one K tile):
//     half 0: 4 wgmma -> part, wait 0, total[cols   0-127] += part
//     half 1: 4 wgmma -> part, wait 0, total[cols 128-255] += part, stage released
//   the two consumers in turns (announce_issue, await_issue):
//     tensor cores  | c0 h0 | c1 h0 | c0 h1 | c1 h1 | c0 h0 ...
//     c0            | mma   | add   | mma   | add   |
//     c1            | wait  | mma   | add   | mma   |
//   each issues a half only after the other has issued its own
// 64 part + 128 total registers fit where two 128-register sets would not.
// The sums leave as C (fp32) or, for the last hidden layer, fp16 ReLU(C + bias); the trainer
// quantises C in a kernel of its own (common/fp8_step.cuh).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>

#include "11_clusters/gemm.cuh"
#include "12_swap_ab/swap_ab.cuh"  // MNIST_D16: a wgmma's accumulator operands
#include "fp8_interface.cuh"

namespace mnist::fp8_gemm {

// Chapter 11's names (clusters::) where chapter 10's kernel, reached through chapter 11's own
// using-directives, has the same ones.
using namespace clusters;

constexpr int kFp8TileK = kTileK * int(sizeof(__half));  // 128 e4m3 per K tile
constexpr int kFp8WgmmaN = kWgmmaN / 2;                  // a half of the consumer's 256 columns
constexpr int kFp8WgmmaK = 32;  // e4m3 per wgmma: 32 bytes of K, chapter 08's k16 step
constexpr int kPartAccumulators = kWgmmaM * kFp8WgmmaN / kWarpgroupThreads;  // 64 per thread
using Ring = clusters::RingFor<Op::N, Op::T>;                               // both operands K-major
constexpr int kConsumerThreads = clusters::kConsumers * kWarpgroupThreads;  // the turns' barriers
using HalfTile = HalfB<Ring>;  // 128 rows of the B tile: one half's operand
static_assert(kFp8WgmmaK == int(k_step_bytes<Ring::A>()), "an e4m3 step is a k16 step's bytes");

// The e4m3 operands as 16-bit elements (k / 2 per row) for chapter 11's maps and producer; C, where
// the epilogue stores it, at c.
inline GemmProblem as_halves(const Fp8Problem& p, float* c) {
  GemmProblem halves;
  halves.m = p.m;
  halves.n = p.n;
  halves.k = p.k / 2;
  halves.a = reinterpret_cast<const __half*>(p.a);
  halves.op_a = Op::N;
  halves.b = reinterpret_cast<const __half*>(p.b);
  halves.op_b = Op::T;
  halves.c = c;
  return halves;
}

template <Fp8EpilogueKind kKind>
struct StoreTiles;

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)

// d = A . B + (accumulate ? d : 0) for a 64 x 128 x 32 step of this warpgroup, e4m3 operands
// whose descriptors are a and b, d the first of 64 accumulators in chapter 08's layout.
__device__ __forceinline__ void wgmma_m64n128k32_e4m3(float* d, uint64_t a, uint64_t b,
                                                      bool accumulate) {
  asm volatile(
      "{\n"
      ".reg .pred accumulate;\n"
      "setp.ne.b32 accumulate, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
      "}, %64, %65, accumulate, 1, 1;\n"
      "}\n"
      : MNIST_D16(0), MNIST_D16(16), MNIST_D16(32), MNIST_D16(48)
      : "l"(a), "l"(b), "r"(int(accumulate)));
}

// The wgmmas of one half of a K tile: this warpgroup's 64 rows of A at `a` times the 128 rows of
// B at `b` (shared addresses), uncommitted.
__device__ __forceinline__ void multiply_half(float* d, uint32_t a, uint32_t b, bool accumulate) {
#pragma unroll
  for (int k = 0; k < kFp8TileK / kFp8WgmmaK; ++k) {
    wgmma_m64n128k32_e4m3(d, matrix_descriptor<Ring::A>(a + k * kFp8WgmmaK),
                          matrix_descriptor<HalfTile>(b + k * kFp8WgmmaK), accumulate || k > 0);
  }
}

// The consumers take turns at the tensor cores. Named barrier 3 + c (chapter 10's warpgroup_sync
// holds 1 and 2) counts consumer c's halves issued: c arrives once it has issued one
// (announce_issue), the other waits for that (await_issue) before it issues its next, so the tensor
// cores run c0's half, c1's, c0's next, ... and each consumer adds while the other's half runs.
// Left to themselves, both consumers' wgmmas run side by side, finish together and leave the
// tensor cores idle while both add. (Letting a consumer issue freely and wait only before its adds
// measured 77-82% of cuBLASLt instead of 85-91%: docs/results/alternatives/fp8_gemm/.)
__device__ __forceinline__ void announce_issue(int consumer) {
  if (consumer == 0) {
    asm volatile("bar.arrive 3, %0;\n" ::"n"(kConsumerThreads) : "memory");
  } else {
    asm volatile("bar.arrive 4, %0;\n" ::"n"(kConsumerThreads) : "memory");
  }
}
__device__ __forceinline__ void await_issue(int other) {
  if (other == 0) {
    asm volatile("bar.sync 3, %0;\n" ::"n"(kConsumerThreads) : "memory");
  } else {
    asm volatile("bar.sync 4, %0;\n" ::"n"(kConsumerThreads) : "memory");
  }
}

// What a consumer does with its tiles (a later chapter adds its own): start(p, e, row0, col0) as
// the K loop of the warpgroup's 64 x 256 tile at (row0, col0) begins, finish(...) with its scaled
// sums. Here C goes into c: through TMA (store_by_tma) or, kBiasRelu, through chapter 08's fp16
// ReLU epilogue into out.
template <Fp8EpilogueKind kKind>
struct StoreTiles {
  static_assert(kKind == Fp8EpilogueKind::kStore || kKind == Fp8EpilogueKind::kBiasRelu);
  __device__ static void start(const GemmProblem&, const Fp8Epilogue&, int, int) {}
  __device__ static void finish(const GemmProblem& p, float (&total)[kAccumulators], int consumer,
                                int row0, int col0, const Fp8Epilogue&, const CUtensorMap& map_c,
                                bool store_by_tma, uint32_t staging) {
    if constexpr (kKind == Fp8EpilogueKind::kBiasRelu) {
      finish_accumulators<EpilogueKind::kBiasRelu>(p, total, row0, col0,
                                                   columns_paired<EpilogueKind::kBiasRelu>(p));
    } else if (store_by_tma) {
      clusters::store_accumulators(map_c, total, consumer, staging, row0, col0);
    } else {
      finish_accumulators<EpilogueKind::kStore>(p, total, row0, col0,
                                                columns_paired<EpilogueKind::kStore>(p));
    }
  }
};

// A consumer warpgroup: rows [consumer * 64, consumer * 64 + 64) of every tile of this block, as
// chapter 11's. kPromote: each half of a K tile into `part`, added to the total once done (the
// figure above); otherwise both halves accumulate in the tensor cores across K, as chapter 11's.
// Tiles: what becomes of its tiles (StoreTiles).
template <bool kPromote, class Tiles>
__device__ __forceinline__ void consume(int consumer, const GemmProblem& p, float scale,
                                        const Fp8Epilogue& epilogue, uint32_t ring, uint32_t full,
                                        uint32_t empty, const CUtensorMap& map_c, bool store_by_tma,
                                        uint32_t staging) {
  const int lane = threadIdx.x % 32;
  const int k_tiles = (p.k + kTileK - 1) / kTileK;
  const uint32_t rank = cluster_rank();
  const uint32_t release = cluster_address(empty, lane % kClusterBlocks);
  float total[kAccumulators] = {};
  float part[kPartAccumulators];
  int stage = 0;
  uint32_t phase = 0;
  if (kPromote && consumer == 1) announce_issue(consumer);  // consumer 0 goes first
  for (int pair = blockIdx.x / kClusterBlocks; pair < pair_count(p);
       pair += gridDim.x / kClusterBlocks) {
    int row0, col0;
    tile_origin(p, pair, rank, row0, col0);
    Tiles::start(p, epilogue, row0 + consumer * kWgmmaM, col0);
    int previous = 0;
    for (int t = 0; t < k_tiles; ++t) {
      mbarrier_wait(full + stage * sizeof(uint64_t), phase);
      const uint32_t a = ring + stage * Ring::kStageBytes + consumer * kWarpgroupRowsBytes;
      const uint32_t b = ring + stage * Ring::kStageBytes + Ring::A::kBytes;
      if constexpr (kPromote) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          await_issue(1 - consumer);  // the other's half is queued first
          wgmma_fence();
          multiply_half(part, a, b + h * HalfTile::kBytes, false);
          wgmma_commit();
          announce_issue(consumer);
          wgmma_wait<0>();
#pragma unroll
          for (int i = 0; i < kPartAccumulators; ++i) {
            asm volatile("" : "+f"(part[i])::"memory");  // written by the wgmmas
            total[h * kPartAccumulators + i] += part[i];
          }
        }
        if (lane < kClusterBlocks) mbarrier_arrive_cluster(release + stage * sizeof(uint64_t));
      } else {
        wgmma_fence();
        multiply_half(total, a, b, t > 0);
        multiply_half(total + kPartAccumulators, a, b + HalfTile::kBytes, t > 0);
        wgmma_commit();
        wgmma_wait<1>();  // K tile t - 1's wgmmas are done: its stage goes back
        if (t > 0 && lane < kClusterBlocks) {
          mbarrier_arrive_cluster(release + previous * sizeof(uint64_t));
        }
      }
      previous = stage;
      if (++stage == clusters::kStages) stage = 0, phase ^= 1;
    }
    if constexpr (!kPromote) {
      wgmma_wait<0>();
      if (lane < kClusterBlocks) mbarrier_arrive_cluster(release + previous * sizeof(uint64_t));
    }
    accumulators_settled(total);
#pragma unroll
    for (int i = 0; i < kAccumulators; ++i) total[i] *= scale;
    Tiles::finish(p, total, consumer, row0 + consumer * kWgmmaM, col0, epilogue, map_c,
                  store_by_tma, staging);
#pragma unroll
    for (int i = 0; i < kAccumulators; ++i) total[i] = 0.0f;
  }
  if (kPromote && consumer == 0) await_issue(1);  // consumer 1's last announcement
  if (threadIdx.x % kWarpgroupThreads == 0) bulk_wait_all();
}

#endif  // sm_90a

// Chapter 11's kernel with the FP8 consumer; p is the problem as_halves.
template <bool kPromote, class Tiles>
__global__ void __launch_bounds__(clusters::kThreads, 1)
    fp8_gemm_kernel(const __grid_constant__ CUtensorMap map_a,
                    const __grid_constant__ CUtensorMap map_b,
                    const __grid_constant__ CUtensorMap map_c, bool store_by_tma,
                    const __grid_constant__ GemmProblem p, const float* scale_a,
                    const float* scale_b, const __grid_constant__ Fp8Epilogue epilogue) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ __align__(16) uint8_t smem[];
  const uint32_t ring = ring_start(smem);
  const uint32_t staging = ring + clusters::kStages * Ring::kStageBytes;
  const uint32_t full = staging + clusters::kStagingBytes;
  const uint32_t empty = full + clusters::kStages * sizeof(uint64_t);
  if (threadIdx.x == 0) {
    for (int s = 0; s < clusters::kStages; ++s) {
      mbarrier_init(full + s * sizeof(uint64_t), 1);
      mbarrier_init(empty + s * sizeof(uint64_t), kClusterBlocks * clusters::kConsumerWarps);
    }
    fence_barrier_init();
    fence_proxy_async();
  }
  cluster_sync();
  const int warpgroup = threadIdx.x / kWarpgroupThreads;
  if (warpgroup == 0) {
    setmaxnreg_dec<kProducerRegisters>();
    if (threadIdx.x == 0) clusters::produce<Ring>(map_a, map_b, p, ring, full, empty);
  } else {
    setmaxnreg_inc<kConsumerRegisters>();
    consume<kPromote, Tiles>(
        warpgroup - 1, p, *scale_a * *scale_b, epilogue, ring, full, empty, map_c, store_by_tma,
        staging + (warpgroup - 1) * clusters::kStoreBuffers * clusters::kStoreBoxBytes);
  }
#else
  __trap();  // built without sm_90a: see wgmma.cuh
#endif
}

// The product on Tiles' epilogue, p as it stands (k a multiple of 16, a GPU with sm_90a code).
template <bool kPromote, class Tiles>
void launch_fp8_tiles(const Fp8Problem& fp8, const Fp8Epilogue& epilogue, cudaStream_t stream) {
  GemmProblem p = as_halves(fp8, epilogue.c);
  p.epilogue.bias = epilogue.bias;  // chapter 08's kBiasRelu epilogue
  p.epilogue.out = epilogue.out;
  const TensorMaps<Ring::A, HalfTile> maps(p);
  const bool store_by_tma = epilogue.kind == Fp8EpilogueKind::kStore && stores_by_tma(p);
  const CUtensorMap map_c = store_by_tma ? store_map(p) : CUtensorMap{};
  static const int resident =
      resident_clusters(fp8_gemm_kernel<kPromote, Tiles>, clusters::kSmemBytes<Ring>);
  const int blocks = kClusterBlocks * std::min(pair_count(p), resident);
  const ClusterLaunch cluster_launch(kClusterBlocks, blocks, clusters::kThreads,
                                     clusters::kSmemBytes<Ring>, stream);
  CUDA_CHECK(cudaLaunchKernelEx(&cluster_launch.config, fp8_gemm_kernel<kPromote, Tiles>, maps.a,
                                maps.b, map_c, store_by_tma, p, fp8.scale_a, fp8.scale_b,
                                epilogue));
}

// kStore, and kBiasRelu with the promoted sums; the quantising epilogues are chapter 21's.
template <bool kPromote = true>
void launch_fp8_cluster_gemm(const Fp8Problem& fp8, const Fp8Epilogue& epilogue,
                             cudaStream_t stream) {
  using Kind = Fp8EpilogueKind;
  if (epilogue.kind == Kind::kStore) {
    launch_fp8_tiles<kPromote, StoreTiles<Kind::kStore>>(fp8, epilogue, stream);
  } else if (kPromote && epilogue.kind == Kind::kBiasRelu) {
    launch_fp8_tiles<true, StoreTiles<Kind::kBiasRelu>>(fp8, epilogue, stream);
  } else {
    throw std::invalid_argument("launch_fp8_cluster_gemm: an epilogue this kernel does not have");
  }
}

}  // namespace mnist::fp8_gemm
