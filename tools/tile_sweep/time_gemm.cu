// The timer behind tools/tile_sweep/sweep.sh: one chapter's GEMM, built with other tile constants,
// on a few fixed shapes. Each shape is first checked on 2048 sampled elements against a float64
// dot product (the full tests run on the constants that win), then timed by CUDA-graph replay:
// kLaunchesPerGraph launches per replay, events around each replay, median of kReplays.
//   time_gemm M N K OPS [M N K OPS ...]     OPS: NT (forward), NN (backward data), TN (weight)
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuda_check.cuh"
#include "gemm_interface.cuh"
#include "rng.hpp"

using namespace mnist;

namespace {

constexpr int kLaunchesPerGraph = 20;
constexpr int kReplays = 15;
constexpr int kSampledElements = 2048;

Op parse_op(char c) {
  if (c == 'N' || c == 'T') return c == 'N' ? Op::N : Op::T;
  throw std::invalid_argument(std::string("OPS must be two of N/T, got ") + c);
}

// One element of C = op(A) op(B) in float64, operands stored as GemmProblem describes them.
double reference_element(const std::vector<__half>& a, const std::vector<__half>& b,
                         const GemmProblem& p, int row, int col, double& magnitude) {
  double sum = 0;
  magnitude = 0;
  for (int k = 0; k < p.k; ++k) {
    const double x =
        __half2float(a[p.op_a == Op::N ? size_t(row) * p.k + k : size_t(k) * p.m + row]);
    const double y =
        __half2float(b[p.op_b == Op::N ? size_t(k) * p.n + col : size_t(col) * p.k + k]);
    sum += x * y;
    magnitude += std::fabs(x * y);
  }
  return sum;
}

void time_shape(GemmProblem p, cudaStream_t stream) {
  SplitMix64 rng(p.m * 31 + p.n * 7 + p.k);
  std::vector<__half> a(size_t(p.m) * p.k), b(size_t(p.k) * p.n);
  for (__half& x : a) x = __float2half_rn(2 * rng.uniform01() - 1);
  for (__half& x : b) x = __float2half_rn(2 * rng.uniform01() - 1);
  __half *a_dev, *b_dev;
  float* c_dev;
  CUDA_CHECK(cudaMalloc(&a_dev, a.size() * sizeof(__half)));
  CUDA_CHECK(cudaMalloc(&b_dev, b.size() * sizeof(__half)));
  CUDA_CHECK(cudaMalloc(&c_dev, size_t(p.m) * p.n * sizeof(float)));
  CUDA_CHECK(cudaMemcpy(a_dev, a.data(), a.size() * sizeof(__half), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(b_dev, b.data(), b.size() * sizeof(__half), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemset(c_dev, 0xFF, size_t(p.m) * p.n * sizeof(float)));
  p.a = a_dev, p.b = b_dev, p.c = c_dev;

  gemm(p, stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<float> c(size_t(p.m) * p.n);
  CUDA_CHECK(cudaMemcpy(c.data(), c_dev, c.size() * sizeof(float), cudaMemcpyDeviceToHost));
  int wrong = 0;
  for (int s = 0; s < kSampledElements; ++s) {
    const int row = s == 0 ? p.m - 1 : int(rng.below(p.m)),
              col = s == 0 ? p.n - 1 : int(rng.below(p.n));
    double magnitude = 0;
    const double ref = reference_element(a, b, p, row, col, magnitude);
    const double error = std::fabs(c[size_t(row) * p.n + col] - ref);
    if (!(error <= (p.k + 1) * std::ldexp(1.0, -23) * magnitude)) ++wrong;
  }

  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < kLaunchesPerGraph; ++i) gemm(p, stream);
  CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  CUDA_CHECK(cudaGraphLaunch(exec, stream));  // warm-up
  std::vector<float> ms(kReplays);
  for (float& t : ms) {
    CUDA_CHECK(cudaEventRecord(start, stream));
    CUDA_CHECK(cudaGraphLaunch(exec, stream));
    CUDA_CHECK(cudaEventRecord(stop, stream));
    CUDA_CHECK(cudaEventSynchronize(stop));
    CUDA_CHECK(cudaEventElapsedTime(&t, start, stop));
  }
  std::nth_element(ms.begin(), ms.begin() + kReplays / 2, ms.end());
  const double us = 1000.0 * ms[kReplays / 2] / kLaunchesPerGraph;
  std::printf("  %5dx%5dx%5d %s%s %9.2f us %8.2f TFLOP/s%s\n", p.m, p.n, p.k, op_name(p.op_a),
              op_name(p.op_b), us, 2.0 * p.m * p.n * p.k / us / 1e6,
              wrong ? ("  WRONG: " + std::to_string(wrong) + " sampled elements").c_str() : "");
  CUDA_CHECK(cudaGraphExecDestroy(exec));
  CUDA_CHECK(cudaGraphDestroy(graph));
  for (void* ptr : {(void*)a_dev, (void*)b_dev, (void*)c_dev}) CUDA_CHECK(cudaFree(ptr));
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc < 5 || (argc - 1) % 4 != 0)
      throw std::invalid_argument("usage: time_gemm M N K OPS ...");
    if (!chapter_unsupported_here().empty()) throw std::runtime_error(chapter_unsupported_here());
    cudaStream_t stream;
    CUDA_CHECK(cudaStreamCreate(&stream));
    float* workspace;
    CUDA_CHECK(cudaMalloc(&workspace, kGemmWorkspaceFloats * sizeof(float)));
    for (int i = 1; i < argc; i += 4) {
      const std::string ops = argv[i + 3];
      if (ops.size() != 2) throw std::invalid_argument("OPS must be two letters, got " + ops);
      time_shape(
          {std::stoi(argv[i]), std::stoi(argv[i + 1]), std::stoi(argv[i + 2]), nullptr,
           parse_op(ops[0]), nullptr, parse_op(ops[1]), nullptr, workspace, kGemmWorkspaceFloats},
          stream);
    }
  } catch (const std::exception& error) {
    std::fprintf(stderr, "error: %s\n", error.what());
    return 1;
  }
  return 0;
}
