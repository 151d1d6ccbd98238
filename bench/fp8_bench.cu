// Times the FP8 GEMMs of chapters/20_fp8_gemm, 22_fp8_swap_ab and 24_fp8_two_parts against
// cuBLASLt's FP8 matmul (e4m3 in, fp32 out) in the same process, interleaved (interleaved.cuh).
//   bench_gemm_fp8 [--csv FILE] [--only PREFIX]
// The cases: the squares 4096^3 and 8192^3, and the hidden layers' products of a training step at
// batch 256 ("b256 h8192 L2 forward", ...). On the squares the promoted kernel is also timed
// against chapter 11's fp16 GEMM (linked in, through gemm()) on fp16 operands of the same shape,
// interleaved the same way: the fp16_* columns of the promoted rows. Each case twice: the kernel
// that promotes its sums to fp32 every K tile against cuBLASLt with CUBLASLT_MATMUL_DESC_FAST_ACCUM
// 0 (`promoted`), and the kernel that accumulates in the tensor cores across K against FAST_ACCUM 1
// (`fast`): like against like. Each result is first checked against cuBLASLt's on the same inputs.
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "20_fp8_gemm/fp8_gemm.cuh"
#include "22_fp8_swap_ab/fp8_swap_ab.cuh"
#include "24_fp8_two_parts/fp8_two_parts.cuh"
#include "cublaslt_fp8.cuh"
#include "cuda_check.cuh"
#include "event_timing.cuh"
#include "fp8.hpp"
#include "gemm_interface.cuh"
#include "gpu_info.hpp"
#include "interleaved.cuh"
#include "rng.hpp"

using namespace mnist;

namespace {

struct Case {
  std::string name;
  int m, n, k;
};

int run(int argc, char** argv) {
  std::string csv_path, only;
  const std::string usage = "usage: " + std::string(argv[0]) + " [--csv FILE] [--only PREFIX]";
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--csv" && i + 1 < argc) {
      csv_path = argv[++i];
    } else if (flag == "--only" && i + 1 < argc) {
      only = argv[++i];
    } else {
      throw std::invalid_argument("unknown option or missing value: " + flag + "; " + usage);
    }
  }
  const GpuInfo gpu = query_gpu();
  int device = 0;
  cudaDeviceProp properties{};
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaGetDeviceProperties(&properties, device));
  if (properties.major != 9 || properties.minor != 0) {
    throw std::runtime_error("FP8 wgmma needs an H100-class GPU with sm_90a code; this is " +
                             describe(gpu));
  }
  std::vector<Case> list;
  for (const Case& c :
       {Case{"square 4096", 4096, 4096, 4096}, Case{"square 8192", 8192, 8192, 8192},
        // The products of a training step of 784-h-h-h-10 at batch 256, as C = A B^T with both
        // operands K-major: forward (and backward data) of a hidden layer, its weight gradient,
        // and the first layer's forward.
        Case{"b256 h4096 L2 forward", 256, 4096, 4096},
        Case{"b256 h4096 L2 backward-weight", 4096, 4096, 256},
        Case{"b256 h8192 L1 forward", 256, 8192, 784},
        Case{"b256 h8192 L2 forward", 256, 8192, 8192},
        Case{"b256 h8192 L2 backward-weight", 8192, 8192, 256}}) {
    if (c.name.rfind(only, 0) == 0) list.push_back(c);
  }
  if (list.empty()) throw std::invalid_argument("no case starts with '" + only + "'");
  const std::string date = utc_date();
  std::printf("FP8 GEMM benchmark, chapters/20_fp8_gemm vs cuBLASLt | %s | %s\n",
              describe(gpu).c_str(), date.c_str());

  size_t most = 0;
  for (const Case& c : list) most = std::max({most, size_t(c.m) * c.k, size_t(c.n) * c.k});
  std::vector<uint8_t> host(most);
  SplitMix64 rng(2026);
  for (uint8_t& x : host) x = encode_fp8<E4m3>(2 * rng.uniform01() - 1);
  uint8_t *a = nullptr, *b = nullptr;
  float *c = nullptr, *c_ref = nullptr, *scales = nullptr;
  void* workspace = nullptr;
  size_t most_c = 0;
  for (const Case& c : list) most_c = std::max(most_c, size_t(c.m) * c.n);
  CUDA_CHECK(cudaMalloc(&a, most));
  CUDA_CHECK(cudaMalloc(&b, most));
  CUDA_CHECK(cudaMalloc(&c, most_c * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&c_ref, most_c * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&scales, 2 * kScaleStride * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&workspace, kLtWorkspaceBytes));
  CUDA_CHECK(cudaMemcpy(a, host.data(), most, cudaMemcpyHostToDevice));
  std::reverse(host.begin(), host.end());
  CUDA_CHECK(cudaMemcpy(b, host.data(), most, cudaMemcpyHostToDevice));
  // fp16 operands for chapter 11's GEMM, as large as the largest square's.
  size_t most_square = 0;
  for (const Case& c : list) {
    if (c.m == c.n && c.n == c.k) most_square = std::max(most_square, size_t(c.m) * c.k);
  }
  __half *a16 = nullptr, *b16 = nullptr;
  CUDA_CHECK(cudaMalloc(&a16, std::max<size_t>(most_square, 1) * sizeof(__half)));
  CUDA_CHECK(cudaMalloc(&b16, std::max<size_t>(most_square, 1) * sizeof(__half)));
  {
    std::vector<__half> halves(most_square);
    for (__half& x : halves) x = __float2half(2 * rng.uniform01() - 1);
    CUDA_CHECK(
        cudaMemcpy(a16, halves.data(), halves.size() * sizeof(__half), cudaMemcpyHostToDevice));
    CUDA_CHECK(
        cudaMemcpy(b16, halves.data(), halves.size() * sizeof(__half), cudaMemcpyHostToDevice));
  }
  const std::vector<float> unit(2 * kScaleStride, 1.0f);
  CUDA_CHECK(cudaMemcpy(scales, unit.data(), unit.size() * sizeof(float), cudaMemcpyHostToDevice));
  cublasLtHandle_t handle;
  lt_check(cublasLtCreate(&handle), "create");
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreate(&stream));
  Events events;
  CUDA_CHECK(cudaEventCreate(&events.start));
  CUDA_CHECK(cudaEventCreate(&events.stop));

  std::ofstream csv;
  if (!csv_path.empty()) {
    csv.open(csv_path);
    if (!csv) throw std::runtime_error("cannot write " + csv_path);
    csv << "date,gpu,max_sm_clock_mhz,driver,cuda_runtime,case,m,n,k,accumulation,fp8_graph_ms,"
           "fp8_graph_tflops,cublaslt_graph_ms,cublaslt_graph_tflops,graph_fraction_of_cublaslt,"
           "timing,pairs,cublaslt_graph_min_ms,cublaslt_graph_max_ms,sm_clock_min_mhz,"
           "sm_clock_max_mhz,fp16_graph_ms,fp16_graph_tflops,fp8_over_fp16,fp16_sm_clock_min_mhz,"
           "fp16_sm_clock_max_mhz\n";
  }
  std::printf("%-12s %-9s %9s %8s %11s %8s %8s %7s %9s\n", "case", "sums", "graph ms", "TFLOP/s",
              "cuBLASLt ms", "TFLOP/s", "% graph", "spread", "SM MHz");
  for (const Case& cs : list) {
    const Fp8Problem problem{cs.m, cs.n, cs.k, a, b, scales, scales + kScaleStride};
    Fp8Epilogue store;
    store.c = c;
    const double flops = 2.0 * cs.m * cs.n * cs.k;
    const auto tflops = [&](double ms) { return flops / ms / 1e9; };
    for (const bool promoted : {true, false}) {
      const LtFp8Gemm lt(handle, cs.m, cs.n, cs.k, scales, scales + kScaleStride, !promoted,
                         workspace);
      const auto theirs = [&] { lt.run(a, b, c_ref, stream); };
      // Checks `mine` against cuBLASLt, times the two interleaved, prints the row and starts its
      // CSV line.
      const auto time_against_cublaslt = [&](const char* sums, const auto& mine) {
        CUDA_CHECK(cudaMemsetAsync(c, 0xFF, size_t(cs.m) * cs.n * sizeof(float), stream));
        mine();
        theirs();
        CUDA_CHECK(cudaStreamSynchronize(stream));
        const double relative = relative_difference(c, c_ref, size_t(cs.m) * cs.n, stream);
        if (!(relative < 1e-3)) {
          throw std::runtime_error(cs.name + ": the FP8 kernel (" + sums +
                                   ") differs from cuBLASLt by " + std::to_string(relative) +
                                   " (relative); not timing it");
        }
        const Comparison timed = compare(mine, theirs, events, stream);
        std::printf(
            "%-12s %-9s %9.4f %8.1f %11.4f %8.1f %7.1f%% %6.1f%% %4d-%4d\n", cs.name.c_str(), sums,
            timed.mine.graph_ms, tflops(timed.mine.graph_ms), timed.theirs.graph_ms,
            tflops(timed.theirs.graph_ms), 100 * timed.theirs.graph_ms / timed.mine.graph_ms,
            100 * (timed.theirs.graph_max_ms - timed.theirs.graph_min_ms) / timed.theirs.graph_ms,
            timed.clock.min_mhz, timed.clock.max_mhz);
        std::fflush(stdout);
        if (csv) {
          csv << date << ",\"" << gpu.name << "\"," << gpu.max_sm_clock_mhz << ',' << gpu.driver
              << ',' << gpu.runtime_version << ',' << cs.name << ',' << cs.m << ',' << cs.n << ','
              << cs.k << ',' << sums << ',' << timed.mine.graph_ms << ','
              << tflops(timed.mine.graph_ms) << ',' << timed.theirs.graph_ms << ','
              << tflops(timed.theirs.graph_ms) << ',' << timed.theirs.graph_ms / timed.mine.graph_ms
              << ",interleaved," << kPairs << ',' << timed.theirs.graph_min_ms << ','
              << timed.theirs.graph_max_ms << ',' << timed.clock.min_mhz << ','
              << timed.clock.max_mhz;
        }
      };
      const auto mine = [&] {
        if (promoted) {
          fp8_gemm::launch_fp8_cluster_gemm<true>(problem, store, stream);
        } else {
          fp8_gemm::launch_fp8_cluster_gemm<false>(problem, store, stream);
        }
      };
      time_against_cublaslt(promoted ? "promoted" : "fast", mine);
      if (promoted && cs.m == cs.n && cs.n == cs.k) {  // against chapter 11's fp16 GEMM
        GemmProblem fp16;
        fp16.m = cs.m;
        fp16.n = cs.n;
        fp16.k = cs.k;
        fp16.a = a16;
        fp16.op_a = Op::N;
        fp16.b = b16;
        fp16.op_b = Op::T;
        fp16.c = c_ref;
        const Comparison against_fp16 = compare(
            mine, [&] { gemm(fp16, stream); }, events, stream);
        const double ratio = against_fp16.theirs.graph_ms / against_fp16.mine.graph_ms;
        std::printf("%-12s %-9s %9.4f %8.1f %11.4f %8.1f  fp8 / fp16 chapter 11: %.2fx %4d-%4d\n",
                    cs.name.c_str(), "vs fp16", against_fp16.mine.graph_ms,
                    tflops(against_fp16.mine.graph_ms), against_fp16.theirs.graph_ms,
                    tflops(against_fp16.theirs.graph_ms), ratio, against_fp16.clock.min_mhz,
                    against_fp16.clock.max_mhz);
        if (csv) {
          csv << ',' << against_fp16.theirs.graph_ms << ',' << tflops(against_fp16.theirs.graph_ms)
              << ',' << ratio << ',' << against_fp16.clock.min_mhz << ','
              << against_fp16.clock.max_mhz << '\n';
        }
      } else if (csv) {
        csv << ",,,,,\n";
      }
      if (promoted && cs.m <= swap_ab::kMaxBatch) {  // the skinny products' kernels as well
        time_against_cublaslt("swap_ab",
                              [&] { fp8_swap_ab::launch_fp8_swap_ab(problem, store, stream); });
        if (csv) csv << ",,,,,\n";
        time_against_cublaslt("two_parts",
                              [&] { fp8_two_parts::launch_fp8_two_parts(problem, store, stream); });
        if (csv) csv << ",,,,,\n";
      }
    }
  }
  CUDA_CHECK(cudaEventDestroy(events.start));
  CUDA_CHECK(cudaEventDestroy(events.stop));
  CUDA_CHECK(cudaStreamDestroy(stream));
  lt_check(cublasLtDestroy(handle), "destroy");
  for (void* p : {static_cast<void*>(a), static_cast<void*>(b), static_cast<void*>(c),
                  static_cast<void*>(c_ref), static_cast<void*>(scales), workspace,
                  static_cast<void*>(a16), static_cast<void*>(b16)}) {
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
