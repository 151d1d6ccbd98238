// Compiled once per chapter, with that chapter's folder on the include path: this is where the
// chapter's kernel enters the build. CHAPTER_NAME comes from Meson.
#include <stdexcept>
#include <string>

#include "cuda_check.cuh"
#include "gemm.cuh"
#include "gemm_interface.cuh"

namespace mnist {

const char* chapter_name() {
  return CHAPTER_NAME;
}

void gemm(const GemmProblem& p, cudaStream_t stream) {
  if (p.m < 1 || p.n < 1 || p.k < 1) {
    throw std::invalid_argument("gemm: empty problem " + std::to_string(p.m) + "x" +
                                std::to_string(p.n) + "x" + std::to_string(p.k));
  }
  if (!p.a || !p.b || !p.c) throw std::invalid_argument("gemm: null operand");
  launch_gemm(p, stream);
  CUDA_CHECK_LAUNCH();
}

}  // namespace mnist
