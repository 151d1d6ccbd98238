// Hopper's copy engine (TMA) and the barrier it reports to (mbarrier), for chapters 07 on: each
// instruction wrapped once, the tensor maps, and the swizzled tiles it writes in a ring of stages.
//
// TMA. `cp.async.bulk.tensor` copies a whole box of a matrix from global to shared memory: one
// instruction from one thread. The engine computes the addresses from a tensor map made on the
// host, fills what lies outside the matrix with zeros, and counts its bytes on an mbarrier.
//
// mbarrier. A barrier object in shared memory that counts arrivals and, with expect_tx,
// transaction bytes, of its current phase; when both are complete the phase completes and the
// next begins. A waiter names the phase by its parity: a stage used for the k-th time waits for
// phase k, parity k & 1. The arrival releases and the wait acquires, so what the copy wrote is
// visible to the waiters after their wait (PTX ISA, "mbarrier").
//
// The 128-byte swizzle. Readers take 8 rows of 16 bytes at a time, and TMA cannot pad rows as
// chapter 02 did. Every box row is 128 bytes (64 halves: the swizzle span, the most a box row may
// be), eight 16-byte chunks, and chunk c of row r is stored at c ^ (r % 8), so 8 rows of one chunk
// hit 8 different slots (docs/07_tma.md draws it). TMA applies it to address bits, so every tile
// starts on a 1024-byte "swizzle atom" of 8 rows.
#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "cuda_check.cuh"
#include "gemm_interface.cuh"
#include "race_stress.cuh"

namespace mnist::tma {

constexpr int kSwizzleBytes = 128;  // the swizzle span: one row of a box
constexpr int kSwizzleHalves = kSwizzleBytes / int(sizeof(__half));  // 64
constexpr int kSwizzleAtomBytes = 8 * kSwizzleBytes;  // 1024: 8 rows, where the pattern repeats
constexpr int kTileK = kSwizzleHalves;  // K per tile: a K-major box row is one swizzled row

// Where byte `byte` of row `row` of a box of 128-byte rows lies in shared memory, swizzled.
__host__ __device__ constexpr int swizzled(int row, int byte) {
  return row * kSwizzleBytes + ((byte / 16) ^ (row % 8)) * 16 + byte % 16;
}

// One operand's tile in shared memory, kTileMn rows of op(A) (columns of op(B)) by kTileK, as TMA
// boxes. K-major (k contiguous: A: N, B: T): one box, kTileK wide, kTileMn high. MN-major (A: T,
// B: N): kTileMn / 64 boxes one after another along M (N), each 64 halves of M (N) by kTileK.
template <int kTileMn, bool kKMajorLayout>
struct SwizzledTile {
  static constexpr bool kKMajor = kKMajorLayout;
  static constexpr int kBoxInner = kKMajor ? kTileK : kSwizzleHalves;  // the contiguous one
  static constexpr int kBoxOuter = kKMajor ? kTileMn : kTileK;
  static constexpr int kBoxes = kKMajor ? 1 : kTileMn / kSwizzleHalves;
  static constexpr int kBoxBytes = kBoxInner * kBoxOuter * int(sizeof(__half));
  static constexpr int kBytes = kBoxes * kBoxBytes;
  // The byte offset of element (mn, k) of op(X)'s tile: its box, then its stored row, swizzled.
  __host__ __device__ static constexpr int offset(int mn, int k) {
    const int row = kKMajor ? mn : k, col = kKMajor ? k : mn % kSwizzleHalves;
    const int box = kKMajor ? 0 : mn / kSwizzleHalves;
    return box * kBoxBytes + swizzled(row, col * int(sizeof(__half)));
  }
  static_assert(kBoxInner * int(sizeof(__half)) <= kSwizzleBytes && kBoxOuter <= 256,
                "TMA box limits (cuTensorMapEncodeTiled, 128-byte swizzle)");
  static_assert(kBoxBytes % kSwizzleAtomBytes == 0, "every box starts on a swizzle atom");
};

// A block's shared memory: kStages stages, each the A tile (kTileM rows of op(A)) then the B tile
// (kTileN columns of op(B)), then kBarriersPerStage mbarriers per stage.
template <int kTileM, int kTileN, Op kOpA, Op kOpB, int kStages, int kBarriersPerStage>
struct TmaRing {
  using A = SwizzledTile<kTileM, kOpA == Op::N>;
  using B = SwizzledTile<kTileN, kOpB == Op::T>;
  static constexpr int kStageBytes = A::kBytes + B::kBytes;  // also full[s]'s bytes
  // kSwizzleAtomBytes more than the stages and barriers take: room for ring_start's rounding.
  static constexpr int kSmemBytes = kSwizzleAtomBytes + kStages * kStageBytes +
                                    kBarriersPerStage * kStages * int(sizeof(uint64_t));
};

// The instructions below exist from sm_90 on; chapters 07 on build only sm_90a code (meson.build).
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)

__device__ __forceinline__ uint32_t shared_address(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// Where the ring starts: dynamic shared memory (only 16-byte aligned) rounded up to a swizzle atom.
__device__ __forceinline__ uint32_t ring_start(const void* smem) {
  return (shared_address(smem) + kSwizzleAtomBytes - 1) & ~uint32_t(kSwizzleAtomBytes - 1);
}

__device__ __forceinline__ void mbarrier_init(uint32_t barrier, int arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(barrier), "r"(arrivals)
               : "memory");
}

// Orders this thread's ordinary ("generic proxy") shared-memory writes, mbarrier.init's among
// them, before the copy engine's ("async proxy") accesses (PTX ISA, "Memory Consistency Model").
__device__ __forceinline__ void fence_proxy_async() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// Arrives on the barrier and adds `bytes` to the transaction bytes its current phase waits for.
__device__ __forceinline__ void mbarrier_arrive_expect_tx(uint32_t barrier, uint32_t bytes) {
  stress_delay(barrier);
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(barrier), "r"(bytes)
               : "memory");
}

// Returns once the latest phase of parity `parity` has completed (try_wait suspends the thread a
// while before it reports "not yet").
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
  stress_delay(barrier ^ parity);
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

// Starts copying the Tile of an operand whose op(X) tile starts at (mn0, k0) to `destination`,
// box by box; the boxes count their bytes on `barrier`, also where they reach past the matrix.
template <class Tile>
__device__ __forceinline__ void tma_load_tile(const CUtensorMap& map, uint32_t destination, int mn0,
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

#endif  // sm_90a

// cuTensorMapEncodeTiled is a driver function; the runtime hands out its address (no libcuda link).
inline PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
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

// A tensor map of `rows` rows of `row_length` elements from `base`, read or written in boxes of
// box_inner x box_outer with the 128-byte swizzle; loads past its edges read zeros (OOB_FILL_NONE).
inline CUtensorMap encode_tensor_map(void* base, CUtensorMapDataType type, int element_bytes,
                                     int row_length, int rows, int box_inner, int box_outer,
                                     CUtensorMapL2promotion promotion, const std::string& what) {
  CUtensorMap map;
  const cuuint64_t size[2] = {cuuint64_t(row_length), cuuint64_t(rows)};  // innermost first
  const cuuint64_t row_stride[1] = {cuuint64_t(row_length) * element_bytes};
  const cuuint32_t box[2] = {cuuint32_t(box_inner), cuuint32_t(box_outer)};
  const cuuint32_t element_stride[2] = {1, 1};
  const CUresult result = tensor_map_encoder()(
      &map, type, 2, base, size, row_stride, box, element_stride, CU_TENSOR_MAP_INTERLEAVE_NONE,
      CU_TENSOR_MAP_SWIZZLE_128B, promotion, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (result != CUDA_SUCCESS) {
    throw std::runtime_error("cuTensorMapEncodeTiled failed (CUresult " + std::to_string(result) +
                             ") for " + what + ", " + std::to_string(rows) + " x " +
                             std::to_string(row_length));
  }
  return map;
}

// The tensor maps of a problem's operands, each as stored: rows of k (K-major) or of m, n.
template <class ATile, class BTile>
struct TensorMaps {
  CUtensorMap a, b;
  explicit TensorMaps(const GemmProblem& p)
      : a(operand_map<ATile>(p.a, ATile::kKMajor ? p.k : p.m, ATile::kKMajor ? p.m : p.k)),
        b(operand_map<BTile>(p.b, BTile::kKMajor ? p.k : p.n, BTile::kKMajor ? p.n : p.k)) {}
  template <class Tile>
  static CUtensorMap operand_map(const __half* x, int row_length, int rows) {
    return encode_tensor_map(const_cast<__half*>(x), CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
                             int(sizeof(__half)), row_length, rows, Tile::kBoxInner,
                             Tile::kBoxOuter, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, "an operand");
  }
};

}  // namespace mnist::tma
