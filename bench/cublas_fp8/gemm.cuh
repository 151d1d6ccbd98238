// Not a chapter: cuBLASLt's FP8 matmul as the FP8 step's product, so that
// build/bench/train_cublas_fp8 trains the FP8 chapters' model with chapter 20's step (each product
// stores C; finish_fp8_kernel quantises it or updates the weights) on cuBLASLt's kernels: the
// ceiling of that step. Compiled into common/chapter.cu like a chapter's gemm.cuh (CHAPTER_NAME
// "cublas_fp8"); the fp16 products (the output layer, evaluation) are cuBLAS's, as train_cublas's.
#pragma once

#include <cuda_runtime.h>

#include <map>
#include <memory>
#include <tuple>

#include "cublas/cublas_gemm.cuh"
#include "cublaslt_fp8.cuh"
#include "cuda_check.cuh"
#include "epilogue.cuh"
#include "fp8_interface.cuh"
#include "fp8_step.cuh"
#include "gemm_interface.cuh"
#include "step_interface.cuh"

namespace mnist::cublas_fp8 {

// The FP8 step gives its fp16 products (the output layer's) no C for their epilogues, as it does
// every chapter's, which fuse them: launch_gemm passes them through a C of its own.
constexpr bool kFusedEpilogue = true;
constexpr bool kReplayStepAsGraph = false;
constexpr bool kNeedsSm90a = true;  // the FP8 step's own kernels are built for the chapters' GPU

// The two scales of a product where cuBLASLt takes them (16-byte aligned, kScaleStride apart).
__global__ void place_scales_kernel(const float* scale_a, const float* scale_b, float* scales) {
  scales[0] = *scale_a;
  scales[kScaleStride] = *scale_b;
}

// The handle, workspace, scales and one plan a shape, made on first use and kept: the heuristic
// runs once a shape, not once a product.
class LtFp8Products {
 public:
  static LtFp8Products& instance() {
    static LtFp8Products products;
    return products;
  }
  const LtFp8Gemm& plan(int m, int n, int k) {
    std::unique_ptr<LtFp8Gemm>& plan = plans_[std::make_tuple(m, n, k)];
    if (!plan) {
      plan = std::make_unique<LtFp8Gemm>(handle_, m, n, k, scales_, scales_ + kScaleStride, false,
                                         workspace_);
    }
    return *plan;
  }
  float* scales() const { return scales_; }
  // C of a product whose epilogue has none: grown when a product needs more (after the stream's
  // work that may still read it).
  float* scratch(size_t floats, cudaStream_t stream) {
    if (floats > scratch_floats_) {
      CUDA_CHECK(cudaStreamSynchronize(stream));
      CUDA_CHECK(cudaFree(scratch_));
      CUDA_CHECK(cudaMalloc(&scratch_, floats * sizeof(float)));
      scratch_floats_ = floats;
    }
    return scratch_;
  }

 private:
  LtFp8Products() {
    lt_check(cublasLtCreate(&handle_), "create");
    CUDA_CHECK(cudaMalloc(&workspace_, kLtWorkspaceBytes));
    CUDA_CHECK(cudaMalloc(&scales_, 2 * kScaleStride * sizeof(float)));
  }
  // Never destroyed, as cublas_handle(): the process ends with them.
  cublasLtHandle_t handle_ = nullptr;
  void* workspace_ = nullptr;
  float* scales_ = nullptr;
  float* scratch_ = nullptr;
  size_t scratch_floats_ = 0;
  std::map<std::tuple<int, int, int>, std::unique_ptr<LtFp8Gemm>> plans_;
};

// kStore into epilogue.c; kBiasRelu through a scratch C and the fp16 chapters' epilogue pass.
// The quantising epilogues are the step's (Fp8Epilogues::kSeparate).
inline void launch_fp8_gemm(const Fp8Problem& p, const Fp8Epilogue& epilogue, cudaStream_t stream) {
  const bool relu_pass = epilogue.kind == Fp8EpilogueKind::kBiasRelu;
  if (!relu_pass && epilogue.kind != Fp8EpilogueKind::kStore) {
    throw std::invalid_argument("cublas_fp8: an epilogue cuBLASLt's matmul does not have here");
  }
  LtFp8Products& products = LtFp8Products::instance();
  float* const c = relu_pass ? products.scratch(size_t(p.m) * p.n, stream) : epilogue.c;
  place_scales_kernel<<<1, 1, 0, stream>>>(p.scale_a, p.scale_b, products.scales());
  CUDA_CHECK(cudaGetLastError());
  products.plan(p.m, p.n, p.k).run(p.a, p.b, c, stream);
  if (relu_pass) {
    GemmProblem relu;
    relu.m = p.m;
    relu.n = p.n;
    relu.k = p.k;
    relu.c = c;
    relu.epilogue.kind = EpilogueKind::kBiasRelu;
    relu.epilogue.bias = epilogue.bias;
    relu.epilogue.out = epilogue.out;
    apply_epilogue(relu, stream);
  }
}

// cuBLAS stores C (into the problem's c, or the scratch where it has none), and the epilogue
// follows in a pass of its own, as gemm() does for an unfused chapter.
inline void launch_gemm(const GemmProblem& problem, cudaStream_t stream) {
  if (problem.epilogue.kind == EpilogueKind::kStore) return mnist::cublas_gemm(problem, stream);
  GemmProblem product = problem;
  product.epilogue = Epilogue{};
  if (!product.c) {
    product.c = LtFp8Products::instance().scratch(size_t(problem.m) * problem.n, stream);
  }
  mnist::cublas_gemm(product, stream);
  GemmProblem pass = problem;
  pass.c = product.c;
  apply_epilogue(pass, stream);
}

constexpr StepTraining kStepTraining =
    fp8_step_training<launch_fp8_gemm, Fp8Epilogues::kSeparate, fp8_steps_refusal>();

}  // namespace mnist::cublas_fp8
