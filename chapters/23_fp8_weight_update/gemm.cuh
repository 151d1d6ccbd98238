// Chapter 23: the FP8 step's weight updates on chapter 14's design (fp8_weight_update.cuh). Chapter
// 22 runs them on chapter 21's 128 x 256 tiles, whose epilogue moves the masters through registers;
// here small blocks move them through shared memory by TMA, several blocks an SM.
//
// When: fp8_steps_refusal() (common/fp8_step.cuh), as chapter 20.
#pragma once

#include "22_fp8_swap_ab/gemm.cuh"
#include "23_fp8_weight_update/fp8_weight_update.cuh"
#include "fp8_interface.cuh"
#include "fp8_step.cuh"
#include "gemm_interface.cuh"
#include "step_interface.cuh"

namespace mnist::fp8_weight_update {

constexpr bool kFusedEpilogue = true;
constexpr bool kReplayStepAsGraph = true;
constexpr bool kNeedsSm90a = true;

using fp8_swap_ab::launch_gemm;  // the fp16 products (the output layer's), as chapter 22 runs them

// The weight updates TMA can take here; every other product as chapter 22 runs it.
inline void launch_fp8_gemm(const Fp8Problem& p, const Fp8Epilogue& epilogue, cudaStream_t stream) {
  if (fp8_weight_update_takes(p, epilogue)) {
    launch_fp8_weight_update(p, epilogue, stream);
  } else {
    fp8_swap_ab::launch_fp8_gemm(p, epilogue, stream);
  }
}

constexpr StepTraining kStepTraining =
    fp8_step_training<launch_fp8_gemm, Fp8Epilogues::kFused, fp8_steps_refusal>();

}  // namespace mnist::fp8_weight_update
