// The FP8 GEMM (chapters/20_fp8/fp8_gemm.cuh) against float64: random inputs of several binades,
// quantised to e4m3 with a per-tensor power-of-two scale as the trainer would, multiplied on the
// GPU, compared with the float64 product of the very values the codes stand for. Shapes: M = 1,
// primes, N = 10, K = 784, tails of every tile. Every element of C is poisoned (NaN) first.
//   test_gemm_fp8 [sweep]   sweep: the largest error as K grows, with and without promotion
// The tolerance: the products of two e4m3 values are exact in fp32, so the error is the sums'.
// With promotion, fp32 adds of one partial sum per K tile of 128 (at most 2^-24 of the running
// total each) plus whatever the tensor cores lose inside a K tile; measured, not yet derived.
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "20_fp8/fp8_format.hpp"
#include "20_fp8/fp8_gemm.cuh"
#include "check.hpp"
#include "cuda_check.cuh"
#include "reference_gemm.hpp"
#include "rng.hpp"

using namespace mnist;

namespace {

struct Quantised {
  std::vector<uint8_t> codes;
  std::vector<double> values;  // what the codes stand for, unscaled
  float unscale;               // 1 / the scale: C's factor
};

// rows x k values spread over 2^-6 .. 2^6 with random signs, quantised with one scale.
Quantised quantise(int rows, int k, SplitMix64& rng) {
  std::vector<float> x(size_t(rows) * k);
  float amax = 0.0f;
  for (float& v : x) {
    v = std::ldexp(1.0f + rng.uniform01(), int(rng.uniform01() * 13) - 6) *
        (rng.uniform01() < 0.5f ? -1.0f : 1.0f);
    amax = std::fmax(amax, std::fabs(v));
  }
  const float scale = fp8_scale(amax, kE4m3Max);
  Quantised q{std::vector<uint8_t>(x.size()), std::vector<double>(x.size()), 1.0f / scale};
  for (size_t i = 0; i < x.size(); ++i) {
    q.codes[i] = encode_fp8<E4m3>(x[i] * scale);
    q.values[i] = double(decode_fp8<E4m3>(q.codes[i])) / scale;
  }
  return q;
}

// The largest |C - reference| / sum_k |a b| over the product (the error relative to the size of
// the terms it adds), and the count of elements that are not finite.
struct Error {
  double worst = 0.0;
  long not_finite = 0;
};

template <bool kPromote>
Error run(int m, int n, int k, uint64_t seed) {
  SplitMix64 rng(seed);
  const Quantised a = quantise(m, k, rng), b = quantise(n, k, rng);
  std::vector<double> c_ref(size_t(m) * n), abs_a(a.values.size()), abs_b(b.values.size()),
      c_abs(size_t(m) * n);
  reference_gemm(m, n, k, a.values.data(), Op::N, b.values.data(), Op::T, c_ref.data());
  for (size_t i = 0; i < abs_a.size(); ++i) abs_a[i] = std::fabs(a.values[i]);
  for (size_t i = 0; i < abs_b.size(); ++i) abs_b[i] = std::fabs(b.values[i]);
  reference_gemm(m, n, k, abs_a.data(), Op::N, abs_b.data(), Op::T, c_abs.data());

  uint8_t *d_a, *d_b;
  float *d_c, *d_scales;
  CUDA_CHECK(cudaMalloc(&d_a, a.codes.size()));
  CUDA_CHECK(cudaMalloc(&d_b, b.codes.size()));
  CUDA_CHECK(cudaMalloc(&d_c, sizeof(float) * m * n));
  CUDA_CHECK(cudaMalloc(&d_scales, 2 * sizeof(float)));
  const float scales[2] = {a.unscale, b.unscale};
  CUDA_CHECK(cudaMemcpy(d_a, a.codes.data(), a.codes.size(), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d_b, b.codes.data(), b.codes.size(), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d_scales, scales, sizeof scales, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemset(d_c, 0xFF, sizeof(float) * m * n));  // NaN everywhere
  fp8::launch_fp8_gemm<kPromote>({m, n, k, d_a, d_b, d_scales, d_scales + 1, d_c}, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<float> c(size_t(m) * n);
  CUDA_CHECK(cudaMemcpy(c.data(), d_c, sizeof(float) * m * n, cudaMemcpyDeviceToHost));
  for (void* p : {static_cast<void*>(d_a), static_cast<void*>(d_b), static_cast<void*>(d_c),
                  static_cast<void*>(d_scales)}) {
    CUDA_CHECK(cudaFree(p));
  }
  Error e;
  for (size_t i = 0; i < c.size(); ++i) {
    if (!std::isfinite(c[i])) {
      ++e.not_finite;
    } else if (c_abs[i] > 0) {
      e.worst = std::fmax(e.worst, std::fabs(c[i] - c_ref[i]) / c_abs[i]);
    }
  }
  return e;
}

}  // namespace

int main(int argc, char** argv) {
  int device = 0;
  cudaDeviceProp properties{};
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaGetDeviceProperties(&properties, device) != cudaSuccess) {
    return testing::skip("gemm_fp8", "no CUDA GPU");
  }
  if (properties.major != 9 || properties.minor != 0) {
    return testing::skip("gemm_fp8", "FP8 wgmma needs an sm_90a GPU (H100/H200)");
  }
  if (argc > 1 && std::string(argv[1]) == "sweep") {
    std::printf("k,worst_promoted,worst_unpromoted\n");
    for (int k = 128; k <= 65536; k *= 2) {
      const Error p = run<true>(256, 192, k, k), u = run<false>(256, 192, k, k);
      std::printf("%d,%.3e,%.3e\n", k, p.worst, u.worst);
    }
    return 0;
  }
  // m, n, k: M = 1, N = 10, K = 784, primes past every tile, whole tiles, and a long K.
  const int shapes[][3] = {{1, 10, 784},    {17, 31, 48},    {128, 192, 128},    {129, 193, 272},
                           {257, 385, 784}, {131, 10, 1040}, {1000, 1000, 1024}, {512, 576, 8192}};
  constexpr double kTolerance = 0x1p-12;  // provisional: set from the measured errors
  for (const auto& s : shapes) {
    const Error e = run<true>(s[0], s[1], s[2], 7 + s[0] * 31 + s[2]);
    const std::string what = std::to_string(s[0]) + " x " + std::to_string(s[1]) + " x " +
                             std::to_string(s[2]) + ": worst " + std::to_string(e.worst) +
                             ", not finite " + std::to_string(e.not_finite);
    std::printf("%s\n", what.c_str());
    CHECK_MSG(e.not_finite == 0 && e.worst <= kTolerance, what);
  }
  return testing::finish("gemm_fp8");
}
