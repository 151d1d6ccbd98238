// The epilogues of gemm_interface.cuh, one element at a time. Chapters from 06 on call
// epilogue_input() and finish_element() where they used to store C; for the chapters before,
// gemm() stores C and then runs apply_epilogue(), a separate pass over C that calls the same two.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
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

// Two neighbours in a row: the mma fragments of chapters 03-08 give each thread the columns
// (col, col + 1), col even, and a warp's 4 threads of a row 8 neighbouring columns. Stored one at a
// time, 4-byte floats 8 bytes apart and 2-byte halves 4 bytes apart, a warp's store fills each
// 32-byte memory sector half (floats) or a quarter (halves) and writes it 2 or 4 times; as pairs,
// once. A pair is one 8-byte (float2) or 4-byte (half2) access, so every matrix the epilogue
// touches must hold pairs at even element indices on those boundaries: columns_paired() says
// whether it does (an even n then also puts col + 1 inside the row whenever col is).
template <EpilogueKind kKind>
__host__ __device__ inline bool columns_paired(const GemmProblem& p) {
  const auto aligned = [](const void* x, size_t bytes) {
    return reinterpret_cast<uintptr_t>(x) % bytes == 0;
  };
  const Epilogue& e = p.epilogue;
  if (p.n % 2 != 0) return false;
  if constexpr (kKind == EpilogueKind::kStore) {
    return aligned(p.c, sizeof(float2));
  } else if constexpr (kKind == EpilogueKind::kBias) {
    return aligned(p.c, sizeof(float2)) && aligned(e.bias, sizeof(float2));
  } else if constexpr (kKind == EpilogueKind::kBiasRelu) {
    return aligned(e.bias, sizeof(float2)) && aligned(e.out, sizeof(__half2));
  } else if constexpr (kKind == EpilogueKind::kReluGrad) {
    return aligned(e.activation, sizeof(__half2)) && aligned(e.out, sizeof(__half2));
  } else {
    return aligned(e.master, sizeof(float2)) && aligned(e.out, sizeof(__half2));
  }
}

// epilogue_input for (row, col) and, where col + 1 < n, (row, col + 1); col even. `paired`:
// columns_paired(p), which makes it one access.
template <EpilogueKind kKind>
__device__ __forceinline__ float2 epilogue_input_pair(const GemmProblem& p, int row, int col,
                                                      bool paired) {
  if (!paired) {
    return {epilogue_input<kKind>(p, row, col),
            col + 1 < p.n ? epilogue_input<kKind>(p, row, col + 1) : 0.0f};
  }
  const size_t i = static_cast<size_t>(row) * p.n + col;
  if constexpr (kKind == EpilogueKind::kBias || kKind == EpilogueKind::kBiasRelu) {
    return *reinterpret_cast<const float2*>(p.epilogue.bias + col);
  } else if constexpr (kKind == EpilogueKind::kReluGrad) {
    return __half22float2(*reinterpret_cast<const __half2*>(p.epilogue.activation + i));
  } else if constexpr (kKind == EpilogueKind::kSgd) {
    return *reinterpret_cast<const float2*>(p.epilogue.master + i);
  } else {
    return {0.0f, 0.0f};
  }
}

// finish_element for (row, col) and, where col + 1 < n, (row, col + 1); col even. `input`:
// epilogue_input_pair(p, row, col, paired).
template <EpilogueKind kKind>
__device__ __forceinline__ void finish_pair(const GemmProblem& p, int row, int col, float2 v,
                                            float2 input, bool paired) {
  if (!paired) {
    finish_element<kKind>(p, row, col, v.x, input.x);
    if (col + 1 < p.n) finish_element<kKind>(p, row, col + 1, v.y, input.y);
    return;
  }
  const size_t i = static_cast<size_t>(row) * p.n + col;
  const Epilogue& e = p.epilogue;
  if constexpr (kKind == EpilogueKind::kStore) {
    *reinterpret_cast<float2*>(p.c + i) = v;
  } else if constexpr (kKind == EpilogueKind::kBias) {
    *reinterpret_cast<float2*>(p.c + i) = make_float2(v.x + input.x, v.y + input.y);
  } else if constexpr (kKind == EpilogueKind::kBiasRelu) {
    *reinterpret_cast<__half2*>(e.out + i) =
        __floats2half2_rn(fmaxf(v.x + input.x, 0.0f), fmaxf(v.y + input.y, 0.0f));
  } else if constexpr (kKind == EpilogueKind::kReluGrad) {
    *reinterpret_cast<__half2*>(e.out + i) =
        __floats2half2_rn(input.x > 0.0f ? v.x : 0.0f, input.y > 0.0f ? v.y : 0.0f);
  } else {
    const float2 updated =
        make_float2(input.x - e.learning_rate * v.x, input.y - e.learning_rate * v.y);
    *reinterpret_cast<float2*>(e.master + i) = updated;
    *reinterpret_cast<__half2*>(e.out + i) = __floats2half2_rn(updated.x, updated.y);
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
