// Times a chapter's GEMM against cuBLAS (fp16 in, fp32 accumulate and out) in the same process.
//   bench_gemm_NN_name [--csv FILE] [--only PREFIX]
//     --only PREFIX    only the cases whose name starts with PREFIX (e.g. "square")
// The cases, all in one run:
//   square 4096 in the three layouts ("square 4096" is the forward one, as in earlier results)
//   and square 8192 (forward only);
//   the products of a training step of the 784-h-h-h-10 model for batch 32 and 256 and every
//   hidden width of the comparisons, 128 to 8192 ("b32 h1024 L2 forward", ...);
//   two shapes that only parallel K can fill an H100 with: "splitk 32x784x8192" (backward-data
//   layout) and "splitk 32x1024x1024" (forward layout).
// Each kernel is first checked against cuBLAS on the same random inputs, then timed two ways:
//   host:  launched one by one from the host, as the trainer does: CUDA events around groups of
//          launches after a warm-up, median of the groups; the chapter, then cuBLAS. A product
//          of a few microseconds is launch-bound here: the GPU waits for the host.
//   graph: up to kMaxLaunchesPerGraph launches captured into one CUDA graph; a burst replays it
//          for about kSampleMs. Bursts of the chapter and of cuBLAS alternate, kPairs pairs in
//          ABBA order, so that both run at the same clock: a large square heats the GPU and
//          lowers its clock, and whichever ran second would look slower. Per launch: the median
//          over each one's bursts, the GPU's own time, the honest number for small shapes.
// The SM clock is read during each burst; the CSV gives its range, cuBLAS's fastest and slowest
// burst (its own noise, against which to read the ratio) and the clock after the case.
// Every GEMM gets a workspace of kGemmWorkspaceFloats floats, as in the trainer. The MLP's
// operands fit in L2, as they do during training; the square ones do not.
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cublas/cublas_gemm.cuh"
#include "cuda_check.cuh"
#include "event_timing.cuh"
#include "gemm_interface.cuh"
#include "gpu_info.hpp"
#include "interleaved.cuh"
#include "rng.hpp"

using namespace mnist;

namespace {

// A square case whose first launch takes longer than this is not timed: timing takes about 40
// launches, and the whole benchmark should stay within a minute per chapter. The limit lies
// between chapter 01's 4096^3 (150 ms on an H100) and its 8192^3 (8 times that).
constexpr double kMaxSquareLaunchMs = 400.0;

struct Case {
  std::string name;
  int m, n, k;
  OperandOps ops;
  bool square;  // subject to kMaxSquareLaunchMs
};

std::vector<Case> cases() {
  std::vector<Case> list = {
      {"square 4096", 4096, 4096, 4096, kForward, true},
      {"square 4096 backward-data", 4096, 4096, 4096, kBackwardData, true},
      {"square 4096 backward-weight", 4096, 4096, 4096, kBackwardWeight, true},
      {"square 8192", 8192, 8192, 8192, kForward, true},
  };
  for (const int batch : {32, 256}) {
    for (const int hidden : {128, 256, 512, 1024, 2048, 4096, 8192}) {
      const std::string model = "b" + std::to_string(batch) + " h" + std::to_string(hidden) + " ";
      const int widths[] = {784, hidden, hidden, hidden, 10};
      for (int l = 0; l < 4; ++l) {
        const int in = widths[l], out = widths[l + 1];
        const std::string layer = model + "L" + std::to_string(l + 1) + " ";
        list.push_back({layer + "forward", batch, out, in, kForward, false});
        if (l > 0) list.push_back({layer + "backward-data", batch, in, out, kBackwardData, false});
        list.push_back({layer + "backward-weight", out, in, batch, kBackwardWeight, false});
      }
    }
  }
  list.push_back({"splitk 32x784x8192", 32, 784, 8192, kBackwardData, false});
  list.push_back({"splitk 32x1024x1024", 32, 1024, 1024, kForward, false});
  return list;
}

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
  if (!chapter_unsupported_here().empty()) throw std::runtime_error(chapter_unsupported_here());
  const std::string date = utc_date();
  std::printf("GEMM benchmark, chapter %s vs cuBLAS | %s | %s\n", chapter_name(),
              describe(gpu).c_str(), date.c_str());
  std::printf(
      "ms per product, launched one by one from the host (host) or replayed from a CUDA graph "
      "in %d pairs of\nbursts, chapter and cuBLAS alternating (graph); TFLOP/s from the graph "
      "times; %% of cuBLAS = cuBLAS time /\nchapter time; spread = (slowest - fastest) / median "
      "of cuBLAS's bursts; SM MHz = range read during the bursts\n",
      kPairs);

  std::vector<Case> list = cases();
  list.erase(std::remove_if(list.begin(), list.end(),
                            [&](const Case& c) { return c.name.rfind(only, 0) != 0; }),
             list.end());
  if (list.empty()) throw std::invalid_argument("no case starts with '" + only + "'");
  size_t most = 0;
  for (const Case& c : list)
    most = std::max({most, size_t(c.m) * c.k, size_t(c.k) * c.n, size_t(c.m) * c.n});
  std::vector<__half> host(most);
  SplitMix64 rng(2026);
  for (__half& x : host) x = __float2half_rn(2 * rng.uniform01() - 1);
  __half *a = nullptr, *b = nullptr;
  float *c = nullptr, *c_ref = nullptr, *workspace = nullptr;
  CUDA_CHECK(cudaMalloc(&a, most * sizeof(__half)));
  CUDA_CHECK(cudaMalloc(&b, most * sizeof(__half)));
  CUDA_CHECK(cudaMalloc(&c, most * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&c_ref, most * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&workspace, kGemmWorkspaceFloats * sizeof(float)));
  CUDA_CHECK(cudaMemcpy(a, host.data(), most * sizeof(__half), cudaMemcpyHostToDevice));
  std::reverse(host.begin(), host.end());
  CUDA_CHECK(cudaMemcpy(b, host.data(), most * sizeof(__half), cudaMemcpyHostToDevice));

  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreate(&stream));
  Events events;
  CUDA_CHECK(cudaEventCreate(&events.start));
  CUDA_CHECK(cudaEventCreate(&events.stop));

  std::ofstream csv;
  if (!csv_path.empty()) {
    csv.open(csv_path);
    if (!csv) throw std::runtime_error("cannot write " + csv_path);
    csv << "date,gpu,sm_clock_mhz,max_sm_clock_mhz,driver,cuda_runtime,chapter,case,m,n,k,op_a,"
           "op_b,chapter_ms,chapter_tflops,cublas_ms,cublas_tflops,fraction_of_cublas,"
           "chapter_graph_ms,chapter_graph_tflops,cublas_graph_ms,cublas_graph_tflops,"
           "graph_fraction_of_cublas,timing,pairs,cublas_graph_min_ms,cublas_graph_max_ms,"
           "sm_clock_min_mhz,sm_clock_max_mhz\n";
  }
  std::printf("%-29s %5s %5s %5s %9s %9s %8s %12s %12s %8s %7s %7s %7s %9s\n", "case", "M", "N",
              "K", "host ms", "graph ms", "TFLOP/s", "cuBLAS host", "cuBLAS graph", "TFLOP/s",
              "% host", "% graph", "spread", "SM MHz");
  for (const Case& cs : list) {
    GemmProblem problem{cs.m, cs.n, cs.k, a, cs.ops.a, b, cs.ops.b, c};
    problem.workspace = workspace;
    problem.workspace_floats = kGemmWorkspaceFloats;
    GemmProblem reference = problem;
    reference.c = c_ref;
    const size_t count = size_t(cs.m) * cs.n;
    CUDA_CHECK(cudaMemsetAsync(c, 0xFF, count * sizeof(float), stream));  // NaN where unwritten
    // The first launch, checked and timed: too slow a square case is not timed any further.
    const double first_ms = elapsed_ms([&] { gemm(problem, stream); }, events, stream);
    cublas_gemm(reference, stream);
    const double relative = relative_difference(c, c_ref, count, stream);
    if (!(relative < 1e-4)) {
      throw std::runtime_error(cs.name + ": chapter result differs from cuBLAS by " +
                               std::to_string(relative) + " (relative); not timing a wrong kernel");
    }
    if (cs.square && first_ms > kMaxSquareLaunchMs) {
      std::printf("%-29s %5d %5d %5d skipped: one launch took %.0f ms (> %.0f ms), not timed\n",
                  cs.name.c_str(), cs.m, cs.n, cs.k, first_ms, kMaxSquareLaunchMs);
      continue;
    }
    const Comparison timed = compare([&] { gemm(problem, stream); },
                                     [&] { cublas_gemm(reference, stream); }, events, stream);
    const Timing& mine = timed.mine;
    const Timing& theirs = timed.theirs;
    const double flops = 2.0 * cs.m * cs.n * cs.k;
    auto tflops = [&](double ms) { return flops / ms / 1e9; };
    std::printf(
        "%-29s %5d %5d %5d %9.4f %9.4f %8.2f %12.4f %12.4f %8.2f %6.1f%% %6.1f%% %6.1f%% "
        "%4d-%4d\n",
        cs.name.c_str(), cs.m, cs.n, cs.k, mine.host_ms, mine.graph_ms, tflops(mine.graph_ms),
        theirs.host_ms, theirs.graph_ms, tflops(theirs.graph_ms),
        100 * theirs.host_ms / mine.host_ms, 100 * theirs.graph_ms / mine.graph_ms,
        100 * (theirs.graph_max_ms - theirs.graph_min_ms) / theirs.graph_ms, timed.clock.min_mhz,
        timed.clock.max_mhz);
    std::fflush(stdout);
    if (csv) {
      // The clock at the end of this case: it can drop over a long run as the GPU heats up.
      const int clock_mhz = sm_clock_mhz();
      csv << date << ",\"" << gpu.name << "\"," << clock_mhz << ',' << gpu.max_sm_clock_mhz << ','
          << gpu.driver << ',' << gpu.runtime_version << ',' << chapter_name() << ',' << cs.name
          << ',' << cs.m << ',' << cs.n << ',' << cs.k << ',' << op_name(cs.ops.a) << ','
          << op_name(cs.ops.b) << ',' << mine.host_ms << ',' << tflops(mine.host_ms) << ','
          << theirs.host_ms << ',' << tflops(theirs.host_ms) << ',' << theirs.host_ms / mine.host_ms
          << ',' << mine.graph_ms << ',' << tflops(mine.graph_ms) << ',' << theirs.graph_ms << ','
          << tflops(theirs.graph_ms) << ',' << theirs.graph_ms / mine.graph_ms << ",interleaved,"
          << kPairs << ',' << theirs.graph_min_ms << ',' << theirs.graph_max_ms << ','
          << timed.clock.min_mhz << ',' << timed.clock.max_mhz << '\n';
    }
  }
  std::printf("SM clock after the run: %d MHz\n", sm_clock_mhz());
  CUDA_CHECK(cudaEventDestroy(events.start));
  CUDA_CHECK(cudaEventDestroy(events.stop));
  CUDA_CHECK(cudaStreamDestroy(stream));
  for (void* p : {static_cast<void*>(a), static_cast<void*>(b), static_cast<void*>(c),
                  static_cast<void*>(c_ref), static_cast<void*>(workspace)}) {
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
