// Chapter 22: the FP8 step's batch-sized products on chapter 12's swap-AB tiles. Chapter 21 runs
// every FP8 product on 128 x 256 tiles, so a forward or backward-data product at batch 256 has
// (width / 128) x 1 tiles for 132 SMs. Here the weights go on wgmma's M and the batch on its N
// (fp8_swap_ab.cuh), each K tile's sums promoted in chunks of at most 128 batch columns, and
// quantised, as chapter 21's epilogue does, in the transposed layout; the weight gradients stay on
// chapter 21's tiles, whose epilogue updates the weights.
//
// When: fp8_steps_refusal() (common/fp8_step.cuh), as chapter 20.
#pragma once

#include "14_weight_update/weight_update.cuh"
#include "21_fp8_fused_epilogue/fused_epilogue.cuh"
#include "22_fp8_swap_ab/fp8_swap_ab.cuh"
#include "fp8_interface.cuh"
#include "fp8_step.cuh"
#include "gemm_interface.cuh"
#include "step_interface.cuh"

namespace mnist::fp8_swap_ab {

constexpr bool kFusedEpilogue = true;
constexpr bool kReplayStepAsGraph = true;
constexpr bool kNeedsSm90a = true;

inline void launch_gemm(const GemmProblem& p, cudaStream_t stream) {
  weight_update::launch_weight_update_or_fall_back(p, stream);
}

// Products with M, the batch, up to swap_ab::kMaxBatch on the swap-AB tiles; the rest, and every
// weight update, on chapter 21's.
inline void launch_fp8_gemm(const Fp8Problem& p, const Fp8Epilogue& epilogue, cudaStream_t stream) {
  if (epilogue.kind != Fp8EpilogueKind::kUpdate && p.m <= swap_ab::kMaxBatch) {
    launch_fp8_swap_ab(p, epilogue, stream);
  } else {
    fp8_fused_epilogue::launch_fp8_fused_gemm(p, epilogue, stream);
  }
}

constexpr StepTraining kStepTraining =
    fp8_step_training<launch_fp8_gemm, Fp8Epilogues::kFused, fp8_steps_refusal>();

}  // namespace mnist::fp8_swap_ab
