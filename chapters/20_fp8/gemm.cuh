// Chapter 20: the hidden layers' products in FP8. Each hidden layer multiplies e4m3 copies of its
// input, weights and output gradient, each quantised at a scale of its own that follows the
// tensor's recent absolute maxima (delayed scaling), on Hopper's FP8 tensor cores at twice the
// fp16 rate (fp8_gemm.cuh, fp8_swap_ab.cuh); the kernels that produce a tensor write its fp8
// copies and its amax (fp8_step.cuh). The masters stay fp32, the SGD the same; the 10-wide output
// layer and evaluation stay fp16.
//
// When: fp8_steps_refusal() (fp8_step.cuh). Chapter 14's fp16 GEMMs train the other models, a
// step at a time, and evaluate every model.
#pragma once

#include "14_weight_update/weight_update.cuh"
#include "20_fp8/fp8_step.cuh"
#include "gemm_interface.cuh"
#include "step_interface.cuh"

namespace mnist::fp8 {

constexpr bool kFusedEpilogue = true;
constexpr bool kReplayStepAsGraph = true;
constexpr bool kNeedsSm90a = true;

inline void launch_gemm(const GemmProblem& p, cudaStream_t stream) {
  weight_update::launch_weight_update_or_fall_back(p, stream);
}

constexpr StepTraining kStepTraining = {fp8_steps_refusal,     fp8_train_steps, 0, fp8_model_bytes,
                                        fp8_prepare,           fp8_before_evaluation,
                                        /*fp8_products=*/true};

}  // namespace mnist::fp8
