#include "cuda_check.cuh"
#include "epilogue.cuh"

namespace mnist {
namespace {

constexpr int kThreads = 256;

template <EpilogueKind kKind>
__global__ void epilogue_kernel(GemmProblem p) {
  const size_t count = static_cast<size_t>(p.m) * p.n;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count;
       i += size_t(gridDim.x) * blockDim.x) {
    const int row = static_cast<int>(i / p.n), col = static_cast<int>(i % p.n);
    finish_element<kKind>(p, row, col, p.c[i], epilogue_input<kKind>(p, row, col));
  }
}

}  // namespace

void apply_epilogue(const GemmProblem& p, cudaStream_t stream) {
  const size_t count = static_cast<size_t>(p.m) * p.n;
  const size_t blocks = (count + kThreads - 1) / kThreads;
  with_epilogue_kind(p.epilogue.kind, [&](auto kind) {
    epilogue_kernel<decltype(kind)::value>
        <<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(p);
  });
  CUDA_CHECK_LAUNCH();
}

}  // namespace mnist
