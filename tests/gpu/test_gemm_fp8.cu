// The FP8 GEMMs (chapters 20-24) against float64: random inputs of several binades, quantised to
// e4m3 with a per-tensor power-of-two scale as the trainer would, multiplied on the GPU, compared
// with the float64 product of the very values the codes stand for. Shapes: M = 1, primes, N = 10,
// K = 784, tails of every tile; chapter 20's kernel promoting its sums and accumulating in the
// tensor cores, chapter 22's and chapter 24's. Every element of C is poisoned (NaN) first. Then
// the epilogues that quantise, each way the chapters compute them: chapter 20's C through the
// step's finish_fp8_kernel, chapter 21's fused epilogues, chapter 22's, chapter 24's; the weight
// update, chapter 23's.
//   test_gemm_fp8 [sweep]   sweep: the error as K grows, with and without promotion: the largest
//                           against sum |ab| and against the bound, and ||C - ref|| / ||ref||
// The tolerance: a product of two e4m3 values is exact, so all error is in the sums. The test
// first measures how many bits below a sum's largest term the tensor cores keep (kept_bits), then
// bounds each element's error from that count and the terms each wgmma adds (run).
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "20_fp8_gemm/fp8_gemm.cuh"
#include "21_fp8_fused_epilogue/fused_epilogue.cuh"
#include "22_fp8_swap_ab/fp8_swap_ab.cuh"
#include "23_fp8_weight_update/fp8_weight_update.cuh"
#include "24_fp8_two_parts/fp8_two_parts.cuh"
#include "check.hpp"
#include "cuda_check.cuh"
#include "fp8.hpp"
#include "fp8_step.cuh"
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

// The kernels that store C: chapter 20's, promoted or with its sums in the tensor cores; chapter
// 22's skinny products (fp8_swap_ab.cuh, promoted); chapter 24's two parts (fp8_two_parts.cuh).
enum class Kernel { kPromoted, kInTensorCores, kSwapAb, kTwoParts };
const char* const kKernelNames[] = {"promoted ", "in the tensor cores ", "swap AB ", "two parts "};

// The GEMM on the device: C (m x n, fp32) for e4m3 codes A (m x k) and B (n x k).
template <Kernel kKernel>
std::vector<float> multiply(int m, int n, int k, const std::vector<uint8_t>& a,
                            const std::vector<uint8_t>& b, const float (&scales)[2]) {
  uint8_t *d_a, *d_b;
  float *d_c, *d_scales;
  CUDA_CHECK(cudaMalloc(&d_a, a.size()));
  CUDA_CHECK(cudaMalloc(&d_b, b.size()));
  CUDA_CHECK(cudaMalloc(&d_c, sizeof(float) * m * n));
  CUDA_CHECK(cudaMalloc(&d_scales, sizeof scales));
  CUDA_CHECK(cudaMemcpy(d_a, a.data(), a.size(), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d_b, b.data(), b.size(), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d_scales, scales, sizeof scales, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemset(d_c, 0xFF, sizeof(float) * m * n));  // NaN everywhere
  const Fp8Problem problem{m, n, k, d_a, d_b, d_scales, d_scales + 1};
  Fp8Epilogue store;
  store.c = d_c;
  if constexpr (kKernel == Kernel::kTwoParts) {
    fp8_two_parts::launch_fp8_two_parts(problem, store, nullptr);
  } else if constexpr (kKernel == Kernel::kSwapAb) {
    fp8_swap_ab::launch_fp8_swap_ab(problem, store, nullptr);
  } else {
    fp8_gemm::launch_fp8_cluster_gemm<kKernel == Kernel::kPromoted>(problem, store, nullptr);
  }
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<float> c(size_t(m) * n);
  CUDA_CHECK(cudaMemcpy(c.data(), d_c, sizeof(float) * m * n, cudaMemcpyDeviceToHost));
  for (void* p : {static_cast<void*>(d_a), static_cast<void*>(d_b), static_cast<void*>(d_c),
                  static_cast<void*>(d_scales)}) {
    CUDA_CHECK(cudaFree(p));
  }
  return c;
}

// How many bits below its largest term the tensor cores keep of a sum: C = 256 + 2^(8 - j) for
// j = 9 .. 23 (fp32 holds them all; 16 x 16 and 2^-9 x 2^(17 - j), all exact e4m3 products).
// Returns the largest j whose small term survives, with every smaller j surviving too.
template <Kernel kKernel>
int kept_bits() {
  constexpr int kFirst = 9, kLast = kFloatMantissaBits, n = kLast - kFirst + 1,
                k = fp8_gemm::kFp8TileK;
  std::vector<uint8_t> a(k, 0), b(size_t(n) * k, 0);
  a[0] = encode_fp8<E4m3>(16.0f);
  a[1] = encode_fp8<E4m3>(kE4m3MinSubnormal);
  for (int j = kFirst; j <= kLast; ++j) {
    b[size_t(j - kFirst) * k] = encode_fp8<E4m3>(16.0f);
    b[size_t(j - kFirst) * k + 1] = encode_fp8<E4m3>(std::ldexp(1.0f, 17 - j));
  }
  const std::vector<float> c = multiply<kKernel>(1, n, k, a, b, {1.0f, 1.0f});
  int kept = kFirst - 1;
  for (int j = kFirst; j <= kLast && c[j - kFirst] == 256.0f + std::ldexp(1.0f, 8 - j); ++j) {
    kept = j;
  }
  return kept;
}

// The error of C against float64, and against the bound the tensor cores' sums allow: each wgmma
// adds kFp8WgmmaK products to its accumulator, the terms aligned to the largest of them and cut
// `bits` below it, so a step loses less than kTerms 2^-bits of its largest term (its accumulator
// or a product); with promotion each K tile's sum starts from zero and joins an fp32 total.
struct Error {
  double worst_ratio = 0.0;                             // max |C - reference| / bound
  double worst_relative = 0.0;                          // max |C - reference| / sum_k |a b|
  double squared_error = 0.0, squared_reference = 0.0;  // their ratio's root: the result's error
  long not_finite = 0;
};

template <Kernel kKernel>
Error run(int m, int n, int k, int bits, uint64_t seed) {
  constexpr bool kPromote = kKernel != Kernel::kInTensorCores;
  constexpr int kTerms = fp8_gemm::kFp8WgmmaK + 1;
  SplitMix64 rng(seed);
  const Quantised a = quantise(m, k, rng), b = quantise(n, k, rng);
  const std::vector<float> c = multiply<kKernel>(m, n, k, a.codes, b.codes, {a.unscale, b.unscale});
  const double scale = double(a.unscale) * b.unscale, cut = std::ldexp(1.0, -bits);
  Error e;
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      const double* x = &a.values[size_t(i) * k];
      const double* y = &b.values[size_t(j) * k];
      double total = 0, sum = 0, terms = 0, bound = 0;
      for (int t0 = 0; t0 < k; t0 += fp8_gemm::kFp8TileK) {
        if (kPromote) sum = 0;
        for (int s0 = t0; s0 < std::min(k, t0 + fp8_gemm::kFp8TileK); s0 += fp8_gemm::kFp8WgmmaK) {
          double largest = std::fabs(sum), step = 0;
          for (int q = s0; q < std::min(k, s0 + fp8_gemm::kFp8WgmmaK); ++q) {
            const double product = x[q] * y[q] / scale;  // the unscaled e4m3 product
            largest = std::fmax(largest, std::fabs(product));
            step += product;
            terms += std::fabs(product);
          }
          sum += step;
          bound += kTerms * cut * largest;
        }
        if (kPromote) total += sum;
      }
      if (!kPromote) total = sum;
      // fp32: the promotion adds (one per K tile) and the scaling, each within 2^-24 of the
      // running magnitude.
      bound = scale * (bound + std::ldexp(terms, -24) * (k / fp8_gemm::kFp8TileK + 2));
      const double got = c[size_t(i) * n + j], error = std::fabs(got - scale * total);
      if (!std::isfinite(got)) {
        ++e.not_finite;
        continue;
      }
      e.worst_ratio = std::fmax(e.worst_ratio, error / bound);
      if (terms > 0) e.worst_relative = std::fmax(e.worst_relative, error / (scale * terms));
      e.squared_error += error * error;
      e.squared_reference += scale * total * scale * total;
    }
  }
  return e;
}

// run<kernel>, the kernel chosen at run time.
Error run_kernel(Kernel kernel, int m, int n, int k, int bits, uint64_t seed) {
  switch (kernel) {
    case Kernel::kPromoted:
      return run<Kernel::kPromoted>(m, n, k, bits, seed);
    case Kernel::kInTensorCores:
      return run<Kernel::kInTensorCores>(m, n, k, bits, seed);
    case Kernel::kSwapAb:
      return run<Kernel::kSwapAb>(m, n, k, bits, seed);
    case Kernel::kTwoParts:
      break;
  }
  return run<Kernel::kTwoParts>(m, n, k, bits, seed);
}

// Where a quantising epilogue runs: chapter 20's kernel storing C, then the step's
// finish_fp8_kernel (launch_fp8_separately); chapter 21's fused epilogues; chapter 22's swap AB;
// chapter 23's weight update through shared memory (kUpdate only); chapter 24's two parts.
enum class Path { kSeparate, kFused, kSwapAb, kTmaUpdate, kTwoParts };
const char* const kPathNames[] = {"C then finish_fp8_kernel, ", "fused, ", "swap AB, ",
                                  "TMA update, ", "two parts, "};

// An FP8 product with a quantising epilogue, along `path`; c: m x n floats for kSeparate's C.
void launch_along(Path path, const Fp8Problem& problem, const Fp8Epilogue& epilogue, float* c) {
  if (path == Path::kSwapAb) {
    fp8_swap_ab::launch_fp8_swap_ab(problem, epilogue, nullptr);
  } else if (path == Path::kTwoParts) {
    fp8_two_parts::launch_fp8_two_parts(problem, epilogue, nullptr);
  } else if (path == Path::kTmaUpdate) {
    fp8_weight_update::launch_fp8_weight_update(problem, epilogue, nullptr);
  } else if (path == Path::kFused || epilogue.kind == Fp8EpilogueKind::kBiasRelu) {
    fp8_fused_epilogue::launch_fp8_fused_gemm(problem, epilogue, nullptr);
  } else {
    launch_fp8_separately<fp8_gemm::launch_fp8_cluster_gemm<true>>(problem, epilogue, c, nullptr);
  }
}

// A quantising epilogue (kQuantise): run once storing C, once quantising; every code of
// x and x_t (rows t_pitch apart, t_pitch > m) must be encode(v * scale) of that very C (the same
// sums, bit for bit), v = ReLU(C + bias) (forward) or C where a random activation's code is > 0
// (backward data), and the amax the largest |v|. Then, forward, its fp16 epilogue (kBiasRelu):
// fp16(ReLU(C + bias)), within one fp16 rounding.
void check_quantised_output(Path path, int m, int n, int k, bool backward, uint64_t seed) {
  SplitMix64 rng(seed);
  const Quantised a = quantise(m, k, rng), b = quantise(n, k, rng);
  const std::vector<float> c =
      path == Path::kSwapAb || path == Path::kTwoParts  // chapter 24's sums are chapter 22's
          ? multiply<Kernel::kSwapAb>(m, n, k, a.codes, b.codes, {a.unscale, b.unscale})
          : multiply<Kernel::kPromoted>(m, n, k, a.codes, b.codes, {a.unscale, b.unscale});
  const int t_pitch = (m + 15) / 16 * 16 + 16;
  std::vector<float> bias(n);
  for (float& x : bias) x = 2 * rng.uniform01() - 1;
  std::vector<uint8_t> active(size_t(m) * n);  // codes of either sign, zeros among them
  for (uint8_t& code : active) code = encode_fp8<E4m3>(float(int(rng.below(5)) - 2));
  std::vector<float> v(size_t(m) * n);
  float largest = 0.0f;
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      const size_t e = size_t(i) * n + j;
      const bool on = active[e] != 0 && active[e] < 0x80;
      v[e] = backward ? (on ? c[e] : 0.0f) : std::fmax(c[e] + bias[j], 0.0f);
      largest = std::fmax(largest, std::fabs(v[e]));
    }
  }
  ScalingState state{0u, 1, {largest}, fp8_scale(largest, kE4m3Max), 0.0f};
  uint8_t *d_a, *d_b, *d_x, *d_x_t, *d_active;
  float *d_scales, *d_bias, *d_c;
  ScalingState* d_state;
  CUDA_CHECK(cudaMalloc(&d_c, c.size() * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&d_a, a.codes.size()));
  CUDA_CHECK(cudaMalloc(&d_b, b.codes.size()));
  CUDA_CHECK(cudaMalloc(&d_x, size_t(m) * n));
  CUDA_CHECK(cudaMalloc(&d_x_t, size_t(t_pitch) * n));
  CUDA_CHECK(cudaMalloc(&d_active, size_t(m) * n));
  CUDA_CHECK(cudaMemcpy(d_active, active.data(), active.size(), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMalloc(&d_scales, 2 * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&d_bias, n * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&d_state, sizeof state));
  const float scales[2] = {a.unscale, b.unscale};
  CUDA_CHECK(cudaMemcpy(d_a, a.codes.data(), a.codes.size(), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d_b, b.codes.data(), b.codes.size(), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d_scales, scales, sizeof scales, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d_bias, bias.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d_state, &state, sizeof state, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemset(d_x, 0x7F, size_t(m) * n));  // the NaN code everywhere
  CUDA_CHECK(cudaMemset(d_x_t, 0x7F, size_t(t_pitch) * n));
  Fp8Epilogue out;
  out.kind = Fp8EpilogueKind::kQuantise;
  out.bias = backward ? nullptr : d_bias;
  out.active = backward ? d_active : nullptr;
  out.x = d_x;
  out.x_t = d_x_t;
  out.t_pitch = t_pitch;
  out.scaling = d_state;
  const Fp8Problem problem{m, n, k, d_a, d_b, d_scales, d_scales + 1};
  launch_along(path, problem, out, d_c);
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<uint8_t> x(size_t(m) * n), x_t(size_t(t_pitch) * n);
  CUDA_CHECK(cudaMemcpy(x.data(), d_x, x.size(), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(x_t.data(), d_x_t, x_t.size(), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(&state, d_state, sizeof state, cudaMemcpyDeviceToHost));
  long wrong = 0;
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      const uint8_t want = encode_fp8<E4m3>(v[size_t(i) * n + j] * state.scale);
      wrong += x[size_t(i) * n + j] != want;
      wrong += x_t[size_t(j) * t_pitch + i] != want;
    }
  }
  float amax = 0.0f;
  std::memcpy(&amax, &state.amax_bits, sizeof amax);
  const std::string what = std::string(kPathNames[int(path)]) +
                           (backward ? "backward data " : "forward ") + std::to_string(m) + " x " +
                           std::to_string(n) + " x " + std::to_string(k) + ": " +
                           std::to_string(wrong) + " codes differ, amax " + std::to_string(amax) +
                           " of " + std::to_string(largest);
  std::printf("quantised output %s\n", what.c_str());
  CHECK_MSG(wrong == 0 && amax == largest, what);
  CHECK_MSG(state.unscale == 1.0f / state.scale, "the copy's factor, 1 / its scale, is noted");
  if (!backward) {
    __half* d_out;
    CUDA_CHECK(cudaMalloc(&d_out, size_t(m) * n * sizeof(__half)));
    Fp8Epilogue half_out;
    half_out.kind = Fp8EpilogueKind::kBiasRelu;
    half_out.bias = d_bias;
    half_out.out = d_out;
    launch_along(path, problem, half_out, d_c);
    std::vector<__half> got(size_t(m) * n);
    CUDA_CHECK(cudaMemcpy(got.data(), d_out, got.size() * sizeof(__half), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(d_out));
    long far = 0;
    for (int i = 0; i < m; ++i) {
      for (int j = 0; j < n; ++j) {
        const float want = std::fmax(c[size_t(i) * n + j] + bias[j], 0.0f);
        const float g = __half2float(got[size_t(i) * n + j]);
        // Past fp16's largest finite value (65504) the output is inf.
        far +=
            !(std::isinf(g) ? g > 0.0f && want >= 65504.0f
                            : std::fabs(g - want) <= std::ldexp(std::fabs(want), -10) + 0x1p-24f);
      }
    }
    CHECK_MSG(far == 0, std::to_string(far) + " fp16 outputs differ from fp16(ReLU(C + bias))");
  }
  for (void* p :
       {static_cast<void*>(d_a), static_cast<void*>(d_b), static_cast<void*>(d_x),
        static_cast<void*>(d_x_t), static_cast<void*>(d_scales), static_cast<void*>(d_bias),
        static_cast<void*>(d_state), static_cast<void*>(d_active), static_cast<void*>(d_c)}) {
    CUDA_CHECK(cudaFree(p));
  }
}

// The weight update (kUpdate) of a weight gradient's product: run once storing C = dW, once
// updating; every master must be fmaf(-learning_rate, dW, w) of that very dW, every code of w and
// w_t encode(master * scale), and the amax the largest |master|.
void check_weight_update(Path path, int m, int n, int k, uint64_t seed) {
  SplitMix64 rng(seed);
  const Quantised a = quantise(m, k, rng), b = quantise(n, k, rng);
  const std::vector<float> dw =
      multiply<Kernel::kPromoted>(m, n, k, a.codes, b.codes, {a.unscale, b.unscale});
  constexpr float kLearningRate = 0.05f;
  std::vector<float> master(size_t(m) * n), want(master.size());
  float largest = 0.0f;
  for (size_t e = 0; e < master.size(); ++e) {
    master[e] = 0.2f * rng.uniform01() - 0.1f;
    want[e] = std::fma(-kLearningRate, dw[e], master[e]);
    largest = std::fmax(largest, std::fabs(want[e]));
  }
  ScalingState state{0u, 1, {largest}, fp8_scale(largest, kE4m3Max), 0.0f};
  uint8_t *d_a, *d_b, *d_w, *d_w_t;
  float *d_scales, *d_master, *d_c;
  ScalingState* d_state;
  CUDA_CHECK(cudaMalloc(&d_c, master.size() * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&d_a, a.codes.size()));
  CUDA_CHECK(cudaMalloc(&d_b, b.codes.size()));
  CUDA_CHECK(cudaMalloc(&d_w, master.size()));
  CUDA_CHECK(cudaMalloc(&d_w_t, master.size()));
  CUDA_CHECK(cudaMalloc(&d_scales, 2 * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&d_master, master.size() * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&d_state, sizeof state));
  const float scales[2] = {a.unscale, b.unscale};
  CUDA_CHECK(cudaMemcpy(d_a, a.codes.data(), a.codes.size(), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d_b, b.codes.data(), b.codes.size(), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d_scales, scales, sizeof scales, cudaMemcpyHostToDevice));
  CUDA_CHECK(
      cudaMemcpy(d_master, master.data(), master.size() * sizeof(float), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d_state, &state, sizeof state, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemset(d_w, 0x7F, master.size()));  // the NaN code everywhere
  CUDA_CHECK(cudaMemset(d_w_t, 0x7F, master.size()));
  Fp8Epilogue update;
  update.kind = Fp8EpilogueKind::kUpdate;
  update.master = d_master;
  update.learning_rate = kLearningRate;
  update.x = d_w;
  update.x_t = d_w_t;
  update.t_pitch = m;
  update.scaling = d_state;
  launch_along(path, {m, n, k, d_a, d_b, d_scales, d_scales + 1}, update, d_c);
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<uint8_t> w(master.size()), w_t(master.size());
  CUDA_CHECK(
      cudaMemcpy(master.data(), d_master, master.size() * sizeof(float), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(w.data(), d_w, w.size(), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(w_t.data(), d_w_t, w_t.size(), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(&state, d_state, sizeof state, cudaMemcpyDeviceToHost));
  long wrong_masters = 0, wrong_codes = 0;
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      const size_t e = size_t(i) * n + j;
      wrong_masters += master[e] != want[e];
      const uint8_t code = encode_fp8<E4m3>(want[e] * state.scale);
      wrong_codes += (w[e] != code) + (w_t[size_t(j) * m + i] != code);
    }
  }
  float amax = 0.0f;
  std::memcpy(&amax, &state.amax_bits, sizeof amax);
  const std::string what = std::string(kPathNames[int(path)]) + "weight update " +
                           std::to_string(m) + " x " + std::to_string(n) + " x " +
                           std::to_string(k) + ": " + std::to_string(wrong_masters) +
                           " masters and " + std::to_string(wrong_codes) + " codes differ, amax " +
                           std::to_string(amax) + " of " + std::to_string(largest);
  std::printf("%s\n", what.c_str());
  CHECK_MSG(wrong_masters == 0 && wrong_codes == 0 && amax == largest, what);
  CHECK_MSG(state.unscale == 1.0f / state.scale, "the copies' factor, 1 / their scale, is noted");
  for (void* p :
       {static_cast<void*>(d_a), static_cast<void*>(d_b), static_cast<void*>(d_w),
        static_cast<void*>(d_w_t), static_cast<void*>(d_scales), static_cast<void*>(d_master),
        static_cast<void*>(d_state), static_cast<void*>(d_c)}) {
    CUDA_CHECK(cudaFree(p));
  }
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
  const int bits = kept_bits<Kernel::kPromoted>(),
            bits_unpromoted = kept_bits<Kernel::kInTensorCores>();
  std::printf("the tensor cores keep %d bits below a sum's largest term (%d without promotion)\n",
              bits, bits_unpromoted);
  if (argc > 1 && std::string(argv[1]) == "sweep") {
    std::printf(
        "k,worst_promoted,worst_unpromoted,bound_ratio_promoted,bound_ratio_unpromoted,"
        "norm_promoted,norm_unpromoted\n");
    for (int k = 128; k <= 65536; k *= 2) {
      const Error p = run<Kernel::kPromoted>(256, 192, k, bits, k),
                  u = run<Kernel::kInTensorCores>(256, 192, k, bits, k);
      const auto norm = [](const Error& e) {
        return std::sqrt(e.squared_error / e.squared_reference);
      };
      std::printf("%d,%.3e,%.3e,%.3f,%.3f,%.3e,%.3e\n", k, p.worst_relative, u.worst_relative,
                  p.worst_ratio, u.worst_ratio, norm(p), norm(u));
    }
    return 0;
  }
  // m, n, k: M = 1, N = 10, K = 784, primes past every tile, whole tiles, a long K, more pairs
  // of tiles (9 x 17) than an H100 runs clusters at once, so that a block computes several, and,
  // for swap AB, more weight rows than 128-wide batch tiles fit at once: a 256-wide batch tile,
  // promoted in two chunks (chapter 24 hands it to chapter 22's kernel). K tiles from 1 to 4, 7,
  // 9, 16 and 64: chapter 24's loop of two K tiles and each end of it.
  const int shapes[][3] = {
      {1, 10, 784},      {17, 31, 48},    {128, 192, 128},    {129, 193, 272},
      {257, 385, 784},   {131, 10, 1040}, {1000, 1000, 1024}, {512, 576, 8192},
      {2049, 4100, 144}, {32, 1000, 784}, {256, 4100, 2048},  {100, 8192, 272},
      {200, 17000, 272}, {64, 300, 256},  {96, 520, 512},     {256, 1040, 8192}};
  for (const auto& s : shapes) {
    for (const Kernel kernel :
         {Kernel::kPromoted, Kernel::kInTensorCores, Kernel::kSwapAb, Kernel::kTwoParts}) {
      const bool skinny = kernel == Kernel::kSwapAb || kernel == Kernel::kTwoParts;
      if (skinny && s[0] > swap_ab::kMaxBatch) continue;
      const uint64_t seed = 7 + s[0] * 31 + s[2];
      const Error e = run_kernel(kernel, s[0], s[1], s[2],
                                 kernel == Kernel::kInTensorCores ? bits_unpromoted : bits, seed);
      const std::string what = std::string(kKernelNames[int(kernel)]) + std::to_string(s[0]) +
                               " x " + std::to_string(s[1]) + " x " + std::to_string(s[2]) +
                               ": worst error " + std::to_string(e.worst_ratio) +
                               " of its bound, " + std::to_string(e.worst_relative) +
                               " of sum |ab|, not finite " + std::to_string(e.not_finite);
      std::printf("%s\n", what.c_str());
      CHECK_MSG(e.not_finite == 0 && e.worst_ratio <= 1.0, what);
    }
  }
  // The quantising epilogue: odd and even batches, a tail of every tile, N = 10.
  for (const auto& s : {std::array<int, 3>{32, 1000, 784}, {255, 4100, 272}, {7, 10, 48}}) {
    for (const bool backward : {false, true}) {
      for (const Path path : {Path::kSeparate, Path::kFused, Path::kSwapAb, Path::kTwoParts}) {
        check_quantised_output(path, s[0], s[1], s[2], backward, 11 + s[0]);
      }
    }
  }
  // The weight update: K = a batch, tails of every tile, an odd N (no 16-bit code pairs), M a
  // multiple of 16 (w_t in 16-byte stores) and not.
  for (const auto& s :
       {std::array<int, 3>{1000, 784, 256}, {512, 784, 32}, {300, 1001, 32}, {129, 10, 48}}) {
    check_weight_update(Path::kSeparate, s[0], s[1], s[2], 23 + s[1]);
    check_weight_update(Path::kFused, s[0], s[1], s[2], 23 + s[1]);
  }
  // Chapter 23's: one K tile and two, the second partial; tails of both tile sides; N < 64; more
  // tiles than the blocks that run at once hold in their two buffers (a block's third tile and
  // on: a buffer refilled, its barrier's second phase), at one K tile and at two.
  for (const auto& s : {std::array<int, 3>{512, 784, 32},
                        {1040, 784, 256},
                        {208, 48, 144},
                        {8192, 96, 256},
                        {4112, 784, 32},
                        {4096, 1040, 256}}) {
    check_weight_update(Path::kTmaUpdate, s[0], s[1], s[2], 29 + s[1]);
  }
  return testing::finish("gemm_fp8");
}
