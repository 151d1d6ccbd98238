// A chapter's GEMM against the float64 CPU reference: random fp16 inputs (never zeros), the
// three products of an MLP step, shapes that fit no tile, outputs poisoned with NaN beforehand.
//   test_gemm_NN_name [SEED [small]]     small: only the shapes of up to kSmallWork multiply-adds,
//                                        for the compute-sanitizer runs (tools/sanitize.sh)
//
// Tolerance, per element: with fp16 operands every product is exact in fp32, so only the k
// additions and the final store round; each costs at most 2^-24 relative to the running sum,
// giving |C - ref| <= (k + 1) 2^-24 sum_k |a||b|. We allow twice that, (k + 1) 2^-23, for
// tensor-core accumulators that truncate instead of rounding. NaN or an unwritten element fails.
// Each product runs three times: with the workspace every caller provides, then again, which must
// give the same bits (no chapter may depend on the order in which blocks finish), and without a
// workspace, which must still be right.
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
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
// ladder, the MLP's own shapes at batch 32 (M = 32, K = 784 ...), and long K for split-K: several
// splits, a last split shorter than the others (K = 4099), one tile of C cut many ways (40 x 64).
const Shape kShapes[] = {
    {1, 1, 1},       {1, 1, 8},        {1, 10, 784},      {2, 3, 5},      {7, 13, 17},
    {17, 31, 29},    {31, 1, 64},      {3, 257, 10},      {100, 100, 10}, {10, 1024, 32},
    {32, 10, 1024},  {32, 1024, 784},  {1024, 784, 32},   {33, 65, 129},  {127, 129, 131},
    {1, 4096, 3},    {513, 257, 1000}, {256, 1024, 1024}, {10, 128, 250}, {250, 10, 128},
    {32, 784, 8192}, {3, 200, 4099},   {32, 1024, 1000},  {40, 64, 1024},
};
constexpr double kSmallWork = 1 << 22;  // multiply-adds of the shapes the sanitizer runs

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

// Relative Euclidean error of c against ref; counts the elements outside the per-element bound.
struct Comparison {
  size_t bad = 0, first_bad = 0;
  double relative_error = 0;
};

Comparison compare(const std::vector<float>& c, const std::vector<double>& ref,
                   const std::vector<double>& scale, double tolerance) {
  Comparison result;
  double error_squares = 0, ref_squares = 0;
  for (size_t i = 0; i < c.size(); ++i) {
    const double error = std::fabs(c[i] - ref[i]);
    if (!(error <= tolerance * scale[i])) {  // written so that NaN fails
      if (result.bad++ == 0) result.first_bad = i;
    }
    error_squares += error * error;
    ref_squares += ref[i] * ref[i];
  }
  result.relative_error = std::sqrt(error_squares / ref_squares);
  return result;
}

void check_product(const Shape& s, const NamedOps& product, float* workspace, SplitMix64& rng) {
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
  // Poisons C with NaN, runs the GEMM, returns C.
  const auto run = [&](float* scratch) {
    CUDA_CHECK(cudaMemset(c_dev.ptr, 0xFF, c_count * sizeof(float)));
    gemm({s.m, s.n, s.k, a_dev.ptr, product.ops.a, b_dev.ptr, product.ops.b, c_dev.ptr, scratch,
          scratch ? kGemmWorkspaceFloats : 0},
         nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<float> c(c_count);
    CUDA_CHECK(cudaMemcpy(c.data(), c_dev.ptr, c_count * sizeof(float), cudaMemcpyDeviceToHost));
    return c;
  };
  const std::vector<float> c = run(workspace);
  const std::vector<float> again = run(workspace);
  const std::vector<float> without_workspace = run(nullptr);

  std::vector<double> ref(c_count), scale(c_count);
  reference_gemm(s.m, s.n, s.k, a64.data(), product.ops.a, b64.data(), product.ops.b, ref.data());
  reference_gemm(s.m, s.n, s.k, a_abs.data(), product.ops.a, b_abs.data(), product.ops.b,
                 scale.data());
  const double tolerance = (s.k + 1) * std::ldexp(1.0, -23);
  char label[320];
  for (const auto& [result, run_name] :
       {std::pair{&c, "with workspace"}, std::pair{&without_workspace, "without workspace"}}) {
    const Comparison cmp = compare(*result, ref, scale, tolerance);
    std::snprintf(label, sizeof label,
                  "%s M=%d N=%d K=%d %s: %zu of %zu elements wrong (first at row %zu col %zu: %g, "
                  "expected %g), relative error %.2e",
                  product.product, s.m, s.n, s.k, run_name, cmp.bad, c_count, cmp.first_bad / s.n,
                  cmp.first_bad % s.n, (*result)[cmp.first_bad], ref[cmp.first_bad],
                  cmp.relative_error);
    CHECK_MSG(cmp.bad == 0, label);
  }
  std::snprintf(label, sizeof label, "%s M=%d N=%d K=%d: a second run gave other bits",
                product.product, s.m, s.n, s.k);
  CHECK_MSG(std::memcmp(c.data(), again.data(), c_count * sizeof(float)) == 0, label);
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
    const bool small = argc > 2 && std::string(argv[2]) == "small";
    std::printf("%s on %s, seed %llu\n", name.c_str(), describe(query_gpu()).c_str(),
                static_cast<unsigned long long>(seed));
    SplitMix64 rng(seed);
    DeviceBuffer<float> workspace(kGemmWorkspaceFloats);
    for (const Shape& shape : kShapes) {
      if (small && double(shape.m) * shape.n * shape.k > kSmallWork) continue;
      for (const NamedOps& product : kProducts) check_product(shape, product, workspace.ptr, rng);
    }
    check_rejects_empty();
  } catch (const std::exception& error) {
    CHECK_MSG(false, error.what());
  }
  return testing::finish(name.c_str());
}
