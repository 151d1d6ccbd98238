// Hopper's own tensor-core instruction, introduced by chapter 08 and included by every later
// chapter: `wgmma.mma_async` and its fences and waits, each wrapped once, the matrix descriptor it
// reads shared memory through, and the epilogue of its accumulators.
//
// wgmma. A warpgroup (4 consecutive warps, 128 threads) multiplies a 64 x N x 16 tile, N up to
// 256, in one instruction. A and B come straight from shared memory, described by 64-bit matrix
// descriptors: no ldmatrix, no operand registers. The accumulators stay in registers (N / 2
// floats per thread). The instruction is asynchronous: the warpgroup issues it and goes on.
//   wgmma.fence              orders the warpgroup's earlier ordinary accesses to the accumulator
//                            registers (the previous tile's epilogue reading them) before wgmma
//                            writes them (PTX ISA, "wgmma.fence"); needed before the first wgmma
//                            of a tile, issued before every K tile to keep the loop uniform.
//   wgmma.commit_group       closes this thread's group of the wgmmas issued since the last one.
//   wgmma.wait_group N       returns when at most the N newest committed groups are still
//                            pending: only then are a wgmma's reads of shared memory and writes
//                            of registers done.
//
// Layouts: the transpose flags. wgmma reads each operand as K-major or, for 16-bit types,
// MN-major, chosen by its imm-trans-a / imm-trans-b operands (PTX ISA, "Shared Memory Matrix
// Layout"), so TMA copies every tile exactly as it is stored, as chapter 07's ldmatrix.trans did:
//   A: N  K-major   trans-a 0  one box 64 (k) x 128 (m)
//   A: T  MN-major  trans-a 1  boxes 64 (m) x 64 (k), along m
//   B: T  K-major   trans-b 0  one box 64 (k) x 256 (n)
//   B: N  MN-major  trans-b 1  boxes 64 (n) x 64 (k), along n
//
// The matrix descriptor (PTX ISA, "Matrix Descriptor Format"), addresses and offsets in 16-byte
// units: bits 0-13 the start address, 16-29 the leading dimension byte offset (LBO), 32-45 the
// stride dimension byte offset (SBO), 49-51 the base offset, 62-63 the swizzle mode. With the
// 128-byte swizzle of chapter 07's tma.cuh (PTX ISA, "Strides"):
//   K-major   SBO = 1024, from 8 rows of M (or N) to the next 8. LBO is not used (it encodes as the
//             1 the PTX ISA assumes): the 16 halves of K of one instruction lie within one
//             128-byte row. K step kk starts 32 kk bytes further, inside the rows; the swizzle,
//             applied to the final address, still finds each chunk.
//   MN-major  SBO = 1024, from 8 rows of K to the next 8. LBO = 8192, from one box of 64 along M
//             (or N) to the next. K step kk starts 16 rows of K = 2048 kk bytes further.
//
// The accumulators (PTX ISA, "Matrix Fragments for wgmma.mma_async.m64nNk16"): in warp w of the
// warpgroup, lane l holds in d[4 i + 2 h + j] row 16 w + l / 4 + 8 h and column
// 8 i + 2 (l % 4) + j of the 64 x N product: chapter 03's m16n8 fragment, once per 8 columns, each
// warp 16 rows.
//
// wgmma and setmaxnreg (chapter 09) belong to the sm_90a feature set, compiled only for -gencode
// arch=compute_90a,code=sm_90a (meson.build's choice for an H100). Built for any other target the
// kernels' bodies are a trap; gemm() never launches them there (kNeedsSm90a: common/chapter.cu
// asks the GPU what its code was compiled for), and the trap is there should anything else try.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "07_tma/tma.cuh"
#include "epilogue.cuh"

namespace mnist::wgmma {

using namespace tma;

constexpr int kWgmmaM = 64;  // the shape of one wgmma.mma_async.m64n256k16
constexpr int kWgmmaN = 256;
constexpr int kWgmmaK = 16;
constexpr int kWarpgroupThreads = 128;
constexpr int kAccumulators = kWgmmaM * kWgmmaN / kWarpgroupThreads;  // 128 floats per thread
// 8-column blocks whose epilogue inputs are loaded together: 16 inputs, as in chapter 06 (with
// 32, they and the 128 accumulators no longer fit in the registers).
constexpr int kEpilogueGroup = 8;

// One warpgroup's 64 rows of an operand tile: contiguous in both layouts (rows 0-63 of the K-major
// box, or the first box of the MN-major ones), and a whole number of swizzle atoms.
constexpr int kWarpgroupRowsBytes = kWgmmaM * kTileK * int(sizeof(__half));
static_assert(kWarpgroupRowsBytes % kSwizzleAtomBytes == 0, "each warpgroup's rows on an atom");

// The descriptor's leading byte offset and the step of 16 halves of K, for a SwizzledTile (see
// above).
template <class Tile>
constexpr uint32_t leading_bytes() {
  return Tile::kKMajor ? 16 : Tile::kBoxBytes;
}
template <class Tile>
constexpr uint32_t k_step_bytes() {
  return Tile::kKMajor ? kWgmmaK * sizeof(__half) : kWgmmaK * kSwizzleBytes;
}

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)

// The descriptor of the Tile at shared `address` (see the top of the file): 128-byte swizzle,
// base offset 0.
template <class Tile>
__device__ __forceinline__ uint64_t matrix_descriptor(uint32_t address) {
  constexpr uint64_t kSwizzle128B = 1;
  return uint64_t((address & 0x3FFFF) >> 4) | uint64_t(leading_bytes<Tile>() >> 4) << 16 |
         uint64_t(kSwizzleAtomBytes >> 4) << 32 | kSwizzle128B << 62;
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

// The warpgroup's wgmmas for one K tile of the stage whose A rows start at `a` and B tile at `b`
// (shared addresses): kTileK / 16 steps into the accumulators, committed as one group.
// `accumulate` false: the first step overwrites the accumulators, no zeroing needed.
template <class ATile, class BTile>
__device__ __forceinline__ void multiply_k_tile(float (&acc)[kAccumulators], uint32_t a, uint32_t b,
                                                bool accumulate) {
  wgmma_fence();
#pragma unroll
  for (int k = 0; k < kTileK / kWgmmaK; ++k) {
    wgmma_m64n256k16<!ATile::kKMajor, !BTile::kKMajor>(
        acc, matrix_descriptor<ATile>(a + k * k_step_bytes<ATile>()),
        matrix_descriptor<BTile>(b + k * k_step_bytes<BTile>()), accumulate || k > 0);
  }
  wgmma_commit();
}

// The warpgroup's 64 x 256 accumulators, whose first element is (row0, col0) of C, through the
// epilogue (common/epilogue.cuh), with the layout at the top of the file. As in chapter 06, the
// epilogue's inputs are loaded for a group of elements before any of the group's stores (see
// epilogue_input), here the column pairs of one row in kEpilogueGroup consecutive 8-column
// blocks, and each pair goes as one access where it can (see finish_pair).
template <EpilogueKind kKind>
__device__ __forceinline__ void finish_accumulators(const GemmProblem& p,
                                                    const float (&acc)[kAccumulators], int row0,
                                                    int col0, bool paired) {
  const int warp = threadIdx.x / 32 % 4, lane = threadIdx.x % 32;  // warp within the warpgroup
  const int col = col0 + lane % 4 * 2;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int row = row0 + warp * 16 + lane / 4 + 8 * h;
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

#endif  // sm_90a

}  // namespace mnist::wgmma
