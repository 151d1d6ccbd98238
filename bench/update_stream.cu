// What DRAM gives the FP8 weight update's bytes when nothing else is asked of the SMs: the
// ceiling that lesson 23 holds its update against. An update of a rows x cols layer reads each
// fp32 master, writes it back and writes two one-byte copies (w and w_t): 10 bytes a weight, 4 of
// them read. Here a plain grid-stride kernel moves those bytes in that mix, every access
// coalesced (the byte copies written in place, not transposed), and cudaMemcpy moves 8 bytes a
// weight (4 read, 4 written) for comparison. Each line: the median of kRepeats timed launches
// (device events) after one untimed one.
//   bench_update_stream [--rows R] [--cols C] [--csv FILE]
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuda_check.cuh"
#include "event_timing.cuh"
#include "gpu_info.hpp"

namespace {

constexpr int kRepeats = 21;
constexpr int kThreads = 256;

// Four weights a thread: master -= lr * master (a stand-in for the gradient), then a byte of each
// new value (its top byte, a stand-in for its e4m3 code) into w and into w_t.
__global__ void update_stream_kernel(float4* master, uint32_t* w, uint32_t* w_t, size_t count4,
                                     float learning_rate) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count4;
       i += size_t(gridDim.x) * blockDim.x) {
    float4 v = master[i];
    v.x -= learning_rate * v.x;
    v.y -= learning_rate * v.y;
    v.z -= learning_rate * v.z;
    v.w -= learning_rate * v.w;
    master[i] = v;
    const uint32_t codes = __float_as_uint(v.x) >> 24 | (__float_as_uint(v.y) >> 24) << 8 |
                           (__float_as_uint(v.z) >> 24) << 16 | (__float_as_uint(v.w) >> 24) << 24;
    w[i] = codes;
    w_t[i] = codes;
  }
}

int parse(const char* value, const char* what) {
  const int n = std::atoi(value);
  if (n <= 0 || n % 4 != 0) {
    throw std::invalid_argument(std::string(what) + " takes a positive multiple of 4");
  }
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace mnist;
  try {
    int rows = 8192, cols = 8192;
    std::string csv;
    for (int a = 1; a < argc; ++a) {
      const std::string arg = argv[a];
      if (a + 1 >= argc) throw std::invalid_argument(arg + " needs a value");
      if (arg == "--rows") {
        rows = parse(argv[++a], "--rows");
      } else if (arg == "--cols") {
        cols = parse(argv[++a], "--cols");
      } else if (arg == "--csv") {
        csv = argv[++a];
      } else {
        throw std::invalid_argument("unknown argument " + arg);
      }
    }
    const size_t count = size_t(rows) * cols, count4 = count / 4;
    const GpuInfo gpu = query_gpu();
    std::printf("%s\n", describe(gpu).c_str());
    float4 *master, *copy;
    uint32_t *w, *w_t;
    CUDA_CHECK(cudaMalloc(&master, count * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&copy, count * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&w, count));
    CUDA_CHECK(cudaMalloc(&w_t, count));
    CUDA_CHECK(cudaMemset(master, 0x3C, count * sizeof(float)));  // 0.0116..., finite
    Events events;
    CUDA_CHECK(cudaEventCreate(&events.start));
    CUDA_CHECK(cudaEventCreate(&events.stop));
    const auto median_us = [&](auto work) {
      work();
      std::vector<double> us(kRepeats);
      for (double& t : us) t = 1e3 * elapsed_ms(work, events, nullptr);
      std::nth_element(us.begin(), us.begin() + kRepeats / 2, us.end());
      return us[kRepeats / 2];
    };
    std::string lines =
        "gpu,rows,cols,what,blocks_per_sm,bytes_per_weight,us,tb_per_s,sm_clock_mhz,date\n";
    const auto report = [&](const char* what, int blocks_per_sm, int bytes, double us) {
      char line[256];
      std::snprintf(line, sizeof line, "%s,%d,%d,%s,%d,%d,%.1f,%.3f,%d,%s\n", gpu.name.c_str(),
                    rows, cols, what, blocks_per_sm, bytes, us, bytes * double(count) / us / 1e6,
                    sm_clock_mhz(), utc_date().c_str());
      std::printf("%s", line);
      lines += line;
    };
    for (const int blocks_per_sm : {4, 8, 16, 32}) {
      const int blocks = gpu.multiprocessors * blocks_per_sm;
      report("update", blocks_per_sm, 10, median_us([&] {
               update_stream_kernel<<<blocks, kThreads>>>(master, w, w_t, count4, 1e-3f);
               CUDA_CHECK_LAUNCH();
             }));
    }
    report("memcpy", 0, 8, median_us([&] {
             CUDA_CHECK(
                 cudaMemcpyAsync(copy, master, count * sizeof(float), cudaMemcpyDeviceToDevice));
           }));
    CUDA_CHECK(cudaDeviceSynchronize());
    if (!csv.empty()) std::ofstream(csv) << lines;
    for (void* p : {static_cast<void*>(master), static_cast<void*>(copy), static_cast<void*>(w),
                    static_cast<void*>(w_t)}) {
      CUDA_CHECK(cudaFree(p));
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
