// Chapter 14's GEMM, compiled once for this chapter and every later one (chapters/meson.build).
#include "14_weight_update/weight_update.cuh"

namespace mnist::weight_update {

void launch_weight_update_or_fall_back(const GemmProblem& p, cudaStream_t stream) {
  bool taken = false;
  with_epilogue_kind(p.epilogue.kind, [&](auto kind) {
    with_operand_ops(p, [&](auto op_a, auto) {
      constexpr EpilogueKind kKind = decltype(kind)::value;
      if constexpr (kWeightUpdateBuilt<decltype(op_a)::value, kKind>) {
        taken = weight_update_takes<kKind>(p);
        if (taken) launch_weight_update<kKind>(p, stream);
      }
    });
  });
  if (!taken) split_k_in_kernel::launch_split_k_in_kernel_or_fall_back(p, stream);
}

}  // namespace mnist::weight_update
