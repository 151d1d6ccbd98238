// The epilogues of gemm_interface.cuh, one element at a time. Chapters from 06 on call
// epilogue_input() and finish_element() where they used to store C; for the chapters before,
// gemm() stores C and then runs apply_epilogue(), a separate pass over C that calls the same two.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <type_traits>

#include "gemm_interface.cuh"

namespace mnist {

// The epilogue kind is a template parameter: each (layout, kind) gets its own kernel, whose
// store is exactly that epilogue. With the kind read at run time, every one of a thread's 64
// elements carried the code of all five kinds: chapter 06's kernel grew from 19 KB of machine code
// to 145 KB, more than the SM's instruction caches hold, and ran 2-7x slower than chapter 05's
// (docs/06_fused_step.md).

// What the epilogue reads for element (row, col) besides v: bias[col], the activation or the
// master weight (nothing for kStore). A kernel that finishes many elements per thread loads these
// for a group of elements first and then finishes the group: a load written after another
// element's store cannot be moved ahead of it (the compiler cannot prove that the addresses
// differ), so one element at a time would cost a memory round trip per element.
template <EpilogueKind kKind>
__device__ __forceinline__ float epilogue_input(const GemmProblem& p, int row, int col) {
  const size_t i = static_cast<size_t>(row) * p.n + col;
  if constexpr (kKind == EpilogueKind::kBias || kKind == EpilogueKind::kBiasRelu) {
    return p.epilogue.bias[col];
  } else if constexpr (kKind == EpilogueKind::kReluGrad) {
    return __half2float(p.epilogue.activation[i]);
  } else if constexpr (kKind == EpilogueKind::kSgd) {
    return p.epilogue.master[i];
  } else {
    return 0.0f;
  }
}

// Element (row, col) of the product is v, and `input` is epilogue_input(p, row, col).
template <EpilogueKind kKind>
__device__ __forceinline__ void finish_element(const GemmProblem& p, int row, int col, float v,
                                               float input) {
  const size_t i = static_cast<size_t>(row) * p.n + col;
  const Epilogue& e = p.epilogue;
  if constexpr (kKind == EpilogueKind::kStore) {
    p.c[i] = v;
  } else if constexpr (kKind == EpilogueKind::kBias) {
    p.c[i] = v + input;
  } else if constexpr (kKind == EpilogueKind::kBiasRelu) {
    e.out[i] = __float2half_rn(fmaxf(v + input, 0.0f));
  } else if constexpr (kKind == EpilogueKind::kReluGrad) {
    e.out[i] = __float2half_rn(input > 0.0f ? v : 0.0f);
  } else {
    const float updated = input - e.learning_rate * v;
    e.master[i] = updated;
    e.out[i] = __float2half_rn(updated);
  }
}

// Calls f(std::integral_constant<EpilogueKind, kind>{}): how a launcher picks the kernel of the
// problem's epilogue kind, known only at run time, among the compiled ones.
template <class F>
void with_epilogue_kind(EpilogueKind kind, F&& f) {
  using K = EpilogueKind;
  switch (kind) {
    case K::kStore:
      return f(std::integral_constant<K, K::kStore>{});
    case K::kBias:
      return f(std::integral_constant<K, K::kBias>{});
    case K::kBiasRelu:
      return f(std::integral_constant<K, K::kBiasRelu>{});
    case K::kReluGrad:
      return f(std::integral_constant<K, K::kReluGrad>{});
    case K::kSgd:
      return f(std::integral_constant<K, K::kSgd>{});
  }
}

// p.epilogue applied to every element of p.c, which holds the product.
void apply_epilogue(const GemmProblem& p, cudaStream_t stream);

}  // namespace mnist
