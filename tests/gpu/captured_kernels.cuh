// Which kernels a piece of host code launches, and on which stream: the tests run every product
// (and a training step) under stream capture, name the kernel nodes of the captured graph, then
// launch the graph and check its results as before.
//
// Stream discipline comes with it. While a stream created without cudaStreamNonBlocking is
// capturing, the legacy default stream (stream 0) is unusable: work enqueued there would depend
// on the capture, so the attempt is an error and invalidates the capture, and the test fails
// either at the launch or at cudaStreamEndCapture. References: the CUDA Runtime API on
// cudaStreamIsCapturing ("When a blocking stream is capturing, the legacy stream is in an
// unusable state until the blocking stream capture is terminated", cuda_runtime_api.h), and the
// CUDA C++ Programming Guide, CUDA Graphs, Stream Capture, "Prohibited and Unhandled Operations".
// This holds in every capture mode; global mode, which the tests use, also refuses "potentially
// unsafe" calls in the capturing thread, such as a cudaMalloc inside gemm()
// (cudaThreadExchangeStreamCaptureMode in cuda_runtime_api.h).
#pragma once

#include <cuda_runtime.h>
#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "cuda_check.cuh"

namespace mnist::testing {

// A kernel's qualified name with its template arguments, without its return type or parameters,
// e.g. "mnist::fused_step::sum_splits_kernel<(mnist::EpilogueKind)4>" for
// "void mnist::fused_step::sum_splits_kernel<(mnist::EpilogueKind)4>(mnist::GemmProblem, int)".
inline std::string kernel_name_with_arguments(const char* mangled) {
  int status = 0;
  const std::unique_ptr<char, decltype(&std::free)> demangled(
      abi::__cxa_demangle(mangled, nullptr, nullptr, &status), &std::free);
  std::string name = status == 0 ? demangled.get() : mangled;
  const std::string anonymous = "(anonymous namespace)::";
  for (size_t at; (at = name.find(anonymous)) != std::string::npos;)
    name.erase(at, anonymous.size());
  const std::string returns = "void ";  // a function template's name starts with its return type
  if (name.compare(0, returns.size(), returns) == 0) name.erase(0, returns.size());
  const size_t open = name.find_first_of("<(");
  if (open == std::string::npos || name[open] == '(') return name.substr(0, open);
  size_t end = open;  // the '>' that closes the arguments, which may hold <> of their own
  for (int depth = 0; end < name.size(); ++end) {
    if (name[end] == '<') ++depth;
    if (name[end] == '>' && --depth == 0) break;
  }
  return name.substr(0, end + 1);
}

// The same without the template arguments: "mnist::fused_step::sum_splits_kernel".
inline std::string qualified_kernel_name(const char* mangled) {
  const std::string name = kernel_name_with_arguments(mangled);
  return name.substr(0, name.find('<'));
}

// The qualified names of the graph's kernel nodes, sorted: the tests ask which kernels ran, not in
// which order (cudaGraphGetNodes promises none). With `with_arguments`, the same names with their
// template arguments and, after a space, the threads per block of the launch go there, sorted too:
// "...::swap_ab_gemm_kernel<(mnist::Op)0, (mnist::Op)1, (mnist::EpilogueKind)0, 128, 128> 384".
inline std::vector<std::string> kernel_names(cudaGraph_t graph,
                                             std::vector<std::string>* with_arguments = nullptr) {
  size_t count = 0;
  CUDA_CHECK(cudaGraphGetNodes(graph, nullptr, &count));
  std::vector<cudaGraphNode_t> nodes(count);
  CUDA_CHECK(cudaGraphGetNodes(graph, nodes.data(), &count));
  std::vector<std::string> names, full;
  for (cudaGraphNode_t node : nodes) {
    cudaGraphNodeType type;
    CUDA_CHECK(cudaGraphNodeGetType(node, &type));
    if (type != cudaGraphNodeTypeKernel) continue;
    cudaKernelNodeParams params = {};
    CUDA_CHECK(cudaGraphKernelNodeGetParams(node, &params));
    const char* name = nullptr;
    CUDA_CHECK(cudaFuncGetName(&name, params.func));  // CUDA 12.3 and later
    const std::string with_template = kernel_name_with_arguments(name);
    names.push_back(with_template.substr(0, with_template.find('<')));
    const unsigned threads = params.blockDim.x * params.blockDim.y * params.blockDim.z;
    full.push_back(with_template + " " + std::to_string(threads));
  }
  std::sort(names.begin(), names.end());
  std::sort(full.begin(), full.end());
  if (with_arguments) *with_arguments = full;
  return names;
}

// Records what launch() enqueues on `stream` as a graph, runs the graph once on `stream` and waits
// for it; returns the names of its kernels (and, with `with_arguments`, kernel_names' second list).
// `stream` should be a blocking stream (cudaStreamCreate) so that a launch on the legacy stream
// fails, see above. Throws CudaError where the capture
// fails; the stream is out of capture mode again either way.
template <class Launch>
std::vector<std::string> run_captured(cudaStream_t stream, Launch&& launch,
                                      cudaStreamCaptureMode mode = cudaStreamCaptureModeGlobal,
                                      std::vector<std::string>* with_arguments = nullptr) {
  CUDA_CHECK(cudaStreamBeginCapture(stream, mode));
  cudaGraph_t graph = nullptr;
  try {
    launch();
  } catch (...) {
    cudaStreamEndCapture(stream, &graph);  // ends the capture; an invalidated one gives no graph
    if (graph) cudaGraphDestroy(graph);
    throw;
  }
  CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  const std::unique_ptr<CUgraph_st, decltype(&cudaGraphDestroy)> owned(graph, &cudaGraphDestroy);
  const std::vector<std::string> names = kernel_names(graph, with_arguments);
  cudaGraphExec_t exec = nullptr;
  CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  const std::unique_ptr<CUgraphExec_st, decltype(&cudaGraphExecDestroy)> owned_exec(
      exec, &cudaGraphExecDestroy);
  CUDA_CHECK(cudaGraphLaunch(exec, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  return names;
}

// Whether `names` holds `kernel`.
inline bool ran(const std::vector<std::string>& names, const std::string& kernel) {
  return std::find(names.begin(), names.end(), kernel) != names.end();
}

// The names, comma-separated, for messages.
inline std::string joined(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : ", ") + name;
  return text.empty() ? "no kernel" : text;
}

}  // namespace mnist::testing
