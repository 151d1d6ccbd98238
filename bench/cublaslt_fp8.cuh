// cuBLASLt's FP8 matmul as this project calls it: e4m3 operands, fp32 accumulation and fp32 C, the
// operands' scales from device memory. The FP8 benchmark (fp8_bench.cu) times the chapters
// against it, and bench/cublas_fp8/gemm.cuh makes it the FP8 step's product
// (build/bench/train_cublas_fp8).
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace mnist {

constexpr size_t kLtWorkspaceBytes = size_t(32) << 20;
// cuBLASLt refuses (status 15, after its heuristic has offered algorithms) a scale pointer that is
// not 16-byte aligned: the two scales lie this many floats apart.
constexpr int kScaleStride = 4;

inline void lt_check(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw std::runtime_error(std::string("cuBLASLt: ") + what + " failed (status " +
                             std::to_string(int(status)) + ")");
  }
}

// C (m x n, row-major) = scale_a scale_b A B^T with A (m x k) and B (n x k) row-major e4m3. In
// cuBLAS's column-major terms C is D (n x m) = op(B') op(A'): B' is our B read as k x n and
// transposed, A' our A read as k x m as it is: the "TN" layout FP8 requires.
class LtFp8Gemm {
 public:
  LtFp8Gemm(cublasLtHandle_t handle, int m, int n, int k, const float* scale_a,
            const float* scale_b, bool fast_accumulation, void* workspace)
      : handle_(handle), workspace_(workspace) {
    lt_check(cublasLtMatmulDescCreate(&desc_, CUBLAS_COMPUTE_32F, CUDA_R_32F), "desc");
    const cublasOperation_t transposed = CUBLAS_OP_T, plain = CUBLAS_OP_N;
    const int8_t fast = fast_accumulation ? 1 : 0;
    set(CUBLASLT_MATMUL_DESC_TRANSA, &transposed, sizeof transposed);
    set(CUBLASLT_MATMUL_DESC_TRANSB, &plain, sizeof plain);
    set(CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &scale_b, sizeof scale_b);  // cuBLAS's A is our B
    set(CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &scale_a, sizeof scale_a);
    set(CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof fast);
    lt_check(cublasLtMatrixLayoutCreate(&a_, CUDA_R_8F_E4M3, k, n, k), "layout of B");
    lt_check(cublasLtMatrixLayoutCreate(&b_, CUDA_R_8F_E4M3, k, m, k), "layout of A");
    lt_check(cublasLtMatrixLayoutCreate(&c_, CUDA_R_32F, n, m, n), "layout of C");
    cublasLtMatmulPreference_t preference;
    lt_check(cublasLtMatmulPreferenceCreate(&preference), "preference");
    lt_check(
        cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                             &kLtWorkspaceBytes, sizeof kLtWorkspaceBytes),
        "workspace preference");
    int found = 0;
    lt_check(cublasLtMatmulAlgoGetHeuristic(handle_, desc_, a_, b_, c_, c_, preference, 1,
                                            &heuristic_, &found),
             "heuristic");
    lt_check(cublasLtMatmulPreferenceDestroy(preference), "preference destroy");
    if (found == 0) throw std::runtime_error("cuBLASLt has no FP8 algorithm for this product");
  }
  ~LtFp8Gemm() {
    cublasLtMatrixLayoutDestroy(a_);
    cublasLtMatrixLayoutDestroy(b_);
    cublasLtMatrixLayoutDestroy(c_);
    cublasLtMatmulDescDestroy(desc_);
  }
  LtFp8Gemm(const LtFp8Gemm&) = delete;
  LtFp8Gemm& operator=(const LtFp8Gemm&) = delete;

  void run(const uint8_t* a, const uint8_t* b, float* c, cudaStream_t stream) const {
    const float one = 1.0f, zero = 0.0f;
    lt_check(cublasLtMatmul(handle_, desc_, &one, b, a_, a, b_, &zero, c, c_, c, c_,
                            &heuristic_.algo, workspace_, kLtWorkspaceBytes, stream),
             "matmul");
  }

 private:
  void set(cublasLtMatmulDescAttributes_t attribute, const void* value, size_t bytes) {
    lt_check(cublasLtMatmulDescSetAttribute(desc_, attribute, value, bytes), "desc attribute");
  }
  cublasLtHandle_t handle_;
  void* workspace_;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, c_ = nullptr;
  cublasLtMatmulHeuristicResult_t heuristic_{};
};

}  // namespace mnist
