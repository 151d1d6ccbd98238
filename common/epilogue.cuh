// The epilogues of gemm_interface.cuh, one element at a time. Chapters from 06 on call
// epilogue_input() and finish_element() where they used to store C; for the chapters before,
// gemm() stores C and then runs apply_epilogue(), a separate pass over C that calls the same two.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "gemm_interface.cuh"

namespace mnist {

// What the epilogue reads for element (row, col) besides v: bias[col], the activation or the
// master weight (0 for kStore, which reads nothing). A kernel that finishes many elements per
// thread loads these for a group of elements first and then finishes the group: a load written
// after another element's store cannot be moved ahead of it (the compiler cannot prove that the
// addresses differ), so finishing one element at a time costs one memory round trip per element,
// 64 of them in a row for a thread of chapter 06's kernel.
__device__ __forceinline__ float epilogue_input(const GemmProblem& p, int row, int col) {
  const size_t i = static_cast<size_t>(row) * p.n + col;
  const Epilogue& e = p.epilogue;
  switch (e.kind) {
    case EpilogueKind::kBias:
    case EpilogueKind::kBiasRelu:
      return e.bias[col];
    case EpilogueKind::kReluGrad:
      return __half2float(e.activation[i]);
    case EpilogueKind::kSgd:
      return e.master[i];
    default:
      return 0.0f;
  }
}

// Element (row, col) of the product is v, and `input` is epilogue_input(p, row, col): applies
// p.epilogue. One kind per launch, so the switch takes the same branch in every thread.
__device__ __forceinline__ void finish_element(const GemmProblem& p, int row, int col, float v,
                                               float input) {
  const size_t i = static_cast<size_t>(row) * p.n + col;
  const Epilogue& e = p.epilogue;
  switch (e.kind) {
    case EpilogueKind::kStore:
      p.c[i] = v;
      break;
    case EpilogueKind::kBias:
      p.c[i] = v + input;
      break;
    case EpilogueKind::kBiasRelu:
      e.out[i] = __float2half_rn(fmaxf(v + input, 0.0f));
      break;
    case EpilogueKind::kReluGrad:
      e.out[i] = __float2half_rn(input > 0.0f ? v : 0.0f);
      break;
    case EpilogueKind::kSgd: {
      const float updated = input - e.learning_rate * v;
      e.master[i] = updated;
      e.out[i] = __float2half_rn(updated);
      break;
    }
  }
}

// p.epilogue applied to every element of p.c, which holds the product.
void apply_epilogue(const GemmProblem& p, cudaStream_t stream);

}  // namespace mnist
