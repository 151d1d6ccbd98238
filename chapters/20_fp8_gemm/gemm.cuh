// Chapter 20: the hidden layers' products in FP8. Each hidden layer multiplies e4m3 copies of its
// input, weights and output gradient, each quantised at a scale of its own that follows the
// tensor's recent absolute maxima (delayed scaling: common/fp8_step.cuh, the FP8 chapters'
// trainer), on Hopper's FP8 tensor cores at twice the fp16 rate: chapter 11's kernel with e4m3
// wgmmas whose sums are promoted to fp32 every K tile (fp8_gemm.cuh). The kernel stores fp32 C; a
// kernel of the step's quantises it into the next tensor's fp8 copies, or updates the weights
// from it (Fp8Epilogues::kSeparate). The masters stay fp32, the SGD the same; the 10-wide output
// layer and evaluation stay fp16.
//
// When: fp8_steps_refusal() (common/fp8_step.cuh). Chapter 14's fp16 GEMMs train the other
// models, a step at a time, and evaluate every model.
#pragma once

#include "14_weight_update/weight_update.cuh"
#include "20_fp8_gemm/fp8_gemm.cuh"
#include "fp8_interface.cuh"
#include "fp8_step.cuh"
#include "gemm_interface.cuh"
#include "step_interface.cuh"

namespace mnist::fp8_gemm {

constexpr bool kFusedEpilogue = true;
constexpr bool kReplayStepAsGraph = true;
constexpr bool kNeedsSm90a = true;

inline void launch_gemm(const GemmProblem& p, cudaStream_t stream) {
  weight_update::launch_weight_update_or_fall_back(p, stream);
}

// Every FP8 product on the 128 x 256 tiles of chapter 11's clusters.
inline void launch_fp8_gemm(const Fp8Problem& p, const Fp8Epilogue& epilogue, cudaStream_t stream) {
  launch_fp8_cluster_gemm<true>(p, epilogue, stream);
}

constexpr StepTraining kStepTraining =
    fp8_step_training<launch_fp8_gemm, Fp8Epilogues::kSeparate, fp8_steps_refusal>();

}  // namespace mnist::fp8_gemm
