// Chapter 10's GEMM, compiled once for this chapter and every later one (chapters/meson.build).
#include "10_tile_scheduler/persistent_gemm.cuh"

namespace mnist::tile_scheduler {

void launch_tile_scheduler_or_fall_back(const GemmProblem& p, cudaStream_t stream) {
  launch_or_fall_back(p, stream, [&](auto op_a, auto op_b, auto kind) {
    launch_tile_scheduler<decltype(op_a)::value, decltype(op_b)::value, decltype(kind)::value>(
        p, stream);
  });
}

}  // namespace mnist::tile_scheduler
