// The device's e4m3 quantisation (common/fp8_quantise.cuh) against common/fp8.hpp's: every
// code pair quantise_pair writes equals encode_fp8<E4m3>(x * scale) for floats over the whole e4m3
// range and beyond (ties, saturation, subnormals, NaN), at several power-of-two scales; and the
// amax record_amax leaves equals the largest |x| of a warp's values, however the warp holds them.
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "check.hpp"
#include "cuda_check.cuh"
#include "fp8.hpp"
#include "fp8_quantise.cuh"
#include "rng.hpp"

using namespace mnist;

namespace {

__global__ void quantise_kernel(const float* x, int pairs, float scale, uint16_t* codes,
                                unsigned* amax) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const bool inside = i < pairs;
  const float a = inside ? x[2 * i] : 0.0f, b = inside ? x[2 * i + 1] : 0.0f;
  if (inside) codes[i] = quantise_pair(a, b, scale);
  record_amax(amax, std::isnan(a) || std::isnan(b) ? 0.0f : fmaxf(fabsf(a), fabsf(b)));
#else
  __trap();
#endif
}

// Code pairs equal, a NaN taken as any NaN: cvt writes e4m3's one NaN code 0x7F whatever the sign.
bool same_codes(uint16_t got, uint16_t want) {
  for (int shift : {0, 8}) {
    const uint32_t g = got >> shift & 0xFF, w = want >> shift & 0xFF;
    const bool nan_g = (g & 0x7F) == E4m3::kNanCode, nan_w = (w & 0x7F) == E4m3::kNanCode;
    if (nan_g != nan_w || (!nan_w && g != w)) return false;
  }
  return true;
}

}  // namespace

int main() {
  int device = 0;
  cudaDeviceProp properties{};
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaGetDeviceProperties(&properties, device) != cudaSuccess) {
    return testing::skip("fp8_quantise", "no CUDA GPU");
  }
  if (properties.major * 10 + properties.minor < 89) {
    return testing::skip("fp8_quantise", "cvt to e4m3 needs sm_89 or later");
  }
  std::vector<float> x;
  for (float edge : {0.0f, -0.0f, 448.0f, 464.0f, 480.0f, 1e9f, 0x1p-9f, 0x1p-10f, 0x1.8p-10f,
                     0x1.1p-7f, 0x1.2p-7f, 0x1.3p-7f, NAN, INFINITY}) {
    x.push_back(edge);
    x.push_back(-edge);
  }
  SplitMix64 rng(89);
  while (x.size() < (1u << 20)) {
    x.push_back(std::ldexp(1.0f + rng.uniform01(), int(rng.uniform01() * 40) - 20) *
                (rng.uniform01() < 0.5f ? -1.0f : 1.0f));
  }
  const int pairs = int(x.size() / 2);
  float* d_x;
  uint16_t* d_codes;
  unsigned* d_amax;
  CUDA_CHECK(cudaMalloc(&d_x, x.size() * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&d_codes, pairs * sizeof(uint16_t)));
  CUDA_CHECK(cudaMalloc(&d_amax, sizeof(unsigned)));
  CUDA_CHECK(cudaMemcpy(d_x, x.data(), x.size() * sizeof(float), cudaMemcpyHostToDevice));
  float largest = 0.0f;
  for (float v : x) {
    if (!std::isnan(v)) largest = std::fmax(largest, std::fabs(v));
  }
  for (float scale : {1.0f, 0x1p-12f, 0x1p7f, 0x1p20f}) {
    CUDA_CHECK(cudaMemset(d_amax, 0, sizeof(unsigned)));
    quantise_kernel<<<(pairs + 255) / 256, 256>>>(d_x, pairs, scale, d_codes, d_amax);
    CUDA_CHECK(cudaGetLastError());
    std::vector<uint16_t> codes(pairs);
    unsigned amax_bits = 0;
    CUDA_CHECK(cudaMemcpy(codes.data(), d_codes, pairs * sizeof(uint16_t), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(&amax_bits, d_amax, sizeof amax_bits, cudaMemcpyDeviceToHost));
    long wrong = 0;
    std::string first;
    for (int i = 0; i < pairs; ++i) {
      const uint16_t want = uint16_t(encode_fp8<E4m3>(x[2 * i] * scale) |
                                     encode_fp8<E4m3>(x[2 * i + 1] * scale) << 8);
      if (!same_codes(codes[i], want) && wrong++ == 0) {
        char line[160];
        std::snprintf(line, sizeof line, "%a, %a at scale %a: 0x%04x, want 0x%04x", x[2 * i],
                      x[2 * i + 1], scale, codes[i], want);
        first = line;
      }
    }
    CHECK_MSG(wrong == 0, std::to_string(wrong) + " pairs differ, first " + first);
    float amax = 0.0f;
    std::memcpy(&amax, &amax_bits, sizeof amax);
    CHECK_MSG(amax == largest,
              "amax " + std::to_string(amax) + ", want " + std::to_string(largest));
  }
  for (void* p :
       {static_cast<void*>(d_x), static_cast<void*>(d_codes), static_cast<void*>(d_amax)}) {
    CUDA_CHECK(cudaFree(p));
  }
  return testing::finish("fp8_quantise");
}
