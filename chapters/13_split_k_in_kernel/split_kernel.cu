// Chapter 13's GEMM, compiled once for this chapter and every later one (chapters/meson.build).
#include "13_split_k_in_kernel/split_kernel.cuh"

namespace mnist::split_k_in_kernel {

void launch_split_k_in_kernel_or_fall_back(const GemmProblem& p, cudaStream_t stream) {
  const bool taken =
      launch_if_swap_ab_takes(p, [&](auto op_a, auto op_b, auto kind, auto rows, auto batch) {
        launch_split_k_in_kernel<decltype(op_a)::value, decltype(op_b)::value,
                                 decltype(kind)::value, rows, batch>(p, stream);
      });
  if (!taken) launch_square_gemm(p, stream);
}

}  // namespace mnist::split_k_in_kernel
