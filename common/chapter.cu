// Compiled once per chapter, with that chapter's folder on the include path: this is where the
// chapter's kernel enters the build. CHAPTER_NAME (the folder) and CHAPTER_NAMESPACE (the
// namespace its gemm.cuh defines launch_gemm, kFusedEpilogue, kReplayStepAsGraph and kNeedsSm90a
// in) come from Meson. A chapter that trains many steps per launch also declares kStepTraining
// there (step_interface.cuh).
#include <stdexcept>
#include <string>

#include "cuda_check.cuh"
#include "epilogue.cuh"
#include "gemm.cuh"
#include "gemm_interface.cuh"
#include "gpu_info.hpp"
#include "gpu_requirements.hpp"
#include "step_interface.cuh"

// What a chapter may leave undeclared. A chapter that declares no kStepTraining trains a step at a
// time: this one refuses every model.
namespace mnist {
namespace {
namespace chapter_defaults {

std::string no_steps_refusal(const LayerSizes&, int) {
  return std::string("chapter ") + CHAPTER_NAME +
         " has no persistent step: many training steps per launch begin with chapter 16";
}

void no_steps(const StepBuffers&, int, float, cudaStream_t) {
  throw std::logic_error(no_steps_refusal({}, 0));
}

[[maybe_unused]] constexpr StepTraining kStepTraining = {no_steps_refusal, no_steps};

}  // namespace chapter_defaults
}  // namespace
}  // namespace mnist

// The defaults, found through this using-directive where the chapter's namespace lacks the name:
// a name the chapter declares itself hides the default, since qualified lookup (chapter::...)
// follows a namespace's using-directives only for names it does not declare.
namespace mnist::CHAPTER_NAMESPACE {
using namespace chapter_defaults;
}  // namespace mnist::CHAPTER_NAMESPACE

namespace mnist {
namespace {

namespace chapter = CHAPTER_NAMESPACE;

// What the device code of this translation unit, the chapter's kernels among it, was compiled
// for, in the copy the GPU loaded: each of the build's targets (meson.build's gpu_arch) compiles
// its own initial value, and the CUDA runtime loads the machine code for this GPU or, failing
// that, compiles the PTX. Whether a kernel loads would not tell: from compute_80 PTX, chapter 07's
// kernel loads on an H100 too, with its body for a build without sm_90a, a trap (wgmma.cuh).
struct CompiledFor {
  int arch;   // __CUDA_ARCH__
  int sm90a;  // 1 where the sm_90a instructions were available
};
__device__ CompiledFor compiled_for = {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    __CUDA_ARCH__, 1
#elif defined(__CUDA_ARCH__)
    __CUDA_ARCH__, 0
#else
    0, 0
#endif
};

// Whether the chapter runs on the current GPU with the code the build holds for it.
std::string why_not_here() {
  if (!gpu_available()) return "no CUDA-capable GPU found";
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  cudaDeviceProp props{};
  CUDA_CHECK(cudaGetDeviceProperties(&props, device));
  DeviceCode code;
  CompiledFor compiled{};
  const cudaError_t status = cudaMemcpyFromSymbol(&compiled, compiled_for, sizeof compiled);
  if (status == cudaSuccess) {
    code = {true, "", compiled.arch, compiled.sm90a == 1};
  } else {
    code.error = cudaGetErrorName(status);
    cudaGetLastError();  // taken: the next launch's check must not report it
  }
  return why_chapter_cannot_run(CHAPTER_NAME, chapter::kNeedsSm90a,
                                {props.name, props.major, props.minor}, code);
}

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

const std::string& chapter_unsupported_here() {
  static const std::string why = why_not_here();  // the trainer uses one GPU throughout
  return why;
}

std::string chapter_steps_refusal(const LayerSizes& sizes, int batch) {
  return chapter::kStepTraining.refusal(sizes, batch);
}

void chapter_train_steps(const StepBuffers& buffers, int steps, float learning_rate,
                         cudaStream_t stream) {
  chapter::kStepTraining.train(buffers, steps, learning_rate, stream);
  CUDA_CHECK_LAUNCH();
}

int chapter_step_scratch_words_per_row() {
  return chapter::kStepTraining.scratch_words_per_row;
}

// Whether the chapter gave an optional member (a function, not a comparison of its address, which
// compilers flag as always true where the chapter gave one).
template <class Function>
bool declared(Function* f) {
  return f != nullptr;
}

bool chapter_steps_use_fp8() {
  return chapter::kStepTraining.fp8_products;
}

size_t chapter_model_scratch_bytes(const LayerSizes& sizes, int batch) {
  const auto bytes = chapter::kStepTraining.model_scratch_bytes;
  return declared(bytes) ? bytes(sizes, batch) : 0;
}

void chapter_prepare_steps(const StepBuffers& buffers, cudaStream_t stream) {
  if (declared(chapter::kStepTraining.prepare)) {
    chapter::kStepTraining.prepare(buffers, stream);
    CUDA_CHECK_LAUNCH();
  }
}

void chapter_before_evaluation(const StepBuffers& buffers, cudaStream_t stream) {
  if (declared(chapter::kStepTraining.before_evaluation)) {
    chapter::kStepTraining.before_evaluation(buffers, stream);
    CUDA_CHECK_LAUNCH();
  }
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
