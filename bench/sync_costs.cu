// What it costs to separate two pieces of dependent work on the GPU, the numbers behind chapter
// 16 (its lesson, "What a launch and a barrier cost"):
//   launch   an empty kernel after an empty kernel, launched from the host one by one
//   graph    the same kernels as the nodes of one CUDA graph, a chain, replayed
//   barrier  one grid barrier inside a cooperative kernel, by scheme and by the number of blocks:
//     release_acquire  chapter 16's (grid_barrier.cuh): one word, one atom.add.release per block,
//                      ld.acquire to wait
//     fence_sc_flip    the same word and arithmetic, with __threadfence() (fence.sc) before a plain
//                      atomicAdd and after a volatile wait
//     fence_sc_reset   a classic barrier: fence.sc, a count that the last block resets
//                      and a generation it bumps, which the others wait on
// Each figure is the median of kRepeats timed runs (device events) of kCount of the thing, after
// one untimed run, divided by kCount.
//   bench_sync_costs [--csv FILE]
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "16_persistent_step/grid_barrier.cuh"
#include "cuda_check.cuh"
#include "event_timing.cuh"
#include "gpu_info.hpp"

namespace {

using mnist::persistent_step::grid_barrier;
using mnist::persistent_step::kTopBit;

constexpr int kCount = 2000;  // launches, nodes or barriers in one timed run
constexpr int kRepeats = 9;
constexpr int kThreads = 256;  // chapter 16's block

__global__ void empty_kernel() {}

__device__ __forceinline__ void fence_sc_flip_barrier(unsigned* count) {
  __syncthreads();
  if (threadIdx.x == 0) {
    const unsigned add = blockIdx.x == 0 ? kTopBit - (gridDim.x - 1) : 1u;
    __threadfence();
    const unsigned arrived = atomicAdd(count, add);
    const volatile unsigned* now = count;
    while (((*now ^ arrived) & kTopBit) == 0) {
    }
    __threadfence();
  }
  __syncthreads();
}

// words[0]: blocks arrived, words[1]: the generation.
__device__ __forceinline__ void fence_sc_reset_barrier(unsigned* words) {
  __syncthreads();
  if (threadIdx.x == 0) {
    volatile unsigned* generation = &words[1];
    const unsigned seen = *generation;
    __threadfence();
    if (atomicAdd(&words[0], 1) == gridDim.x - 1) {
      atomicExch(&words[0], 0);
      __threadfence();
      atomicAdd(&words[1], 1);
    } else {
      while (*generation == seen) {
      }
    }
    __threadfence();
  }
  __syncthreads();
}

enum Scheme { kReleaseAcquire, kFenceScFlip, kFenceScReset };
const char* const kSchemeNames[] = {"release_acquire", "fence_sc_flip", "fence_sc_reset"};

__global__ void barriers_kernel(unsigned* words, Scheme scheme, int count) {
  for (int i = 0; i < count; ++i) {
    if (scheme == kReleaseAcquire) grid_barrier(&words[0]);
    if (scheme == kFenceScFlip) fence_sc_flip_barrier(&words[1]);
    if (scheme == kFenceScReset) fence_sc_reset_barrier(&words[2]);
  }
}

// Median over kRepeats of the microseconds per item of `run`, which does kCount items on stream.
template <class Run>
double median_us(cudaStream_t stream, Run run) {
  mnist::Events events;
  CUDA_CHECK(cudaEventCreate(&events.start));
  CUDA_CHECK(cudaEventCreate(&events.stop));
  run();  // warm-up
  std::vector<double> us;
  for (int r = 0; r < kRepeats; ++r) {
    us.push_back(1000.0 * mnist::elapsed_ms(run, events, stream) / kCount);
  }
  CUDA_CHECK(cudaEventDestroy(events.start));
  CUDA_CHECK(cudaEventDestroy(events.stop));
  std::sort(us.begin(), us.end());
  return us[kRepeats / 2];
}

}  // namespace

int main(int argc, char** argv) {
  try {
    std::string csv_path;
    for (int i = 1; i < argc; ++i) {
      const std::string flag = argv[i];
      if (flag == "--csv" && i + 1 < argc) {
        csv_path = argv[++i];
      } else {
        throw std::invalid_argument("unknown option or missing value: " + flag +
                                    "; usage: bench_sync_costs [--csv FILE]");
      }
    }
    const mnist::GpuInfo gpu = mnist::query_gpu();
    int device = 0, cooperative = 0, per_sm = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, device));
    if (!cooperative) throw std::runtime_error("this GPU offers no cooperative launch");
    CUDA_CHECK(
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, barriers_kernel, kThreads, 0));
    const std::string date = mnist::utc_date();
    std::printf("launch, graph node and grid barrier costs | %s | %s\n",
                mnist::describe(gpu).c_str(), date.c_str());

    cudaStream_t stream;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    struct Row {
      std::string what, scheme;
      int blocks;
      double us;
    };
    std::vector<Row> rows;

    rows.push_back({"launch", "", 1, median_us(stream, [&] {
                      for (int i = 0; i < kCount; ++i) {
                        empty_kernel<<<1, kThreads, 0, stream>>>();
                        CUDA_CHECK_LAUNCH();
                      }
                    })});

    cudaGraph_t graph;
    CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    for (int i = 0; i < kCount; ++i) empty_kernel<<<1, kThreads, 0, stream>>>();
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
    cudaGraphExec_t exec;
    CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    rows.push_back(
        {"graph", "", 1, median_us(stream, [&] { CUDA_CHECK(cudaGraphLaunch(exec, stream)); })});
    CUDA_CHECK(cudaGraphExecDestroy(exec));
    CUDA_CHECK(cudaGraphDestroy(graph));

    unsigned* words = nullptr;
    CUDA_CHECK(cudaMalloc(&words, 4 * sizeof(unsigned)));
    CUDA_CHECK(cudaMemset(words, 0, 4 * sizeof(unsigned)));
    const int resident = gpu.multiprocessors * per_sm;
    for (int blocks : {1, 4, 16, 32, 64, 116, gpu.multiprocessors, 2 * gpu.multiprocessors}) {
      if (blocks > resident) continue;
      for (Scheme scheme : {kReleaseAcquire, kFenceScFlip, kFenceScReset}) {
        int count = kCount;
        void* args[] = {&words, &scheme, &count};
        rows.push_back({"barrier", kSchemeNames[scheme], blocks, median_us(stream, [&] {
                          CUDA_CHECK(
                              cudaLaunchCooperativeKernel(reinterpret_cast<void*>(barriers_kernel),
                                                          blocks, kThreads, args, 0, stream));
                        })});
      }
    }
    CUDA_CHECK(cudaFree(words));
    CUDA_CHECK(cudaStreamDestroy(stream));

    const int sm_clock_mhz = mnist::query_gpu().sm_clock_mhz;
    std::printf("%-8s %-16s %6s %10s\n", "what", "scheme", "blocks", "us each");
    for (const Row& r : rows) {
      std::printf("%-8s %-16s %6d %10.3f\n", r.what.c_str(), r.scheme.c_str(), r.blocks, r.us);
    }
    std::printf("SM clock after the run: %d MHz\n", sm_clock_mhz);
    if (!csv_path.empty()) {
      std::ofstream csv(csv_path);
      if (!csv) throw std::runtime_error("cannot write " + csv_path);
      csv << "date,gpu,sm_clock_mhz,driver,cuda_runtime,what,scheme,blocks,threads,us_each\n";
      for (const Row& r : rows) {
        csv << date << ",\"" << gpu.name << "\"," << sm_clock_mhz << ',' << gpu.driver << ','
            << gpu.runtime_version << ',' << r.what << ',' << r.scheme << ',' << r.blocks << ','
            << kThreads << ',' << r.us << '\n';
      }
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
