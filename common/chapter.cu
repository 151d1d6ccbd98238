// Compiled once per chapter, with that chapter's folder on the include path: this is where the
// chapter's kernel enters the build. CHAPTER_NAME (the folder) and CHAPTER_NAMESPACE (the
// namespace its gemm.cuh defines launch_gemm, kFusedEpilogue and kReplayStepAsGraph in) come from
// Meson.
#include <stdexcept>
#include <string>

#include "cuda_check.cuh"
#include "epilogue.cuh"
#include "gemm.cuh"
#include "gemm_interface.cuh"

namespace mnist {
namespace {

namespace chapter = CHAPTER_NAMESPACE;

// The buffers each epilogue reads or writes, and c where the chapter stores the product first.
void check_epilogue(const GemmProblem& p) {
  const Epilogue& e = p.epilogue;
  const bool stores_c = e.kind == EpilogueKind::kStore || e.kind == EpilogueKind::kBias;
  bool present = p.c || (chapter::kFusedEpilogue && !stores_c);
  switch (e.kind) {
    case EpilogueKind::kStore:
      break;
    case EpilogueKind::kBias:
      present = present && e.bias;
      break;
    case EpilogueKind::kBiasRelu:
      present = present && e.bias && e.out;
      break;
    case EpilogueKind::kReluGrad:
      present = present && e.activation && e.out;
      break;
    case EpilogueKind::kSgd:
      present = present && e.master && e.out;
      break;
  }
  if (!present) throw std::invalid_argument("gemm: the epilogue lacks one of its buffers");
}

}  // namespace

const char* chapter_name() {
  return CHAPTER_NAME;
}

bool chapter_fuses_epilogue() {
  return chapter::kFusedEpilogue;
}

bool chapter_replays_step_as_graph() {
  return chapter::kReplayStepAsGraph;
}

void gemm(const GemmProblem& p, cudaStream_t stream) {
  if (p.m < 1 || p.n < 1 || p.k < 1) {
    throw std::invalid_argument("gemm: empty problem " + std::to_string(p.m) + "x" +
                                std::to_string(p.n) + "x" + std::to_string(p.k));
  }
  if (!p.a || !p.b) throw std::invalid_argument("gemm: null operand");
  if (p.op_a == Op::T && p.op_b == Op::T) {
    throw std::invalid_argument("gemm: A^T . B^T is not one of the MLP's three products");
  }
  check_epilogue(p);
  if (chapter::kFusedEpilogue || p.epilogue.kind == EpilogueKind::kStore) {
    chapter::launch_gemm(p, stream);
    CUDA_CHECK_LAUNCH();
    return;
  }
  GemmProblem product = p;
  product.epilogue = Epilogue{};
  chapter::launch_gemm(product, stream);
  CUDA_CHECK_LAUNCH();
  apply_epilogue(p, stream);
}

}  // namespace mnist
