// Which products the TMA-fed kernels of chapters 07-11 take (docs/07_tma.md explains each rule).
#pragma once

#include "06_fused_step/fused_gemm.cuh"
#include "07_tma/tma.cuh"
#include "gemm_interface.cuh"

namespace mnist::tma {

// K tiles a product needs: a ring of 4 stages should run beyond its prologue. Shorter products are
// mostly their epilogue, which chapter 06's kernel, at two blocks per SM, spreads over more warps.
constexpr int kMinKTiles = 4;

// (1) TMA can read both operands (chapter 04's condition for 16-byte copies); (2) K is at least
// kMinKTiles tiles; (3) chapter 06 would not split K: these kernels have no split-K.
template <Op kOpA, Op kOpB, EpilogueKind kKind>
bool tma_kernel_takes(const GemmProblem& p) {
  return p.k >= kMinKTiles * kTileK && smem_tiling::vectorizable(p.a, kOpA == Op::N ? p.k : p.m) &&
         smem_tiling::vectorizable(p.b, kOpB == Op::N ? p.n : p.k) &&
         fused_step::split_of<kOpA, kOpB, kKind>(p).splits == 1;
}

// launch_gemm of chapters 07-11: launch(op_a, op_b, kind) with the problem's layouts and epilogue
// as std::integral_constants where tma_kernel_takes the product, chapter 06's kernel elsewhere.
template <class Launch>
void launch_or_fall_back(const GemmProblem& p, cudaStream_t stream, Launch&& launch) {
  with_epilogue_kind(p.epilogue.kind, [&](auto kind) {
    with_operand_ops(p, [&](auto op_a, auto op_b) {
      constexpr Op kOpA = decltype(op_a)::value, kOpB = decltype(op_b)::value;
      constexpr EpilogueKind kKind = decltype(kind)::value;
      if (tma_kernel_takes<kOpA, kOpB, kKind>(p)) {
        launch(op_a, op_b, kind);
      } else {
        fused_step::launch<kOpA, kOpB, kKind>(p, stream);
      }
    });
  });
}

}  // namespace mnist::tma
