// Chapter 12's GEMM interface: swap_ab.cuh's kernel where it takes the product, else chapter 10's.
#pragma once

#include "12_swap_ab/swap_ab.cuh"
#include "gemm_interface.cuh"

namespace mnist::swap_ab {

// The kernels apply the epilogue (gemm_interface.cuh) themselves, and the trainer replays each
// step as a CUDA graph, as from chapter 06 on.
constexpr bool kFusedEpilogue = true;
constexpr bool kReplayStepAsGraph = true;

// Chapter 08's instructions and setmaxnreg: an H100-class GPU and a build with sm_90a code.
constexpr bool kNeedsSm90a = true;

inline void launch_gemm(const GemmProblem& p, cudaStream_t stream) {
  const bool taken =
      launch_if_swap_ab_takes(p, [&](auto op_a, auto op_b, auto kind, auto rows, auto batch) {
        launch_swap_ab<decltype(op_a)::value, decltype(op_b)::value, decltype(kind)::value, rows,
                       batch>(p, stream);
      });
  if (!taken) launch_square_gemm(p, stream);
}

}  // namespace mnist::swap_ab
