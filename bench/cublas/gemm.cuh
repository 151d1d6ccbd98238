// Not a chapter: cuBLAS as a trainer's GEMM, so that build/bench/train_cublas trains the same
// model with the same step as every chapter and gives the ceiling a hand-written GEMM can reach
// in this trainer. Compiled into common/chapter.cu like a chapter's gemm.cuh (CHAPTER_NAME
// "cublas").
#pragma once

#include "cublas_gemm.cuh"
#include "gemm_interface.cuh"

namespace mnist::cublas {

// cuBLAS stores C; gemm() applies the epilogue in a second pass, and the trainer launches every
// kernel from the host, as for chapters 01-05.
constexpr bool kFusedEpilogue = false;
constexpr bool kReplayStepAsGraph = false;
// cuBLAS brings kernels for every GPU the chapters run on.
constexpr bool kNeedsSm90a = false;

// GemmProblem::workspace is left unused: cuBLAS manages its own.
inline void launch_gemm(const GemmProblem& problem, cudaStream_t stream) {
  mnist::cublas_gemm(problem, stream);
}

}  // namespace mnist::cublas
