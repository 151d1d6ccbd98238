// Chapter 20: the hidden layers' products in FP8. Each hidden layer multiplies e4m3 copies of its
// input, weights and output gradient, each quantised at a scale of its own that follows the
// tensor's recent absolute maxima (delayed scaling, common/fp8_step.cuh), on Hopper's FP8 tensor
// cores at twice the fp16 rate: chapter 11's kernel for the weight gradients, whose epilogue
// updates the weights (fp8_gemm.cuh), chapter 12's swap-AB tiles for the batch-sized products,
// whose epilogue writes the next tensor's fp8 copies (fp8_swap_ab.cuh). The masters stay fp32, the
// SGD the same; the 10-wide output layer and evaluation stay fp16.
//
// When: fp8_refusal() below. Chapter 14's fp16 GEMMs train the other models, a step at a time,
// and evaluate every model.
#pragma once

#include <string>

#include "14_weight_update/weight_update.cuh"
#include "20_fp8/fp8_gemm.cuh"
#include "20_fp8/fp8_swap_ab.cuh"
#include "fp8_interface.cuh"
#include "fp8_step.cuh"
#include "gemm_interface.cuh"
#include "step_interface.cuh"

namespace mnist::fp8 {

constexpr bool kFusedEpilogue = true;
constexpr bool kReplayStepAsGraph = true;
constexpr bool kNeedsSm90a = true;

inline void launch_gemm(const GemmProblem& p, cudaStream_t stream) {
  weight_update::launch_weight_update_or_fall_back(p, stream);
}

// The weight gradients on chapter 11's tiles, the batch-sized products on chapter 12's.
inline void launch_fp8_gemm(const Fp8Problem& p, const Fp8Epilogue& epilogue, cudaStream_t stream) {
  if (epilogue.kind == Fp8EpilogueKind::kUpdate) {
    launch_fp8_cluster_gemm<true>(p, epilogue, stream);
  } else {
    launch_fp8_swap_ab(p, epilogue, stream);
  }
}

// The FP8 step's rule, and the swap-AB tiles' batch limit.
inline std::string fp8_refusal(const LayerSizes& sizes, int batch) {
  if (batch > swap_ab::kMaxBatch) {
    return "the FP8 step needs a batch of at most " + std::to_string(swap_ab::kMaxBatch) +
           " (the products' M on the swap-AB tiles)";
  }
  return fp8_steps_refusal(sizes, batch);
}

constexpr StepTraining kStepTraining = fp8_step_training<launch_fp8_gemm, fp8_refusal>();

}  // namespace mnist::fp8
