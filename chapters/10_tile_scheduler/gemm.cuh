// Chapter 10's GEMM interface (common/gemm_interface.cuh): the persistent, warp-specialised kernel
// of persistent_gemm.cuh where chapter 07's rule takes the product, chapter 06's kernel elsewhere.
#pragma once

#include "10_tile_scheduler/persistent_gemm.cuh"
#include "gemm_interface.cuh"

namespace mnist::tile_scheduler {

// The kernels apply the epilogue (gemm_interface.cuh) themselves, and the trainer replays each
// step as a CUDA graph, as from chapter 06 on.
constexpr bool kFusedEpilogue = true;
constexpr bool kReplayStepAsGraph = true;

// Chapter 08's instructions and setmaxnreg: an H100-class GPU and a build with sm_90a code.
constexpr bool kNeedsSm90a = true;

inline void launch_gemm(const GemmProblem& p, cudaStream_t stream) {
  launch_tile_scheduler_or_fall_back(p, stream);
}

}  // namespace mnist::tile_scheduler
