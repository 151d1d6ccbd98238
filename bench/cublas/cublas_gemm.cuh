// The one cuBLAS call of the project: the GEMM interface's product done by cublasGemmEx, fp16 in,
// fp32 accumulation (CUBLAS_COMPUTE_32F) and fp32 out, the same arithmetic as the chapters.
// The GEMM benchmark checks and times every chapter against it, and bench/cublas/gemm.cuh makes
// it a trainer's GEMM (build/bench/train_cublas), the ceiling line of the comparisons.
#pragma once

#include <cublas_v2.h>

#include <string>

#include "cuda_check.cuh"
#include "gemm_interface.cuh"

namespace mnist {

// Like check_cuda (cuda_check.cuh): a failed cuBLAS call becomes one line naming it.
inline void check_cublas(cublasStatus_t status, const char* call, const char* file, int line) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw CudaError(std::string(file) + ":" + std::to_string(line) + ": " + call + " failed: " +
                    cublasGetStatusName(status) + " (" + cublasGetStatusString(status) + ")");
  }
}

#define CUBLAS_CHECK(call) ::mnist::check_cublas((call), #call, __FILE__, __LINE__)

// Created on first use and never destroyed: cublasDestroy at exit could run after the CUDA
// runtime has torn the context down, and the process ends there anyway.
inline cublasHandle_t cublas_handle() {
  static const cublasHandle_t handle = [] {
    cublasHandle_t created = nullptr;
    CUBLAS_CHECK(cublasCreate(&created));
    return created;
  }();
  return handle;
}

// C = op(A) op(B) on `stream`. Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T:
// swap the operands and read each row-major matrix as its column-major transpose. Uses cuBLAS's
// own workspace, not p.workspace.
inline void cublas_gemm(const GemmProblem& p, cudaStream_t stream) {
  const cublasHandle_t handle = cublas_handle();
  CUBLAS_CHECK(cublasSetStream(handle, stream));
  const float one = 1.0f, zero = 0.0f;
  const cublasOperation_t op_b = p.op_b == Op::N ? CUBLAS_OP_N : CUBLAS_OP_T;
  const cublasOperation_t op_a = p.op_a == Op::N ? CUBLAS_OP_N : CUBLAS_OP_T;
  const int ld_b = p.op_b == Op::N ? p.n : p.k;
  const int ld_a = p.op_a == Op::N ? p.k : p.m;
  CUBLAS_CHECK(cublasGemmEx(handle, op_b, op_a, p.n, p.m, p.k, &one, p.b, CUDA_R_16F, ld_b, p.a,
                            CUDA_R_16F, ld_a, &zero, p.c, CUDA_R_32F, p.n, CUBLAS_COMPUTE_32F,
                            CUBLAS_GEMM_DEFAULT));
}

}  // namespace mnist
