// Chapter 21: chapter 20's FP8 step with the quantisation fused into the products' epilogues.
// Where chapter 20's kernel stores fp32 C and a kernel of the step reads it back to write the
// next tensor's fp8 copies, here the epilogue writes them from the registers, and the weight
// gradient's product updates the weights (fused_epilogue.cuh): C never reaches memory.
//
// When: fp8_steps_refusal() (common/fp8_step.cuh), as chapter 20.
#pragma once

#include "14_weight_update/weight_update.cuh"
#include "21_fp8_fused_epilogue/fused_epilogue.cuh"
#include "fp8_interface.cuh"
#include "fp8_step.cuh"
#include "gemm_interface.cuh"
#include "step_interface.cuh"

namespace mnist::fp8_fused_epilogue {

constexpr bool kFusedEpilogue = true;
constexpr bool kReplayStepAsGraph = true;
constexpr bool kNeedsSm90a = true;

inline void launch_gemm(const GemmProblem& p, cudaStream_t stream) {
  weight_update::launch_weight_update_or_fall_back(p, stream);
}

constexpr StepTraining kStepTraining =
    fp8_step_training<launch_fp8_fused_gemm, Fp8Epilogues::kFused, fp8_steps_refusal>();

}  // namespace mnist::fp8_fused_epilogue
