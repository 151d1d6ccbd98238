// The one GEMM interface. Every chapter implements launch_gemm() in its own
// chapters/NN_name/gemm.cuh; everything else (trainer, tests, benchmarks) calls gemm().
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstddef>

#include "gemm_types.hpp"

namespace mnist {

// Scratch device memory that the trainer, the tests and the benchmarks hand to every GEMM
// (chapter 05 keeps its split-K partial sums there). A chapter must still be correct, if slower,
// with less or none.
constexpr size_t kGemmWorkspaceFloats = size_t(4) << 20;  // 16 MiB

// C = op(A) . op(B): fp16 operands, fp32 accumulation, fp32 result. C is m x n, row-major,
// overwritten. Operand layouts as in gemm_types.hpp.
struct GemmProblem {
  int m = 0, n = 0, k = 0;
  const __half* a = nullptr;
  Op op_a = Op::N;
  const __half* b = nullptr;
  Op op_b = Op::N;
  float* c = nullptr;
  // Scratch memory for this GEMM alone, workspace_floats floats, or null. Its contents on entry
  // do not matter, and the GEMM may leave anything in it.
  float* workspace = nullptr;
  size_t workspace_floats = 0;
};

// Checks the problem, launches the chapter's kernel(s) on `stream` and checks the launch.
// Throws std::invalid_argument for a problem the chapter cannot take.
void gemm(const GemmProblem& problem, cudaStream_t stream);

// Implemented by the chapter; called by gemm() with a validated problem.
void launch_gemm(const GemmProblem& problem, cudaStream_t stream);

// The chapter's folder name, e.g. "01_naive".
const char* chapter_name();

}  // namespace mnist
