// The CPU reference's round_to_half against the GPU's own conversion (__float2half_rn), on
// random floats across the whole fp16 range, subnormals and overflow included.
#include <cuda_fp16.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "check.hpp"
#include "cuda_check.cuh"
#include "gpu_info.hpp"
#include "half.hpp"
#include "rng.hpp"

using namespace mnist;

namespace {

__global__ void round_kernel(const float* x, int count, float* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) out[i] = __half2float(__float2half_rn(x[i]));
}

}  // namespace

int main() {
  if (!gpu_available()) return testing::skip("half_gpu", "no CUDA device");
  try {
    constexpr int kCount = 1 << 20;
    SplitMix64 rng(11);
    std::vector<float> x(kCount);
    for (float& v : x) {
      const float mantissa = 2 * rng.uniform01() - 1;
      v = std::ldexp(mantissa, static_cast<int>(rng.below(48)) - 30);  // 2^-31 .. 2^17
    }
    float *x_dev = nullptr, *out_dev = nullptr;
    CUDA_CHECK(cudaMalloc(&x_dev, kCount * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&out_dev, kCount * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(x_dev, x.data(), kCount * sizeof(float), cudaMemcpyHostToDevice));
    round_kernel<<<kCount / 256, 256>>>(x_dev, kCount, out_dev);
    CUDA_CHECK_LAUNCH();
    std::vector<float> gpu(kCount);
    CUDA_CHECK(cudaMemcpy(gpu.data(), out_dev, kCount * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(x_dev));
    CUDA_CHECK(cudaFree(out_dev));
    int mismatches = 0;
    for (int i = 0; i < kCount; ++i) {
      const float cpu = round_to_half(x[i]);
      if (std::memcmp(&cpu, &gpu[i], sizeof cpu) != 0 && mismatches++ < 5) {
        std::printf("x = %a: CPU %a, GPU %a\n", x[i], cpu, gpu[i]);
      }
    }
    CHECK_MSG(mismatches == 0, std::to_string(mismatches) + " of 2^20 values round differently");
  } catch (const std::exception& error) {
    CHECK_MSG(false, error.what());
  }
  return testing::finish("half_gpu");
}
