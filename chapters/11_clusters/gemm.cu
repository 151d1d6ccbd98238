// Chapter 11's GEMM, compiled once for this chapter and every later one (chapters/meson.build).
#include "11_clusters/gemm.cuh"

namespace mnist::clusters {

void launch_gemm(const GemmProblem& p, cudaStream_t stream) {
  launch_or_fall_back(p, stream, [&](auto op_a, auto op_b, auto kind) {
    launch_clusters<decltype(op_a)::value, decltype(op_b)::value, decltype(kind)::value>(p, stream);
  });
}

}  // namespace mnist::clusters
