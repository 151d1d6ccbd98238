// A chapter's GEMM against the float64 CPU reference: random fp16 inputs (never zeros), the
// three products of an MLP step, shapes that fit no tile, outputs poisoned with NaN beforehand.
//   test_gemm_NN_name [SEED]
//
// Tolerance, per element: with fp16 operands every product is exact in fp32, so only the k
// additions and the final store round; each costs at most 2^-24 relative to the running sum,
// giving |C - ref| <= (k + 1) 2^-24 sum_k |a||b|. We allow twice that, (k + 1) 2^-23, for
// tensor-core accumulators that truncate instead of rounding. NaN or an unwritten element fails.
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "check.hpp"
#include "cuda_check.cuh"
#include "gemm_interface.cuh"
#include "gpu_info.hpp"
#include "reference_gemm.hpp"
#include "rng.hpp"

using namespace mnist;

namespace {

struct Shape {
  int m, n, k;
};

// 1x1x1, M = 1, primes, K = 10 (the output layer), non-multiples of every tile size in the
// ladder, and the MLP's own shapes at batch 32 (M = 32, K = 784 ...).
const Shape kShapes[] = {
    {1, 1, 1},      {1, 1, 8},        {1, 10, 784},      {2, 3, 5},      {7, 13, 17},
    {17, 31, 29},   {31, 1, 64},      {3, 257, 10},      {100, 100, 10}, {10, 1024, 32},
    {32, 10, 1024}, {32, 1024, 784},  {1024, 784, 32},   {33, 65, 129},  {127, 129, 131},
    {1, 4096, 3},   {513, 257, 1000}, {256, 1024, 1024}, {10, 128, 250}, {250, 10, 128},
};

struct NamedOps {
  const char* product;
  OperandOps ops;
};
const NamedOps kProducts[] = {{"forward Y=X.W^T", kForward},
                              {"backward-data dX=dY.W", kBackwardData},
                              {"backward-weight dW=dY^T.X", kBackwardWeight}};

template <class T>
struct DeviceBuffer {
  T* ptr = nullptr;
  explicit DeviceBuffer(size_t count) { CUDA_CHECK(cudaMalloc(&ptr, count * sizeof(T))); }
  ~DeviceBuffer() { cudaFree(ptr); }
};

void check_product(const Shape& s, const NamedOps& product, SplitMix64& rng) {
  const size_t a_count = size_t(s.m) * s.k, b_count = size_t(s.k) * s.n,
               c_count = size_t(s.m) * s.n;
  std::vector<__half> a(a_count), b(b_count);
  std::vector<double> a64(a_count), b64(b_count), a_abs(a_count), b_abs(b_count);
  auto fill = [&rng](std::vector<__half>& h, std::vector<double>& d, std::vector<double>& mag) {
    for (size_t i = 0; i < h.size(); ++i) {
      h[i] = __float2half_rn(2 * rng.uniform01() - 1);
      d[i] = __half2float(h[i]);
      mag[i] = std::fabs(d[i]);
    }
  };
  fill(a, a64, a_abs);
  fill(b, b64, b_abs);

  DeviceBuffer<__half> a_dev(a_count), b_dev(b_count);
  DeviceBuffer<float> c_dev(c_count);
  CUDA_CHECK(cudaMemcpy(a_dev.ptr, a.data(), a_count * sizeof(__half), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(b_dev.ptr, b.data(), b_count * sizeof(__half), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemset(c_dev.ptr, 0xFF, c_count * sizeof(float)));  // NaN everywhere
  gemm({s.m, s.n, s.k, a_dev.ptr, product.ops.a, b_dev.ptr, product.ops.b, c_dev.ptr}, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<float> c(c_count);
  CUDA_CHECK(cudaMemcpy(c.data(), c_dev.ptr, c_count * sizeof(float), cudaMemcpyDeviceToHost));

  std::vector<double> ref(c_count), scale(c_count);
  reference_gemm(s.m, s.n, s.k, a64.data(), product.ops.a, b64.data(), product.ops.b, ref.data());
  reference_gemm(s.m, s.n, s.k, a_abs.data(), product.ops.a, b_abs.data(), product.ops.b,
                 scale.data());
  const double tolerance = (s.k + 1) * std::ldexp(1.0, -23);
  size_t bad = 0, first_bad = 0;
  double error_squares = 0, ref_squares = 0;
  for (size_t i = 0; i < c_count; ++i) {
    const double error = std::fabs(c[i] - ref[i]);
    if (!(error <= tolerance * scale[i])) {  // written so that NaN fails
      if (bad++ == 0) first_bad = i;
    }
    error_squares += error * error;
    ref_squares += ref[i] * ref[i];
  }
  char label[320];
  std::snprintf(label, sizeof label,
                "%s M=%d N=%d K=%d: %zu of %zu elements wrong (first at "
                "row %zu col %zu: %g, expected %g), relative error %.2e",
                product.product, s.m, s.n, s.k, bad, c_count, first_bad / s.n, first_bad % s.n,
                c[first_bad], ref[first_bad], std::sqrt(error_squares / ref_squares));
  CHECK_MSG(bad == 0, label);
}

void check_rejects_empty() {
  bool threw = false;
  try {
    gemm({0, 4, 4, nullptr, Op::N, nullptr, Op::N, nullptr}, nullptr);
  } catch (const std::invalid_argument&) {
    threw = true;
  }
  CHECK_MSG(threw, "an empty problem is refused with std::invalid_argument");
}

}  // namespace

int main(int argc, char** argv) {
  const std::string name = std::string("gemm ") + chapter_name();
  if (!gpu_available()) return testing::skip(name.c_str(), "no CUDA device");
  try {
    // Fresh inputs on every run; the seed is printed so a failure can be replayed.
    const uint64_t seed = argc > 1 ? std::stoull(argv[1]) : std::random_device{}();
    std::printf("%s on %s, seed %llu\n", name.c_str(), describe(query_gpu()).c_str(),
                static_cast<unsigned long long>(seed));
    SplitMix64 rng(seed);
    for (const Shape& shape : kShapes) {
      for (const NamedOps& product : kProducts) check_product(shape, product, rng);
    }
    check_rejects_empty();
  } catch (const std::exception& error) {
    CHECK_MSG(false, error.what());
  }
  return testing::finish(name.c_str());
}
