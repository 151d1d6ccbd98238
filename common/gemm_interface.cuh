// The one GEMM interface. Every chapter implements launch_gemm(), kFusedEpilogue,
// kReplayStepAsGraph and kNeedsSm90a in its own chapters/NN_name/gemm.cuh, inside a namespace of
// its own (mnist::naive, mnist::smem_tiling, ...: the folder's name without its number), so that a
// chapter can include an earlier chapter's kernel and fall back to it. Everything else (trainer,
// tests, benchmarks) calls gemm(). A chapter that also trains many steps per launch declares
// kStepTraining there too (step_interface.cuh).
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <type_traits>

#include "gemm_types.hpp"

namespace mnist {

// Scratch device memory that the trainer, the tests and the benchmarks hand to every GEMM
// (chapter 05 keeps its split-K partial sums there). A chapter must still be correct, if slower,
// with less or none.
constexpr size_t kGemmWorkspaceFloats = size_t(4) << 20;  // 16 MiB

// What happens to each element v = (op(A) . op(B))[row][col] on its way out: the work of a
// training step around each of its products (trainer.cu). Every matrix below is m x n, row-major.
enum class EpilogueKind {
  kStore,     // c = v
  kBias,      // c = v + bias[col]                              forward, output layer (logits)
  kBiasRelu,  // out = fp16(max(v + bias[col], 0))              forward, hidden layers
  kReluGrad,  // out = fp16(activation > 0 ? v : 0)             backward data: dZ of the layer below
  kSgd,       // master -= learning_rate * v; out = fp16(master)  backward weight: the SGD update
};
struct Epilogue {
  EpilogueKind kind = EpilogueKind::kStore;
  const float* bias = nullptr;
  const __half* activation = nullptr;
  float* master = nullptr;
  __half* out = nullptr;
  float learning_rate = 0;
};

// C = op(A) . op(B) through the epilogue: fp16 operands, fp32 accumulation. Operand layouts as in
// gemm_types.hpp.
struct GemmProblem {
  int m = 0, n = 0, k = 0;
  const __half* a = nullptr;
  Op op_a = Op::N;
  const __half* b = nullptr;
  Op op_b = Op::N;
  // m x n, row-major. The result of kStore and kBias. For the other epilogues a chapter whose
  // kernels cannot apply them (kFusedEpilogue false) stores v here and gemm() applies the
  // epilogue in a second pass; a chapter that fuses them ignores c, which may then be null.
  float* c = nullptr;
  // Scratch memory for this GEMM alone, workspace_floats floats, or null. Its contents on entry
  // do not matter, and the GEMM may leave anything in it.
  float* workspace = nullptr;
  size_t workspace_floats = 0;
  Epilogue epilogue = {};
};

// Checks the problem, launches the chapter's kernel(s) on `stream` (and the epilogue pass, see c)
// and checks the launches. Throws std::invalid_argument for a problem no chapter takes: an empty
// one, a null operand or epilogue buffer, or A and B both transposed (op_a = op_b = T), which is
// none of the MLP's three products (gemm_types.hpp) and which no chapter compiles a kernel for.
// The chapter's launch_gemm(problem, stream) is called only with a problem that passed these.
// Whether the chapter runs on this GPU at all is the caller's question, asked once before its
// first GEMM (chapter_unsupported_here; the trainer asks in step_launch_for).
void gemm(const GemmProblem& problem, cudaStream_t stream);

// Calls f(std::integral_constant<Op, op_a>{}, std::integral_constant<Op, op_b>{}) for the
// problem's layouts, one of the three products: how a launcher picks, at run time, among the
// kernels it compiles with the layouts as template parameters.
template <class F>
void with_operand_ops(const GemmProblem& p, F&& f) {
  using N = std::integral_constant<Op, Op::N>;
  using T = std::integral_constant<Op, Op::T>;
  if (p.op_a == Op::T) return f(T{}, N{});  // backward weight
  if (p.op_b == Op::T) return f(N{}, T{});  // forward
  return f(N{}, N{});                       // backward data
}

// The chapter's folder name, e.g. "01_naive".
const char* chapter_name();
// Whether the chapter's kernels apply the epilogue themselves (chapter 06 onwards).
bool chapter_fuses_epilogue();
// Whether the trainer records a step once as a CUDA graph and replays it by default (chapter 06
// onwards; `--launch` chooses for any chapter).
bool chapter_replays_step_as_graph();
// Why the chapter cannot run on the current GPU with this build, in one line that names the GPU
// and what the chapter needs (gpu_requirements.hpp), or empty where it can. Asked once and kept;
// the first call must come before any stream capture (it copies from the device). No GPU at all
// is a reason too. The trainer and the benchmark stop with it as their error, the GPU tests SKIP
// with it.
const std::string& chapter_unsupported_here();

}  // namespace mnist
