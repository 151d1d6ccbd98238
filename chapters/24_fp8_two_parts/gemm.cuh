// Chapter 24: chapter 23's step with the batch-sized products' promotion overlapped by their next
// K tile's wgmmas (fp8_two_parts.cuh): two parts a consumer instead of chapter 22's turns.
//
// When: fp8_steps_refusal() (common/fp8_step.cuh), as chapter 20.
#pragma once

#include "23_fp8_weight_update/gemm.cuh"
#include "24_fp8_two_parts/fp8_two_parts.cuh"
#include "fp8_interface.cuh"
#include "fp8_step.cuh"
#include "gemm_interface.cuh"
#include "step_interface.cuh"

namespace mnist::fp8_two_parts {

constexpr bool kFusedEpilogue = true;
constexpr bool kReplayStepAsGraph = true;
constexpr bool kNeedsSm90a = true;

using fp8_swap_ab::launch_gemm;  // the fp16 products (the output layer's), as chapter 22 runs them

// The batch-sized products here; the weight updates and every other product as chapter 23 runs
// them.
inline void launch_fp8_gemm(const Fp8Problem& p, const Fp8Epilogue& epilogue, cudaStream_t stream) {
  if (epilogue.kind != Fp8EpilogueKind::kUpdate && p.m <= swap_ab::kMaxBatch) {
    launch_fp8_two_parts(p, epilogue, stream);
  } else {
    fp8_weight_update::launch_fp8_gemm(p, epilogue, stream);
  }
}

constexpr StepTraining kStepTraining =
    fp8_step_training<launch_fp8_gemm, Fp8Epilogues::kFused, fp8_steps_refusal>();

}  // namespace mnist::fp8_two_parts
