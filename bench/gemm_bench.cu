// Times a chapter's GEMM against cuBLAS (fp16 in, fp32 accumulate and out) in the same process,
// on fixed shapes: 4096^3 and the products of the default model's training step.
//   bench_gemm_NN_name [--csv FILE] [--hidden H] [--batch B]
// Each kernel is first checked against cuBLAS on the same random inputs, then timed: CUDA events
// around groups of launches, after a warm-up, median of the groups. The MLP's operands fit in
// L2, as they do during training; 4096^3 does not.
#include <cublas_v2.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuda_check.cuh"
#include "gemm_interface.cuh"
#include "gpu_info.hpp"
#include "options.hpp"
#include "rng.hpp"

using namespace mnist;

namespace {

constexpr int kWarmupLaunches = 3;
constexpr int kSamples = 15;
constexpr double kSampleMs = 2.0;  // launches per sample are chosen to fill about this long

void cublas_check(cublasStatus_t status, const char* call) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw std::runtime_error(std::string(call) + " failed with cuBLAS status " +
                             std::to_string(status));
  }
}
#define CUBLAS_CHECK(call) cublas_check((call), #call)

struct Case {
  std::string name;
  int m, n, k;
  OperandOps ops;
};

// Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: swap the operands and read
// each row-major matrix as its column-major transpose.
void cublas_gemm(cublasHandle_t handle, const GemmProblem& p) {
  const float one = 1.0f, zero = 0.0f;
  const cublasOperation_t op_b = p.op_b == Op::N ? CUBLAS_OP_N : CUBLAS_OP_T;
  const cublasOperation_t op_a = p.op_a == Op::N ? CUBLAS_OP_N : CUBLAS_OP_T;
  const int ld_b = p.op_b == Op::N ? p.n : p.k;
  const int ld_a = p.op_a == Op::N ? p.k : p.m;
  CUBLAS_CHECK(cublasGemmEx(handle, op_b, op_a, p.n, p.m, p.k, &one, p.b, CUDA_R_16F, ld_b, p.a,
                            CUDA_R_16F, ld_a, &zero, p.c, CUDA_R_32F, p.n, CUBLAS_COMPUTE_32F,
                            CUBLAS_GEMM_DEFAULT));
}

template <class Launch>
double median_ms(Launch launch, cudaStream_t stream) {
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  for (int i = 0; i < kWarmupLaunches; ++i) launch();
  CUDA_CHECK(cudaEventRecord(start, stream));
  launch();
  CUDA_CHECK(cudaEventRecord(stop, stream));
  CUDA_CHECK(cudaEventSynchronize(stop));
  float once = 0;
  CUDA_CHECK(cudaEventElapsedTime(&once, start, stop));
  const int per_sample = std::clamp(static_cast<int>(kSampleMs / std::max(once, 1e-3f)), 1, 1000);
  std::vector<double> samples;
  for (int s = 0; s < kSamples; ++s) {
    CUDA_CHECK(cudaEventRecord(start, stream));
    for (int i = 0; i < per_sample; ++i) launch();
    CUDA_CHECK(cudaEventRecord(stop, stream));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    samples.push_back(ms / per_sample);
  }
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  std::nth_element(samples.begin(), samples.begin() + kSamples / 2, samples.end());
  return samples[kSamples / 2];
}

std::vector<Case> cases(int hidden, int batch) {
  const std::string h = std::to_string(hidden), b = std::to_string(batch);
  std::vector<Case> list = {{"square 4096", 4096, 4096, 4096, kForward}};
  const int widths[] = {784, hidden, hidden, hidden, 10};
  for (int l = 0; l < 4; ++l) {
    const int in = widths[l], out = widths[l + 1];
    const std::string layer = "L" + std::to_string(l + 1) + " ";
    list.push_back({layer + "forward", batch, out, in, kForward});
    if (l > 0) list.push_back({layer + "backward-data", batch, in, out, kBackwardData});
    list.push_back({layer + "backward-weight", out, in, batch, kBackwardWeight});
  }
  return list;
}

std::string today() {
  const std::time_t now = std::time(nullptr);
  char text[16];
  std::strftime(text, sizeof text, "%Y-%m-%d", std::gmtime(&now));
  return text;
}

int run(int argc, char** argv) {
  std::string csv_path;
  int hidden = 1024, batch = 32;
  const std::string usage =
      "usage: " + std::string(argv[0]) + " [--csv FILE] [--hidden H] [--batch B]";
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) throw std::invalid_argument(usage);
    if (flag == "--csv") {
      csv_path = argv[++i];
    } else if (flag == "--hidden") {
      hidden = static_cast<int>(parse_integer(flag, argv[++i], 1, 1 << 16));
    } else if (flag == "--batch") {
      batch = static_cast<int>(parse_integer(flag, argv[++i], 1, 1 << 16));
    } else {
      throw std::invalid_argument("unknown option " + flag + "; " + usage);
    }
  }
  const GpuInfo gpu = query_gpu();
  std::printf("GEMM benchmark, chapter %s vs cuBLAS | %s | %s\n", chapter_name(),
              describe(gpu).c_str(), today().c_str());

  const std::vector<Case> list = cases(hidden, batch);
  size_t most = 0;
  for (const Case& c : list)
    most = std::max({most, size_t(c.m) * c.k, size_t(c.k) * c.n, size_t(c.m) * c.n});
  std::vector<__half> host(most);
  SplitMix64 rng(2026);
  for (__half& x : host) x = __float2half_rn(2 * rng.uniform01() - 1);
  __half *a = nullptr, *b = nullptr;
  float *c = nullptr, *c_ref = nullptr;
  CUDA_CHECK(cudaMalloc(&a, most * sizeof(__half)));
  CUDA_CHECK(cudaMalloc(&b, most * sizeof(__half)));
  CUDA_CHECK(cudaMalloc(&c, most * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&c_ref, most * sizeof(float)));
  CUDA_CHECK(cudaMemcpy(a, host.data(), most * sizeof(__half), cudaMemcpyHostToDevice));
  std::reverse(host.begin(), host.end());
  CUDA_CHECK(cudaMemcpy(b, host.data(), most * sizeof(__half), cudaMemcpyHostToDevice));

  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreate(&stream));
  cublasHandle_t handle;
  CUBLAS_CHECK(cublasCreate(&handle));
  CUBLAS_CHECK(cublasSetStream(handle, stream));

  std::ofstream csv;
  if (!csv_path.empty()) {
    csv.open(csv_path);
    if (!csv) throw std::runtime_error("cannot write " + csv_path);
    csv << "date,gpu,sm_clock_mhz,max_sm_clock_mhz,driver,cuda_runtime,chapter,case,m,n,k,op_a,"
           "op_b,chapter_ms,chapter_tflops,cublas_ms,cublas_tflops,fraction_of_cublas\n";
  }
  std::printf("%-22s %6s %6s %6s %11s %9s %11s %9s %8s\n", "case", "M", "N", "K", "chapter ms",
              "TFLOP/s", "cuBLAS ms", "TFLOP/s", "ratio");
  for (const Case& cs : list) {
    const GemmProblem problem{cs.m, cs.n, cs.k, a, cs.ops.a, b, cs.ops.b, c};
    GemmProblem reference = problem;
    reference.c = c_ref;
    const size_t count = size_t(cs.m) * cs.n;
    CUDA_CHECK(cudaMemsetAsync(c, 0xFF, count * sizeof(float), stream));
    gemm(problem, stream);
    cublas_gemm(handle, reference);
    std::vector<float> mine(count), theirs(count);
    CUDA_CHECK(
        cudaMemcpyAsync(mine.data(), c, count * sizeof(float), cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaMemcpyAsync(theirs.data(), c_ref, count * sizeof(float), cudaMemcpyDeviceToHost,
                               stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    double error = 0, norm = 0;
    for (size_t i = 0; i < count; ++i) {
      error += (double(mine[i]) - theirs[i]) * (double(mine[i]) - theirs[i]);
      norm += double(theirs[i]) * theirs[i];
    }
    const double relative = std::sqrt(error / norm);
    if (!(relative < 1e-4)) {
      throw std::runtime_error(cs.name + ": chapter result differs from cuBLAS by " +
                               std::to_string(relative) + " (relative); not timing a wrong kernel");
    }
    const double ms = median_ms([&] { gemm(problem, stream); }, stream);
    const double cublas_ms = median_ms([&] { cublas_gemm(handle, reference); }, stream);
    const double flops = 2.0 * cs.m * cs.n * cs.k;
    const double tflops = flops / ms / 1e9, cublas_tflops = flops / cublas_ms / 1e9;
    std::printf("%-22s %6d %6d %6d %11.4f %9.2f %11.4f %9.2f %7.1f%%\n", cs.name.c_str(), cs.m,
                cs.n, cs.k, ms, tflops, cublas_ms, cublas_tflops, 100 * cublas_ms / ms);
    if (csv) {
      csv << today() << ",\"" << gpu.name << "\"," << gpu.sm_clock_mhz << ','
          << gpu.max_sm_clock_mhz << ',' << gpu.driver << ',' << gpu.runtime_version << ','
          << chapter_name() << ',' << cs.name << ',' << cs.m << ',' << cs.n << ',' << cs.k << ','
          << op_name(cs.ops.a) << ',' << op_name(cs.ops.b) << ',' << ms << ',' << tflops << ','
          << cublas_ms << ',' << cublas_tflops << ',' << cublas_ms / ms << '\n';
    }
  }
  std::printf("SM clock after the run: %d MHz\n", query_gpu().sm_clock_mhz);
  CUBLAS_CHECK(cublasDestroy(handle));
  CUDA_CHECK(cudaStreamDestroy(stream));
  for (void* p : {static_cast<void*>(a), static_cast<void*>(b), static_cast<void*>(c),
                  static_cast<void*>(c_ref)}) {
    CUDA_CHECK(cudaFree(p));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "error: %s\n", error.what());
    return 1;
  }
}
