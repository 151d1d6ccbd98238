// Hopper's copy engine (TMA) and the barrier it reports to (mbarrier), introduced by chapter 07
// and included by chapters 08 and 09: each instruction wrapped once, the host side that describes a
// matrix to the copy engine, and the layout of an operand's tile as the copy engine writes it.
//
// TMA. `cp.async.bulk.tensor` copies a whole box of a matrix (here up to 256 x 64 halves) from
// global to shared memory: one instruction from one thread, where chapter 04 needed 256 threads
// issuing 16 bytes each. The copy engine computes the addresses from a "tensor map" made on the
// host (cuTensorMapEncodeTiled: the matrix's base, sizes and row stride, the box shape), fills
// what lies outside the matrix with zeros, and lays the box out for conflict-free reads (the
// swizzle below). It reports completion as a count of bytes to an mbarrier in shared memory.
//
// mbarrier (PTX ISA, "Parallel Synchronization and Communication Instructions: mbarrier"). A
// barrier object in shared memory that counts arrivals and, with expect_tx, transaction bytes, of
// its current phase; when both are complete the phase completes and the next one begins. A waiter
// names the phase it waits for by its parity: `mbarrier.try_wait.parity P` returns once the
// latest phase of parity P has completed. A stage of a ring used for the k-th time waits for phase
// k, parity k & 1. The arrival releases and the wait acquires, so what the copy wrote is visible
// to the waiters after their wait.
//
// The 128-byte swizzle. wgmma reads 8 rows of 16 bytes at a time, like ldmatrix, and TMA cannot
// pad rows as chapter 02 did; instead both sides agree on a permutation. Every row of a box is
// 128 bytes (64 halves: a box's inner size is limited to the swizzle span, which is why K steps
// by 64 and why MN-major tiles come in boxes 64 wide), eight 16-byte chunks, and chunk c of row r
// is stored at position c ^ (r % 8): the 8 rows of a 1024-byte "swizzle atom" spread every chunk
// column over all 32 banks.
//
//   row 0:  c0 c1 c2 c3 c4 c5 c6 c7        TMA writes this (CU_TENSOR_MAP_SWIZZLE_128B) and wgmma
//   row 1:  c1 c0 c3 c2 c5 c4 c7 c6        reads it (descriptor swizzle mode 1); both apply it to
//   row 2:  c2 c3 c0 c1 c6 c7 c4 c5        address bits (chunk bits 4-6 XOR row bits 7-9), so
//   ...                                    every stage starts 1024-byte aligned.
//   row 7:  c7 c6 c5 c4 c3 c2 c1 c0
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

namespace mnist::wgmma {

constexpr int kSwizzleBytes = 128;  // the swizzle span: one row of a box
constexpr int kSwizzleHalves = kSwizzleBytes / int(sizeof(__half));  // 64
constexpr int kSwizzleAtomBytes = 8 * kSwizzleBytes;  // 1024: 8 rows, where the pattern repeats
constexpr int kTileK = kSwizzleHalves;  // K per tile: a K-major box row is one swizzled row

// One operand's tile in shared memory: kTileMn rows of op(A) (or columns of op(B)) by kTileK, as
// TMA boxes. K-major (k contiguous: A: N, B: T): one box, kTileK halves wide and kTileMn high.
// MN-major (A: T, B: N): kTileMn / 64 boxes, 64 halves of M (N) wide and kTileK high, one after
// another along M (N). kKStep halves of K further is kKStepBytes further (how wgmma.cuh steps
// through the tile); kLeadingBytes and kStrideBytes are the matrix descriptor's two offsets
// (wgmma.cuh explains them).
template <int kTileMn, bool kKMajorLayout, int kKStep>
struct SmemTile {
  static constexpr bool kKMajor = kKMajorLayout;
  static constexpr int kBoxInner = kKMajor ? kTileK : kSwizzleHalves;  // the contiguous one
  static constexpr int kBoxOuter = kKMajor ? kTileMn : kTileK;
  static constexpr int kBoxes = kKMajor ? 1 : kTileMn / kSwizzleHalves;
  static constexpr int kBoxBytes = kBoxInner * kBoxOuter * int(sizeof(__half));
  static constexpr int kBytes = kBoxes * kBoxBytes;
  static constexpr uint32_t kLeadingBytes = kKMajor ? 16 : kBoxBytes;
  static constexpr uint32_t kStrideBytes = kSwizzleAtomBytes;
  static constexpr uint32_t kKStepBytes =
      kKMajor ? kKStep * sizeof(__half) : kKStep * kSwizzleBytes;
  static_assert(kBoxInner * int(sizeof(__half)) <= kSwizzleBytes && kBoxOuter <= 256,
                "TMA box limits (cuTensorMapEncodeTiled, 128-byte swizzle)");
  static_assert(kBoxBytes % kSwizzleAtomBytes == 0, "every box starts on a swizzle atom");
};

// The instructions below exist from sm_90 on; chapters 07 and 08 compile their device code only
// for the sm_90a feature set (wgmma.cuh says why).
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)

__device__ __forceinline__ uint32_t shared_address(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// The shared address of a ring of swizzled boxes in dynamic shared memory `smem`: rounded up to a
// swizzle atom, since dynamic shared memory starts only 16-byte aligned (Ring::kSmemBytes in
// wgmma.cuh reserves the room).
__device__ __forceinline__ uint32_t ring_start(const void* smem) {
  return (shared_address(smem) + kSwizzleAtomBytes - 1) & ~uint32_t(kSwizzleAtomBytes - 1);
}

__device__ __forceinline__ void mbarrier_init(uint32_t barrier, int arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(barrier), "r"(arrivals)
               : "memory");
}

// Makes the barriers' initialisation visible to the copy engine. The copy engine works in the
// "async proxy", a path to memory of its own, and ordinary stores (the "generic proxy", which
// mbarrier.init writes through) are not ordered with it: without this fence its first complete_tx
// could meet a barrier it does not yet see initialised (PTX ISA, "Memory Consistency Model":
// proxies).
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

// Starts copying the Tile of an operand whose op(X) tile starts at (mn0, k0) to `destination`,
// box by box; the boxes count their bytes on `barrier`, also where they reach past the matrix.
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

#endif  // sm_90a

// cuTensorMapEncodeTiled is a driver function; the runtime hands out its address, so that the
// build needs no link against libcuda.
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

// A tensor map of `rows` rows of `row_length` elements of `element_bytes` each, from `base`, read
// or written in boxes of box_inner x box_outer elements with the 128-byte swizzle; `what` names
// the matrix in the error.
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

// The tensor map for Tile's boxes of an operand stored as `rows` rows of `row_length` halves.
// Outside the matrix the copies read zeros (CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE).
template <class Tile>
CUtensorMap make_tensor_map(const __half* x, int row_length, int rows) {
  return encode_tensor_map(const_cast<__half*>(x), CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
                           int(sizeof(__half)), row_length, rows, Tile::kBoxInner, Tile::kBoxOuter,
                           CU_TENSOR_MAP_L2_PROMOTION_L2_256B, "an operand");
}

// The tensor maps of a problem's two operands, each as stored: rows of k (K-major) or of m or n
// (MN-major).
template <class ATile, class BTile>
struct TensorMaps {
  CUtensorMap a, b;
  explicit TensorMaps(const GemmProblem& p)
      : a(ATile::kKMajor ? make_tensor_map<ATile>(p.a, p.k, p.m)
                         : make_tensor_map<ATile>(p.a, p.m, p.k)),
        b(BTile::kKMajor ? make_tensor_map<BTile>(p.b, p.k, p.n)
                         : make_tensor_map<BTile>(p.b, p.n, p.k)) {}
};

}  // namespace mnist::wgmma
