// Chapter 14's GEMM interface (common/gemm_interface.cuh): weight_update.cuh's launch.
#pragma once

#include "14_weight_update/weight_update.cuh"
#include "gemm_interface.cuh"

namespace mnist::weight_update {

// The kernels apply the epilogue (gemm_interface.cuh) themselves, and the trainer replays each
// step as a CUDA graph, as from chapter 06 on.
constexpr bool kFusedEpilogue = true;
constexpr bool kReplayStepAsGraph = true;

// Chapter 08's instructions and setmaxnreg: an H100-class GPU and a build with sm_90a code.
constexpr bool kNeedsSm90a = true;

inline void launch_gemm(const GemmProblem& p, cudaStream_t stream) {
  launch_weight_update_or_fall_back(p, stream);
}

}  // namespace mnist::weight_update
