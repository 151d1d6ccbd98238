// The epilogues of gemm_interface.cuh, one element at a time. Chapters from 06 on call
// finish_element() where they used to store C; for the chapters before, gemm() stores C and then
// runs apply_epilogue(), a separate pass over C that calls the same function.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "gemm_interface.cuh"

namespace mnist {

// Element (row, col) of the product is v: apply p.epilogue to it. One kind per launch, so the
// switch takes the same branch in every thread.
__device__ __forceinline__ void finish_element(const GemmProblem& p, int row, int col, float v) {
  const size_t i = static_cast<size_t>(row) * p.n + col;
  const Epilogue& e = p.epilogue;
  switch (e.kind) {
    case EpilogueKind::kStore:
      p.c[i] = v;
      break;
    case EpilogueKind::kBias:
      p.c[i] = v + e.bias[col];
      break;
    case EpilogueKind::kBiasRelu:
      e.out[i] = __float2half_rn(fmaxf(v + e.bias[col], 0.0f));
      break;
    case EpilogueKind::kReluGrad:
      e.out[i] = __float2half_rn(__half2float(e.activation[i]) > 0.0f ? v : 0.0f);
      break;
    case EpilogueKind::kSgd: {
      const float updated = e.master[i] - e.learning_rate * v;
      e.master[i] = updated;
      e.out[i] = __float2half_rn(updated);
      break;
    }
  }
}

// p.epilogue applied to every element of p.c, which holds the product.
void apply_epilogue(const GemmProblem& p, cudaStream_t stream);

}  // namespace mnist
