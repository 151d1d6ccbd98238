// Chapter 06's GEMM interface (common/gemm_interface.cuh): every product on the fused kernel of
// fused_gemm.cuh, split along K where chapter 05's rule splits it.
#pragma once

#include "06_fused_step/fused_gemm.cuh"
#include "gemm_interface.cuh"

namespace mnist::fused_step {

// The kernels apply the epilogue (gemm_interface.cuh) themselves, and the trainer replays each
// step as a CUDA graph.
constexpr bool kFusedEpilogue = true;
constexpr bool kReplayStepAsGraph = true;

// Runs on any GPU of compute capability 8.0 or newer (common/gpu_requirements.hpp); chapter 07 is
// the first to need an H100.
constexpr bool kNeedsSm90a = false;

inline void launch_gemm(const GemmProblem& p, cudaStream_t stream) {
  with_epilogue_kind(p.epilogue.kind, [&](auto kind) {
    with_operand_ops(p, [&](auto op_a, auto op_b) {
      launch<decltype(op_a)::value, decltype(op_b)::value, decltype(kind)::value>(p, stream);
    });
  });
}

}  // namespace mnist::fused_step
