// A chapter's GEMM against the float64 CPU reference: random fp16 inputs (never zeros), the
// three products of an MLP step, each stored plain and through the epilogues the trainer applies
// to it, shapes that fit no tile, outputs poisoned with NaN beforehand.
//   test_gemm_NN_name [SEED [small|sanitize]]
//     small: only the shapes of up to kSmallWork multiply-adds and the misaligned ones, for the
//            mutants (tools/mutate.sh); 1032 x 2056 x 264 among them is the smallest that
//            chapters 07-11 give to their TMA kernels; plus, for those and 12-14, the ring-race
//            products
//     sanitize: small without the ring-race products, for compute-sanitizer (tools/sanitize.sh),
//            whose instrumented runs of its 17 G multiply-adds would take many minutes; its
//            racecheck sees a missing barrier directly. Chapters without wgmma also leave out
//            the misaligned shape that is there for wgmma alone.
//
// Tolerance of the product v, per element: with fp16 operands every product is exact in fp32, so
// only the k additions and the final store round; each costs at most 2^-24 relative to the
// running sum, giving |v - ref| <= (k + 1) 2^-24 sum_k |a||b|. We allow twice that,
// e = (k + 1) 2^-23 sum_k |a||b|, for tensor-core accumulators that truncate instead of rounding.
// NaN or an unwritten element fails.
//
// Tolerance of the epilogues, from e: if x is within d of the exact x_ref, then one more rounding
// to fp32 gives fl(x) within float_bound(x_ref, d) = d + 2^-24 (|x_ref| + d) of x_ref (as
// |fl(x) - x| <= 2^-24 |x| and |x| <= |x_ref| + d), and one rounding to fp16 gives fp16(x) within
// half_bound(x_ref, d) = d + 2^-11 (|x_ref| + d) + 2^-24 (2^-24, fp16's subnormal step, covers
// the absolute error below fp16's normal range). ReLU and the mask are 1-Lipschitz: they keep d.
//   kStore     c = v                      within e
//   kBias      c = fl(v + bias)           within float_bound(v_ref + bias, e)
//   kBiasRelu  out = fp16(max(fl(v + bias), 0))
//                                         within half_bound(max(v_ref + bias, 0),
//                                                           float_bound(v_ref + bias, e))
//   kReluGrad  out = fp16(v) if activation > 0 (within half_bound(v_ref, e)), else exactly 0
//   kSgd       master = fl(m0 - fl(lr v)) within float_bound(m0 - lr v_ref, p),
//                                         p = float_bound(lr v_ref, lr e), the error of fl(lr v);
//                                         a fused multiply-add, one rounding, lands inside too
//              out = fp16(master)         within half_bound(m0 - lr v_ref, that master bound)
// (lr is a float, exact in float64.) The activations hold exact zeros, as ReLU outputs do, and
// negative values, so that a mask other than > 0 fails.
//
// Each product and epilogue runs three times: with the workspace every caller provides, then
// again, which must give the same bits (no chapter may depend on the order in which blocks
// finish), and without a workspace, which must still be right. A chapter that fuses the epilogue
// gets no c where the epilogue does not write one, as in the trainer. A few shapes run again from
// buffers one element past an aligned start (check_misaligned), where no vector access may go.
//
// Every run is captured on a blocking stream and replayed as a CUDA graph (captured_kernels.cuh):
// a launch on the legacy default stream fails, and the graph names the kernels the chapter chose.
// Each product's kernels must be the ones the chapter claims for it (allowed_paths, from the table
// in chapter_kernels.cuh), and every path the chapter has, its newest kernel first of all, must
// have run by the end (check_every_path_ran). Last, long products with exact integer results
// run the rings of K tiles through many phases (check_ring_race).
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "captured_kernels.cuh"
#include "chapter_kernels.cuh"
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

// 1x1x1, M = 1, primes, K = 10 (the output layer), non-multiples of every tile size in the ladder,
// the MLP's own shapes at batch 32 (M = 32, K = 784 ...), and long K for split-K: several splits, a
// last split shorter than the others (K = 4099), one tile of C cut many ways (40 x 64). 1032 x 4104
// x 264 has more 128 x 256 tiles (153) than an H100 has SMs, so that chapter 10's persistent blocks
// take a second tile; each side is 8 past a multiple of the tile, and K 8 past a multiple of 64.
// Chapter 12's batch tiles (the smallest whose tiles all run at once, up to the smallest that holds
// M; chapters/12_swap_ab/tiles.cuh), as an H100 chooses them: M of 1..32 on one tile of
// 32; 40, 96, 100, 200 and 250 on 2 to 8 of them (96 is the last batch of an epoch at batch 256), K
// whole below 32 K tiles of 64 (256 x 1024 x 1024, 250 x 1000 x 784, 200 x 136 x 64, 250 x 10 x
// 128, the last two small enough for the mutants' runs) and split from there (32 x 784 x 8192 in
// 10, 32 x 2048 x 2048 in 4, and 40 x 48 x 2056 in 4, the last split 6 K tiles long, small enough
// for the mutants) into no more blocks than SMs (32 x 4232 x 2048: 67 tiles, whole, where the 264
// blocks an H100 runs would take 3 splits); 200 x 4168 x 200 would take 4 tiles of 64, 264 tiles,
// as many as an H100 runs at once (those of 32, 462, are more), and so takes 2 tiles of 64 rows by
// 128 whose consumers split the columns (132 tiles; the last tile's second consumer has 8), as 130
// x 4100 x 8 does (130 tiles, the last tile's 2 rows both the first consumer's; small enough for
// the mutants), but not 129 x 4230 x 8 (3 tiles of 64, 201 tiles, where the column split's 134
// would not all run at once; small enough for the mutants); 225 x 2056 x 8 on 8 tiles of 32, 264
// again, the last with one row (small enough for the mutants); 250 x 8192 x 264 and 130 x 8200 x
// 264 on 2 tiles of 128, the last with 2 rows, and 65 x 8449 x 8 on one (133 tiles of 64 rows by 2
// of 64 are 266; small enough for the mutants, which then see the batch tile of 128's two
// consumers); 200 x 8456 x 136 on one of 256 (133 tiles of 64 rows by 2 of 128 are 266). With N
// past a multiple of 64 (784, 1000). N = 10 (the output layer's forward product, 1 x 10 x 784, 32 x
// 10 x 1024, 250 x 10 x 128) comes to chapter 12's kernel. So do its weight gradients (K <= 256,
// the batch: never split; no batch tile of 32) where their tiles of 64 or 128 all run at once: 200
// x 136 x 64 and 72 x 120 x 256 (small enough for the mutants), 1024 x 784 x 32 and 200 x 4168 x
// 200 (264 tiles) on tiles of 64, 1544 x 1000 x 136 on 208 of 128; 200 x 8456 x 136 and 1024 x 4096
// x 1 (small enough for the mutants) fit with neither and go to chapter 10's kernel. Through the
// plain store, the weight gradients with K <= 64 go to chapter 14's weight update instead
// (weight_update.cuh): 1024 x 784 x 32, 200 x 136 x 64 (one whole K tile), 1024 x 4096 x 1, and 136
// x 1000 x 17 (K odd, N 40 past a multiple of 64; rows of neither side a multiple of the 64 x 64
// tile); 200 x 136 x 72, 8 past one K tile, does not. Through the SGD epilogue, those with K <= 256
// go there too, in as many K tiles as K has: 200 x 136 x 72 (two, the second 8 deep), 72 x 120 x
// 136, 1544 x 1000 x 136 and 200 x 8456 x 136 (three), 200 x 4168 x 200 and 72 x 120 x 256 (four).
// Of these, 200 x 136 x 72, 72 x 120 x 136 and 72 x 120 x 256 are small enough for the mutants and
// the sanitizer (one for each count past one), as are 200 x 136 x 64, 1024 x 4096 x 1 and 136 x
// 1000 x 17.
const Shape kShapes[] = {
    {1, 1, 1},        {1, 1, 8},         {1, 10, 784},      {2, 3, 5},        {7, 13, 17},
    {17, 31, 29},     {31, 1, 64},       {3, 257, 10},      {100, 100, 10},   {10, 1024, 32},
    {32, 10, 1024},   {32, 1024, 784},   {1024, 784, 32},   {33, 65, 129},    {127, 129, 131},
    {1, 4096, 3},     {513, 257, 1000},  {256, 1024, 1024}, {10, 128, 250},   {250, 10, 128},
    {32, 784, 8192},  {3, 200, 4099},    {32, 1024, 1000},  {40, 64, 1024},   {1032, 4104, 264},
    {100, 784, 512},  {96, 2048, 1024},  {250, 1000, 784},  {32, 2048, 2048}, {250, 8192, 264},
    {130, 8200, 264}, {200, 136, 64},    {200, 4168, 200},  {200, 8456, 136}, {225, 2056, 8},
    {72, 120, 256},   {1544, 1000, 136}, {1024, 4096, 1},   {40, 48, 2056},   {32, 4232, 2048},
    {136, 1000, 17},  {200, 136, 72},    {65, 8449, 8},     {130, 4100, 8},   {129, 4230, 8},
    {72, 120, 136},
};
constexpr double kSmallWork = 4.5e6;  // multiply-adds of the shapes the sanitizer runs
bool is_small(const Shape& s) {
  return double(s.m) * s.n * s.k <= kSmallWork;
}

// Each product with the epilogues the trainer applies to it, after the plain store.
struct NamedOps {
  const char* product;
  OperandOps ops;
  std::vector<EpilogueKind> epilogues;
};
const NamedOps kProducts[] = {
    {"forward Y=X.W^T",
     kForward,
     {EpilogueKind::kStore, EpilogueKind::kBias, EpilogueKind::kBiasRelu}},
    {"backward-data dX=dY.W", kBackwardData, {EpilogueKind::kStore, EpilogueKind::kReluGrad}},
    {"backward-weight dW=dY^T.X", kBackwardWeight, {EpilogueKind::kStore, EpilogueKind::kSgd}},
};

const char* epilogue_name(EpilogueKind kind) {
  switch (kind) {
    case EpilogueKind::kStore:
      return "store";
    case EpilogueKind::kBias:
      return "bias";
    case EpilogueKind::kBiasRelu:
      return "bias+ReLU";
    case EpilogueKind::kReluGrad:
      return "ReLU'";
    case EpilogueKind::kSgd:
      return "SGD";
  }
  return "?";
}

constexpr float kLearningRate = 0.37f;      // neither 1 nor a power of two, so its product rounds
constexpr double kFloatRounding = 0x1p-24;  // unit roundoff of fp32, round to nearest
constexpr double kHalfRounding = 0x1p-11;   // unit roundoff of fp16
constexpr double kHalfSubnormalStep = 0x1p-24;  // absolute floor of one rounding to fp16
constexpr size_t kShownBad = 3;                 // wrong elements printed per failure

template <class... Args>
std::string format(const char* pattern, Args... args) {
  const int length = std::snprintf(nullptr, 0, pattern, args...);
  std::string text(static_cast<size_t>(length) + 1, '\0');
  std::snprintf(text.data(), text.size(), pattern, args...);
  text.pop_back();
  return text;
}

// `offset` elements past an allocation's start: offset 1 gives a pointer that no vector access
// of two or more elements may use, so the kernels' single-element paths run.
template <class T>
struct DeviceBuffer {
  T* allocation = nullptr;
  T* ptr = nullptr;
  size_t count;
  explicit DeviceBuffer(size_t count_, size_t offset = 0) : count(count_) {
    CUDA_CHECK(cudaMalloc(&allocation, (count + offset) * sizeof(T)));
    ptr = allocation + offset;
  }
  ~DeviceBuffer() { cudaFree(allocation); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void upload(const std::vector<T>& host) {
    CUDA_CHECK(cudaMemcpy(ptr, host.data(), count * sizeof(T), cudaMemcpyHostToDevice));
  }
  // All bits set is a NaN in fp32 and in fp16: an element the GEMM does not write fails.
  void poison() { CUDA_CHECK(cudaMemset(ptr, 0xFF, count * sizeof(T))); }
  // The contents as floats; fp16 widens exactly, so the bits still tell runs apart.
  std::vector<float> download() const {
    std::vector<T> host(count);
    CUDA_CHECK(cudaMemcpy(host.data(), ptr, count * sizeof(T), cudaMemcpyDeviceToHost));
    std::vector<float> widened(count);
    std::transform(host.begin(), host.end(), widened.begin(), [](T x) { return float(x); });
    return widened;
  }
};

// One product's operands on the device and, per element, its exact value v_ref and the bound e
// on |v - v_ref| (the header's).
struct Product {
  Shape shape;
  const NamedOps& named;
  DeviceBuffer<__half> a, b;
  std::vector<double> exact, error_bound;

  Product(const Shape& s, const NamedOps& named_, SplitMix64& rng, size_t offset = 0)
      : shape(s),
        named(named_),
        a(size_t(s.m) * s.k, offset),
        b(size_t(s.k) * s.n, offset),
        exact(size_t(s.m) * s.n),
        error_bound(size_t(s.m) * s.n) {
    std::vector<double> a64, b64, a_abs, b_abs;
    a.upload(random_operand(a.count, rng, a64, a_abs));
    b.upload(random_operand(b.count, rng, b64, b_abs));
    reference_gemm(s.m, s.n, s.k, a64.data(), named.ops.a, b64.data(), named.ops.b, exact.data());
    reference_gemm(s.m, s.n, s.k, a_abs.data(), named.ops.a, b_abs.data(), named.ops.b,
                   error_bound.data());
    const double tolerance = (s.k + 1) * std::ldexp(1.0, -23);
    for (double& bound : error_bound) bound *= tolerance;
  }

  // Uniform in [-1, 1], rounded to fp16; also returns it in float64 and its magnitudes.
  static std::vector<__half> random_operand(size_t count, SplitMix64& rng,
                                            std::vector<double>& values,
                                            std::vector<double>& magnitudes) {
    std::vector<__half> h(count);
    values.resize(count);
    magnitudes.resize(count);
    for (size_t i = 0; i < count; ++i) {
      h[i] = __float2half_rn(2 * rng.uniform01() - 1);
      values[i] = __half2float(h[i]);
      magnitudes[i] = std::fabs(values[i]);
    }
    return h;
  }

  size_t count() const { return exact.size(); }
  std::string describe(EpilogueKind kind) const {
    return format("%s M=%d N=%d K=%d %s%s", named.product, shape.m, shape.n, shape.k,
                  epilogue_name(kind), a.ptr != a.allocation ? ", operands misaligned" : "");
  }
};

// Uniform in +-[1/8, 1): never zero, of either sign.
float random_nonzero(SplitMix64& rng) {
  const float magnitude = 0.125f + 0.875f * rng.uniform01();
  return rng.below(2) ? magnitude : -magnitude;
}

// A third each exact zeros (where ReLU cut), positive values (where it passed) and negative
// values, which ReLU never leaves but which a mask must treat as zeros.
__half random_activation(SplitMix64& rng) {
  return __float2half_rn(rng.below(3) == 0 ? 0.0f : random_nonzero(rng));
}

// What the epilogues read besides the product, on the host.
struct EpilogueInputs {
  std::vector<float> bias;         // n
  std::vector<__half> activation;  // m x n
  std::vector<float> master;       // m x n, before the update

  EpilogueInputs(const Shape& s, SplitMix64& rng)
      : bias(size_t(s.n)), activation(size_t(s.m) * s.n), master(size_t(s.m) * s.n) {
    for (float& x : bias) x = random_nonzero(rng);
    for (__half& x : activation) x = random_activation(rng);
    for (float& x : master) x = random_nonzero(rng);
  }
};

// The device side of EpilogueInputs, and every buffer an epilogue may write.
struct EpilogueBuffers {
  DeviceBuffer<float> c, bias, master;
  DeviceBuffer<__half> activation, out;

  EpilogueBuffers(const Shape& s, const EpilogueInputs& inputs, size_t offset = 0)
      : c(size_t(s.m) * s.n, offset),
        bias(size_t(s.n), offset),
        master(size_t(s.m) * s.n, offset),
        activation(size_t(s.m) * s.n, offset),
        out(size_t(s.m) * s.n, offset) {
    bias.upload(inputs.bias);
    activation.upload(inputs.activation);
  }
};

// The epilogue of `kind` with the buffers it reads or writes (gemm_interface.cuh), and no others,
// so that a chapter that touches another one faults.
Epilogue epilogue_for(EpilogueKind kind, const EpilogueBuffers& buffers) {
  Epilogue epilogue;
  epilogue.kind = kind;
  switch (kind) {
    case EpilogueKind::kStore:
      break;
    case EpilogueKind::kBias:
      epilogue.bias = buffers.bias.ptr;
      break;
    case EpilogueKind::kBiasRelu:
      epilogue.bias = buffers.bias.ptr;
      epilogue.out = buffers.out.ptr;
      break;
    case EpilogueKind::kReluGrad:
      epilogue.activation = buffers.activation.ptr;
      epilogue.out = buffers.out.ptr;
      break;
    case EpilogueKind::kSgd:
      epilogue.master = buffers.master.ptr;
      epilogue.out = buffers.out.ptr;
      epilogue.learning_rate = kLearningRate;
      break;
  }
  return epilogue;
}

// Whether gemm() needs c: where the epilogue writes it, or where the chapter stores the product
// there before a separate epilogue pass.
bool needs_c(EpilogueKind kind) {
  return kind == EpilogueKind::kStore || kind == EpilogueKind::kBias || !chapter_fuses_epilogue();
}

GemmProblem problem_for(const Shape& s, OperandOps ops, const __half* a, const __half* b, float* c,
                        float* workspace, const Epilogue& epilogue) {
  GemmProblem problem;
  problem.m = s.m;
  problem.n = s.n;
  problem.k = s.k;
  problem.a = a;
  problem.op_a = ops.a;
  problem.b = b;
  problem.op_b = ops.b;
  problem.c = c;
  problem.workspace = workspace;
  problem.workspace_floats = workspace ? kGemmWorkspaceFloats : 0;
  problem.epilogue = epilogue;
  return problem;
}

// What a correct GEMM leaves in one of its outputs: per element, the exact value and how far from
// it the output may lie.
struct Expected {
  const char* output;  // "c", "out" or "master"
  std::vector<double> value, bound;
};

// An output whose element i should lie within bound of value, where {value, bound} = element(i).
template <class Element>
Expected expect(const char* output, size_t count, Element element) {
  Expected result{output, std::vector<double>(count), std::vector<double>(count)};
  for (size_t i = 0; i < count; ++i) {
    const std::pair<double, double> value_bound = element(i);
    result.value[i] = value_bound.first;
    result.bound[i] = value_bound.second;
  }
  return result;
}

// x within d of x_ref, rounded once more to fp32, or to fp16: the header's bounds.
double float_bound(double x_ref, double d) {
  return d + kFloatRounding * (std::fabs(x_ref) + d);
}
double half_bound(double x_ref, double d) {
  return d + kHalfRounding * (std::fabs(x_ref) + d) + kHalfSubnormalStep;
}

// The outputs of `kind` after `product`, in the order run_epilogue reads them back.
std::vector<Expected> expected_outputs(EpilogueKind kind, const Product& product,
                                       const EpilogueInputs& inputs) {
  const std::vector<double>& v = product.exact;
  const std::vector<double>& e = product.error_bound;
  const size_t count = product.count(), n = product.shape.n;
  const auto biased = [&](size_t i) {
    const double x = v[i] + inputs.bias[i % n];
    return std::pair{x, float_bound(x, e[i])};
  };
  const auto updated_master = [&](size_t i) {
    const double step = double(kLearningRate) * v[i];
    const double x = inputs.master[i] - step;
    return std::pair{x, float_bound(x, float_bound(step, kLearningRate * e[i]))};
  };
  switch (kind) {
    case EpilogueKind::kStore:
      return {expect("c", count, [&](size_t i) { return std::pair{v[i], e[i]}; })};
    case EpilogueKind::kBias:
      return {expect("c", count, biased)};
    case EpilogueKind::kBiasRelu:
      return {expect("out", count, [&](size_t i) {
        const auto [x, d] = biased(i);
        return std::pair{std::max(x, 0.0), half_bound(std::max(x, 0.0), d)};
      })};
    case EpilogueKind::kReluGrad:
      return {expect("out", count, [&](size_t i) {
        // A masked element is fp16(0): exactly zero, whatever v was.
        if (!(__half2float(inputs.activation[i]) > 0)) return std::pair{0.0, 0.0};
        return std::pair{v[i], half_bound(v[i], e[i])};
      })};
    case EpilogueKind::kSgd:
      return {expect("master", count, updated_master), expect("out", count, [&](size_t i) {
                const auto [x, d] = updated_master(i);
                return std::pair{x, half_bound(x, d)};
              })};
  }
  return {};
}

// How one output of one run compares with what it should hold.
struct Comparison {
  size_t bad = 0;
  std::vector<size_t> shown_bad;  // the first kShownBad wrong elements
  double relative_error = 0;      // Euclidean, of the whole output
};

Comparison compare(const std::vector<float>& got, const Expected& expected) {
  Comparison result;
  double error_squares = 0, value_squares = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double error = std::fabs(got[i] - expected.value[i]);
    if (!(error <= expected.bound[i])) {  // written so that NaN fails
      if (result.bad++ < kShownBad) result.shown_bad.push_back(i);
    }
    error_squares += error * error;
    value_squares += expected.value[i] * expected.value[i];
  }
  result.relative_error =
      value_squares > 0 ? std::sqrt(error_squares / value_squares) : std::sqrt(error_squares);
  return result;
}

void check_output(const std::string& what, int n, const std::vector<float>& got,
                  const Expected& expected) {
  const Comparison cmp = compare(got, expected);
  std::string detail =
      format("%s: %s has %zu of %zu elements wrong, relative error %.2e", what.c_str(),
             expected.output, cmp.bad, got.size(), cmp.relative_error);
  for (size_t i : cmp.shown_bad) {
    detail += format("; row %zu col %zu: %.9g, expected %.9g, bound %.3g", i / n, i % n, got[i],
                     expected.value[i], expected.bound[i]);
  }
  CHECK_MSG(cmp.bad == 0, detail);
}

// Which kernels a chapter may run for a product, and which it must have run by the end. Each
// product runs on a blocking stream under capture (captured_kernels.cuh), so that its kernels'
// names are known and a launch on the legacy stream fails; the chapter's claims are
// tests/gpu/chapter_kernels.cuh's table, read with the rules below.

// The GEMM kernels one product ran (gemm()'s epilogue pass left out), sorted.
using Path = std::vector<std::string>;

Path path_of(std::vector<std::string> kernels) {
  std::sort(kernels.begin(), kernels.end());
  return kernels;
}

// What the dispatch rules read of the GPU.
struct Device {
  int sms = 0;
  int max_blocks_per_sm = 0;  // of 256 threads, the block size of chapters 05 and 06
};

Device query_device() {
  constexpr int kSplitKernelThreads = 256;
  int device = 0, sms = 0, threads_per_sm = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  CUDA_CHECK(
      cudaDeviceGetAttribute(&threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, device));
  return {sms, threads_per_sm / kSplitKernelThreads};
}

// What the dispatch rules read of a product.
struct DispatchFacts {
  Shape shape;
  Op op_a;
  EpilogueKind kind;
  size_t workspace_floats;  // GemmProblem's: 0 without a workspace
  bool operands_aligned;    // both 16-byte aligned, every stored row whole 16-byte pieces
  bool epilogue_aligned;    // the same of what chapter 14's weight update writes: the master
                            // weights and their fp16 copies (kSgd), or C (kStore)
};

// Rows of `row_bytes` that TMA can load and store: 16-byte aligned, whole 16-byte pieces.
bool rows_aligned(const void* x, size_t row_bytes) {
  return row_bytes % 16 == 0 && reinterpret_cast<uintptr_t>(x) % 16 == 0;
}

// chapters/02_smem_tiling's vectorizable(): what TMA and the 16-byte copies need of an operand.
bool operand_aligned(const __half* x, int stored_row) {
  return rows_aligned(x, size_t(stored_row) * sizeof(__half));
}

DispatchFacts facts_of(const GemmProblem& p) {
  const bool aligned = operand_aligned(p.a, p.op_a == Op::N ? p.k : p.m) &&
                       operand_aligned(p.b, p.op_b == Op::N ? p.n : p.k);
  const bool epilogue_aligned =
      p.epilogue.kind == EpilogueKind::kSgd
          ? rows_aligned(p.epilogue.master, p.n * sizeof(float)) &&
                rows_aligned(p.epilogue.out, p.n * sizeof(__half))
          : p.epilogue.kind == EpilogueKind::kStore && rows_aligned(p.c, p.n * sizeof(float));
  return {{p.m, p.n, p.k}, p.op_a,          p.epilogue.kind, p.workspace ? p.workspace_floats : 0,
          aligned,         epilogue_aligned};
}

enum class SplitK { kNever, kMaybe, kAlways };

// Whether chapter 05's choose_split (chapters/05_split_k/split_k.cuh), which chapters 06-08 ask
// too, cuts K: into min(resident blocks / tiles of C, K tiles / 4, 32, partial matrices the
// workspace holds) splits, where that is 2 or more. Its constants are restated here as the claim
// under test. How many blocks are resident depends on the kernel's registers, so only bounds are
// used: at least one block per SM (else the kernel could not run), at most what the threads of
// an SM allow. Products between the bounds may go either way.
SplitK split_k(const DispatchFacts& f, const Device& device) {
  constexpr int kTileMn = 128, kTileK = 32;  // block tile of chapters 05 and 06
  constexpr int kMinKTilesPerSplit = 4, kMinSplits = 2;
  const long tiles =
      long((f.shape.m + kTileMn - 1) / kTileMn) * ((f.shape.n + kTileMn - 1) / kTileMn);
  const int k_tiles = (f.shape.k + kTileK - 1) / kTileK;
  const bool room = double(kMinSplits) * f.shape.m * f.shape.n <= double(f.workspace_floats);
  if (!room || k_tiles < kMinSplits * kMinKTilesPerSplit) return SplitK::kNever;
  if (long(device.sms) * device.max_blocks_per_sm < kMinSplits * tiles) return SplitK::kNever;
  if (device.sms >= kMinSplits * tiles) return SplitK::kAlways;
  return SplitK::kMaybe;
}

// The paths a product may take: `whole` where K is not split, `split_path` where it is, either
// where the GPU's occupancy decides.
std::vector<Path> by_split(SplitK split, const Path& whole, const Path& split_path) {
  switch (split) {
    case SplitK::kNever:
      return {whole};
    case SplitK::kAlways:
      return {split_path};
    case SplitK::kMaybe:
      return {whole, split_path};
  }
  return {};
}

// Chapter 12's block tiles (chapters/12_swap_ab/tiles.cuh), restated as the claim under
// test: the batch tiles of 128 and 256 have two consumer warpgroups and one block per SM, with 128
// weight rows per tile, or 64 where the consumers split the batch columns; the smaller ones one
// consumer, 64 rows, two blocks per SM. The weight gradients (A transposed) have no batch tile of
// 32, nor one of 256: where none of theirs fits, chapter 10's kernel takes it (kSwapAbNone).
struct SwapAbTile {
  int rows, batch;
};
constexpr int kSwapAbBatchTiles[] = {32, 64, 128, 256};
constexpr SwapAbTile kSwapAbNone = {0, 0};
constexpr SwapAbTile kSwapAbColumnsSplit = {64, 128};
int swap_ab_smallest_batch_tile(Op op_a) {
  return op_a == Op::N ? 32 : 64;
}
int swap_ab_largest_batch_tile(Op op_a) {
  return op_a == Op::N ? 256 : 128;
}
int swap_ab_consumers(int batch_tile) {
  return batch_tile >= 128 ? 2 : 1;
}
SwapAbTile swap_ab_rows_split(int batch_tile) {
  return {swap_ab_consumers(batch_tile) * 64, batch_tile};
}
int swap_ab_blocks_built_for(const Device& device, SwapAbTile tile) {
  return device.sms * (swap_ab_consumers(tile.batch) == 2 ? 1 : 2);
}
long swap_ab_tiles(const Shape& s, SwapAbTile tile) {
  return long((s.n + tile.rows - 1) / tile.rows) * ((s.m + tile.batch - 1) / tile.batch);
}

// block_tile_for(): the smallest batch tile whose tiles all run at once on `resident(tile)`
// blocks, at most the smallest that holds M; failing that, 256, or none for the weight gradients.
// Then, with A not transposed, the batch tile of 64 with M past 64 becomes the tile of 64 rows by
// 128 split by columns, where its tiles too run at once.
template <class Resident>
SwapAbTile swap_ab_block_tile(const Shape& s, Op op_a, Resident resident) {
  for (const int batch : kSwapAbBatchTiles) {
    if (batch < swap_ab_smallest_batch_tile(op_a) || batch > swap_ab_largest_batch_tile(op_a)) {
      continue;
    }
    const SwapAbTile tile = swap_ab_rows_split(batch);
    if (s.m > batch && swap_ab_tiles(s, tile) > resident(tile)) continue;
    if (op_a == Op::N && batch == 64 && s.m > 64 &&
        swap_ab_tiles(s, kSwapAbColumnsSplit) <= resident(kSwapAbColumnsSplit)) {
      return kSwapAbColumnsSplit;
    }
    return tile;
  }
  return op_a == Op::N ? swap_ab_rows_split(256) : kSwapAbNone;
}

// The splits of chapter 13's plan_split, restated: none below 32 K tiles of 64; otherwise no more
// (tile, split) blocks than SMs, every split at least 8 K tiles, at most 16 splits, no more than
// the workspace holds, and the last block's read-back of splits - 1 fp32 partial tiles no more
// bytes than one split's operands. The workspace starts at a 16-byte boundary, up to 3 floats in.
template <class Resident>
int swap_ab_splits(const DispatchFacts& f, Resident resident, int sms, size_t workspace_floats) {
  constexpr int kTileK = 64, kMinKTilesToSplit = 32, kMinKTilesPerSplit = 8, kMaxSplits = 16;
  const SwapAbTile tile = swap_ab_block_tile(f.shape, f.op_a, resident);
  if (tile.batch == kSwapAbNone.batch) return 1;  // chapter 10's (check_block_tile fails there)
  const int k_tiles = (f.shape.k + kTileK - 1) / kTileK;
  if (k_tiles < kMinKTilesToSplit) return 1;
  const long tiles = swap_ab_tiles(f.shape, tile);
  const size_t partial_floats = size_t(tile.rows) * tile.batch;
  const size_t stage_bytes = size_t(tile.rows + tile.batch) * kTileK * 2;
  int splits = static_cast<int>(
      std::min<size_t>({size_t(sms / tiles), size_t(k_tiles / kMinKTilesPerSplit),
                        size_t(kMaxSplits), workspace_floats / (tiles * partial_floats)}));
  while (splits > 1 && (splits - 1) * partial_floats * 4 >
                           size_t((k_tiles + splits - 1) / splits) * stage_bytes) {
    --splits;
  }
  return std::max(splits, 1);
}

// Whether chapter 13 splits K: the rule at both ends of what the GPU may run at once (one block per
// SM, or the blocks per SM each batch tile is built for) and of the workspace's start. (The rule
// is not monotonic in the resident blocks, so a GPU between the two ends could in principle differ
// from both; an H100 runs the most.)
SplitK swap_ab_split_k(const DispatchFacts& f, const Device& device) {
  if (f.workspace_floats == 0) return SplitK::kNever;
  const auto fewest = [&](SwapAbTile) { return device.sms; };
  const auto most = [&](SwapAbTile tile) { return swap_ab_blocks_built_for(device, tile); };
  const bool at_fewest = swap_ab_splits(f, fewest, device.sms, f.workspace_floats - 3) > 1;
  const bool at_most = swap_ab_splits(f, most, device.sms, f.workspace_floats) > 1;
  if (at_fewest && at_most) return SplitK::kAlways;
  return at_fewest || at_most ? SplitK::kMaybe : SplitK::kNever;
}

// Chapter 15's small_tile_takes() (chapters/15_small_tile/gemm.cuh), restated: at most 64 tiles
// of 32 x 32 and K of at most 128, in any layout, aligned or not.
bool small_tile_takes(const Shape& s) {
  constexpr int kTile = 32, kMaxTiles = 64, kMaxK = 128;
  return long((s.m + kTile - 1) / kTile) * ((s.n + kTile - 1) / kTile) <= kMaxTiles && s.k <= kMaxK;
}

// The paths `chapter` may take for the product: one where its rules decide, two where the GPU's
// occupancy does.
std::vector<Path> allowed_paths(const testing::ChapterKernels& chapter, const DispatchFacts& f,
                                const Device& device) {
  if (chapter.small_tile && small_tile_takes(f.shape)) return {{chapter.small_tile}};
  const SplitK split = split_k(f, device);
  // weight_update_takes(): the weight gradient through the SGD epilogue with K within four K tiles
  // of 64, or the plain store with K within one, every matrix aligned for TMA.
  const int weight_update_max_k = f.kind == EpilogueKind::kSgd ? 256 : 64;
  const bool update_or_store = f.kind == EpilogueKind::kSgd || f.kind == EpilogueKind::kStore;
  if (chapter.weight_update && f.op_a == Op::T && update_or_store &&
      f.shape.k <= weight_update_max_k && f.operands_aligned && f.epilogue_aligned) {
    return {{chapter.weight_update}};
  }
  if (chapter.whole_k) {
    // swap_ab_takes(): a batch-sized dimension (M <= 256 with A not transposed, any N, the output
    // layer's 10 included; K <= 256 with A transposed, the weight gradients) and aligned operands;
    // and the weight gradients only with a batch tile of theirs (at the blocks per SM an H100
    // runs). Chapter 10's rule for everything else. (An H100 with sm_90a code, as for chapters
    // 07-11.)
    constexpr int kSwapAbMaxBatch = 256;  // swap_ab::kMaxBatch
    const int batch = f.op_a == Op::N ? f.shape.m : f.shape.k;
    const SwapAbTile tile = swap_ab_block_tile(
        f.shape, f.op_a, [&](SwapAbTile t) { return swap_ab_blocks_built_for(device, t); });
    if (!(batch <= kSwapAbMaxBatch && f.operands_aligned && tile.batch != kSwapAbNone.batch)) {
      return allowed_paths(testing::kSquareKernels, f, device);
    }
    return by_split(swap_ab_split_k(f, device), {chapter.whole_k}, {chapter.kernel});
  }
  if (chapter.tma_dispatch) {
    // tma_kernel_takes(): with aligned operands and K >= 4 tiles of 64, every product that chapter 06
    // would not split; chapter 06's kernels take everything else. (The test runs these chapters
    // only on an H100 with sm_90a code: elsewhere it SKIPs.)
    constexpr int kMinK = 4 * 64;
    const std::vector<Path> fallback = allowed_paths(testing::kChapter06, f, device);
    if (!(f.operands_aligned && f.shape.k >= kMinK)) return fallback;
    return by_split(split, {chapter.kernel},
                    path_of({testing::kChapter06.kernel, testing::kChapter06.sum_splits}));
  }
  const Path whole = {chapter.kernel};
  if (!chapter.sum_splits) return {whole};
  return by_split(split, whole, path_of({chapter.kernel, chapter.sum_splits}));
}

// Every path `chapter` has: each must run at least once over the test.
std::vector<Path> every_path(const testing::ChapterKernels& chapter) {
  if (chapter.small_tile) {
    testing::ChapterKernels rest = chapter;  // chapter 14's paths, for the other products
    rest.small_tile = nullptr;
    std::vector<Path> paths = every_path(rest);
    paths.push_back({chapter.small_tile});
    return paths;
  }
  if (chapter.whole_k) {
    std::vector<Path> paths = every_path(testing::kSquareKernels);
    paths.push_back({chapter.whole_k});
    if (std::strcmp(chapter.kernel, chapter.whole_k) != 0) paths.push_back({chapter.kernel});
    if (chapter.weight_update) paths.push_back({chapter.weight_update});
    return paths;
  }
  if (chapter.tma_dispatch) {
    std::vector<Path> paths = every_path(testing::kChapter06);
    paths.push_back({chapter.kernel});
    return paths;
  }
  std::vector<Path> paths = {{chapter.kernel}};
  if (chapter.sum_splits) paths.push_back(path_of({chapter.kernel, chapter.sum_splits}));
  return paths;
}

std::string describe_paths(const std::vector<Path>& paths) {
  std::string text;
  for (const Path& path : paths) text += (text.empty() ? "" : " or ") + testing::joined(path);
  return text;
}

// Where the products run, and what the dispatch checks have seen so far.
struct Launches {
  cudaStream_t stream = nullptr;  // blocking: see captured_kernels.cuh
  Device device;
  const testing::ChapterKernels& chapter;
  std::set<Path> seen;  // every path some product took
  std::set<std::pair<Path, EpilogueKind>> seen_with;  // ... and through which epilogues
};

// Chapter 12's kernels name their block tile as their last two template arguments, e.g.
// "...::swap_ab_gemm_kernel<(mnist::Op)0, (mnist::Op)1, (mnist::EpilogueKind)0, 64, 128> 384": 64
// weight rows by a batch tile of 128. It must be block_tile_for()'s with the blocks per SM each
// batch tile is built for (two below 128, one from 128: its launch bounds and a ring of at most
// 192 KB per SM), which an H100 runs. A GPU that ran fewer would be a finding of its own. The
// number after it, the threads of each block, is the producer warpgroup and the batch tile's
// consumers.
void check_block_tile(const std::string& what, const DispatchFacts& f,
                      const std::vector<std::string>& with_arguments, const Device& device) {
  const SwapAbTile expected = swap_ab_block_tile(
      f.shape, f.op_a, [&](SwapAbTile t) { return swap_ab_blocks_built_for(device, t); });
  for (const std::string& name : with_arguments) {
    if (name.find("::swap_ab_gemm_kernel<") == std::string::npos &&
        name.find("::swap_ab_split_k_gemm_kernel<") == std::string::npos) {
      continue;
    }
    const size_t close = name.rfind('>');
    const size_t batch_at = name.rfind(' ', close) + 1;
    const int batch = std::atoi(name.c_str() + batch_at);
    const int rows = std::atoi(name.c_str() + name.rfind(' ', batch_at - 2) + 1);
    const int threads = std::atoi(name.c_str() + close + 1);
    CHECK_MSG(rows == expected.rows && batch == expected.batch,
              format("%s: block tile %d x %d; expected %d x %d", what.c_str(), rows, batch,
                     expected.rows, expected.batch));
    const int expected_threads = 128 * (1 + swap_ab_consumers(batch));
    CHECK_MSG(threads == expected_threads,
              format("%s: %d threads a block with batch tile %d; expected %d", what.c_str(),
                     threads, batch, expected_threads));
  }
}

// `kernels`: what one run of the product launched. Non-fusing chapters add gemm()'s epilogue
// pass for every epilogue but the plain store; the GEMM kernels must be one of allowed_paths.
void check_dispatch(const std::string& what, const DispatchFacts& f,
                    const std::vector<std::string>& kernels, Launches& launches) {
  const bool pass_expected = !chapter_fuses_epilogue() && f.kind != EpilogueKind::kStore;
  Path gemm_kernels;
  int passes = 0;
  for (const std::string& kernel : kernels) {
    if (kernel == testing::kEpiloguePass) {
      ++passes;
    } else {
      gemm_kernels.push_back(kernel);
    }
  }
  const std::vector<Path> allowed = allowed_paths(launches.chapter, f, launches.device);
  const bool path_allowed =
      std::find(allowed.begin(), allowed.end(), gemm_kernels) != allowed.end();
  CHECK_MSG(path_allowed && passes == (pass_expected ? 1 : 0),
            format("%s: ran %s; expected %s%s", what.c_str(), testing::joined(kernels).c_str(),
                   describe_paths(allowed).c_str(),
                   pass_expected ? ", then the epilogue pass" : ", with no epilogue pass"));
  launches.seen.insert(gemm_kernels);
  launches.seen_with.insert({gemm_kernels, f.kind});
}

void check_every_path_ran(const Launches& launches) {
  std::printf("paths the products took:\n");
  for (const Path& path : launches.seen) std::printf("  %s\n", testing::joined(path).c_str());
  for (const Path& path : every_path(launches.chapter)) {
    CHECK_MSG(
        launches.seen.count(path) == 1,
        format("%s: some product ran %s", launches.chapter.chapter, testing::joined(path).c_str()));
  }
}

// The paths of `chapter` that split K: chapter 05's scheme (a reduction kernel after the split
// products, with the epilogue in it or in gemm()'s pass after it), and from chapter 13 on the
// kernel whose last block to arrive adds the splits and applies the epilogue.
bool splits_k(const testing::ChapterKernels& chapter, const Path& path) {
  const bool reduction = std::any_of(path.begin(), path.end(), [](const std::string& kernel) {
    return kernel.find("::sum_splits_kernel") != std::string::npos;
  });
  const bool in_kernel = chapter.whole_k && std::strcmp(chapter.kernel, chapter.whole_k) != 0 &&
                         path == Path{chapter.kernel};
  return reduction || in_kernel;
}

constexpr EpilogueKind kEveryEpilogue[] = {EpilogueKind::kStore, EpilogueKind::kBias,
                                           EpilogueKind::kBiasRelu, EpilogueKind::kReluGrad,
                                           EpilogueKind::kSgd};

// A split that applies the epilogue once per split, or never, is wrong for some epilogue and
// right for others (storing the sum twice leaves the right sum; SGD twice moves the masters
// twice): every path that splits K must have run with every epilogue (kEveryEpilogueShapes).
void check_every_split_path_took_every_epilogue(const Launches& launches) {
  for (const Path& path : every_path(launches.chapter)) {
    if (!splits_k(launches.chapter, path)) continue;
    for (const EpilogueKind kind : kEveryEpilogue) {
      CHECK_MSG(launches.seen_with.count({path, kind}) == 1,
                format("%s: some product ran %s through the %s epilogue", launches.chapter.chapter,
                       testing::joined(path).c_str(), epilogue_name(kind)));
    }
  }
}

// SGD applied more than once, or not at all, to an element: the master moved by n times lr v,
// n = (m0 - master) / (lr v_ref), counted where lr v_ref is far larger than the bound on the
// master's error (the header's), so that n is a whole number within rounding. Every element
// counted must have n = 1.
void check_sgd_applied_once(const std::string& what, const Product& product,
                            const EpilogueInputs& inputs, const std::vector<float>& master) {
  constexpr double kClear = 16;  // |lr v_ref| at least this many times that bound
  long counted = 0;
  std::string first_bad;
  for (size_t i = 0; i < master.size(); ++i) {
    const double step = double(kLearningRate) * product.exact[i];
    const double bound = float_bound(inputs.master[i] - step,
                                     float_bound(step, kLearningRate * product.error_bound[i]));
    if (!(std::fabs(step) > kClear * bound)) continue;
    ++counted;
    const double applications = (inputs.master[i] - double(master[i])) / step;
    if (!(std::fabs(applications - 1) < 0.5) && first_bad.empty()) {
      first_bad = format("; row %zu col %zu: applied %.2f times", i / product.shape.n,
                         i % product.shape.n, applications);
    }
  }
  CHECK_MSG(counted > 0 && first_bad.empty(),
            format("%s: SGD applied once to each of the %ld elements counted%s", what.c_str(),
                   counted, first_bad.c_str()));
}

// What one run left in its outputs, in the order of the Expected list.
using Outputs = std::vector<std::vector<float>>;

// run(workspace) poisons the outputs, runs the GEMM and returns its outputs. Runs it with the
// workspace, again for the same bits, and without a workspace; checks each output of the first
// and the last against `expected`.
template <class Run>
void check_three_runs(const std::string& what, int n, const std::vector<Expected>& expected,
                      float* workspace, Run run) {
  const Outputs first = run(workspace);
  const Outputs again = run(workspace);
  const Outputs without_workspace = run(nullptr);
  for (const auto& [outputs, run_name] :
       {std::pair{&first, "with workspace"}, std::pair{&without_workspace, "without workspace"}}) {
    for (size_t i = 0; i < expected.size(); ++i) {
      check_output(what + " " + run_name, n, (*outputs)[i], expected[i]);
    }
  }
  bool same_bits = true;
  for (size_t i = 0; i < expected.size(); ++i) {
    same_bits = same_bits &&
                std::memcmp(first[i].data(), again[i].data(), first[i].size() * sizeof(float)) == 0;
  }
  CHECK_MSG(same_bits, what + ": a second run gave other bits");
}

// `product` through the epilogue `kind`, with random inputs for it; `offset`: of every buffer the
// epilogue touches, the workspace included (the product's operands take theirs from Product).
void check_epilogue(const Product& product, EpilogueKind kind, float* workspace, SplitMix64& rng,
                    Launches& launches, size_t offset = 0) {
  const Shape& s = product.shape;
  const EpilogueInputs inputs(s, rng);
  EpilogueBuffers buffers(s, inputs, offset);
  workspace += offset;
  const GemmProblem problem_with_workspace =
      problem_for(s, product.named.ops, product.a.ptr, product.b.ptr,
                  needs_c(kind) ? buffers.c.ptr : nullptr, workspace, epilogue_for(kind, buffers));
  const auto with_scratch = [&](float* scratch) {
    GemmProblem problem = problem_with_workspace;
    problem.workspace = scratch;
    problem.workspace_floats = scratch ? kGemmWorkspaceFloats - offset : 0;
    return problem;
  };
  const std::string what = product.describe(kind) + (offset ? ", epilogue buffers misaligned" : "");
  // The chapters set a kernel up the first time they launch it, in static initialisers
  // (cudaFuncSetAttribute, occupancy queries, the TMA encoder's address), and CUDA loads a kernel's
  // module lazily: a first launch here, outside the capture, does both, since global capture
  // mode may refuse such calls (the trainer records its steps in relaxed mode for this reason).
  // Its outputs are overwritten: every run below poisons them first. Its inputs must be there:
  // kSgd reads the master weights (compute-sanitizer's initcheck saw this launch read them
  // uninitialised, 2026-11-23).
  buffers.master.upload(inputs.master);
  for (float* scratch : {workspace, static_cast<float*>(nullptr)}) {
    gemm(with_scratch(scratch), launches.stream);
  }
  CUDA_CHECK(cudaStreamSynchronize(launches.stream));
  const auto run = [&](float* scratch) {
    buffers.master.upload(inputs.master);  // kSgd updates it in place
    buffers.c.poison();
    buffers.out.poison();
    const GemmProblem problem = with_scratch(scratch);
    std::vector<std::string> with_arguments;
    const std::vector<std::string> kernels = testing::run_captured(
        launches.stream, [&] { gemm(problem, launches.stream); }, cudaStreamCaptureModeGlobal,
        &with_arguments);
    const std::string run_what = what + (scratch ? "" : " without workspace");
    const DispatchFacts facts = facts_of(problem);
    check_dispatch(run_what, facts, kernels, launches);
    check_block_tile(run_what, facts, with_arguments, launches.device);
    switch (kind) {
      case EpilogueKind::kStore:
      case EpilogueKind::kBias:
        return Outputs{buffers.c.download()};
      case EpilogueKind::kSgd: {
        const Outputs outputs{buffers.master.download(), buffers.out.download()};
        check_sgd_applied_once(run_what, product, inputs, outputs[0]);
        return outputs;
      }
      default:
        return Outputs{buffers.out.download()};
    }
  };
  try {
    check_three_runs(what, s.n, expected_outputs(kind, product, inputs), workspace, run);
  } catch (const CudaError& error) {  // a failed capture, e.g. a launch on the legacy stream
    CHECK_MSG(false, what + ": " + error.what());
  }
}

// Shapes that every chapter with a split path splits (40 x 48 x 2056: chapter 05's scheme in 16
// splits of 4 or 5 K tiles of 32, chapter 13's kernel in 4, the last 6 K tiles of 64 long), run
// in every layout through every epilogue, not only those the trainer gives that product: each
// split path then meets the epilogues that may not be applied twice (SGD on the fp32 masters,
// and the bias that gemm()'s separate pass adds to C in place).
const Shape kEveryEpilogueShapes[] = {{40, 48, 2056}};

// Even N lets the kernels store a thread's two neighbouring columns as one access, and K and N
// multiples of 8 let them copy operand rows 16 bytes at a time, but only from aligned pointers.
// Buffers one element past an aligned start must take the single-element paths and still be right.
struct Misaligned {
  Shape shape;
  size_t operand_offset;  // of A and B
  size_t buffer_offset;   // of every buffer the epilogue touches, and of the workspace
};
// Split-K in chapters 05-11 (40 x 66 x 1024), one split (130 x 264 x 72), and the TMA kernels of
// chapters 07-11, which take only aligned operands, with a misaligned epilogue (153 tiles of
// 128 x 128 keep chapter 06's kernel from splitting K, which K >= 256 then hands to TMA).
// And chapter 13's kernel, K split (in 4: it splits only from 32 K tiles of 64), with its
// epilogue's buffers and its workspace one float off (the partial tiles move to the next 16-byte
// boundary). And a weight gradient chapter 14's weight update would take (K = 40) but for its
// master weights and fp16 copies, or C, one element off: rows TMA cannot store. All five run under
// `small` too: the third is the smallest shape chapters 07-11 give to their TMA kernels.
const Misaligned kMisaligned[] = {{{40, 66, 1024}, 1, 1},
                                  {{130, 264, 72}, 1, 1},
                                  {{1032, 2056, 264}, 0, 1},
                                  {{24, 72, 2056}, 0, 1},
                                  {{136, 264, 40}, 0, 1}};

// `sanitize` leaves out what is there only for the TMA kernels where the chapter has none
// (chapters 01-06; chapters 12-14 have their own wgmma kernel and chapter 10's). With it, chapter 02's racecheck run
// outlasted 300 s on the H100; without it, it passed within 4 minutes.
void check_misaligned(float* workspace, SplitMix64& rng, Launches& launches, bool sanitize) {
  const bool has_wgmma = launches.chapter.tma_dispatch || launches.chapter.whole_k;
  for (const Misaligned& m : kMisaligned) {
    const bool only_for_wgmma = !is_small(m.shape);
    if (sanitize && only_for_wgmma && !has_wgmma) continue;
    for (const NamedOps& named : kProducts) {
      const Product product(m.shape, named, rng, m.operand_offset);
      for (EpilogueKind kind : named.epilogues) {
        check_epilogue(product, kind, workspace, rng, launches, m.buffer_offset);
      }
    }
  }
}

// A ring stage refilled while another warp still multiplies it: chapter 08 without its barrier
// before the refill (08_no_barrier_before_refill in tools/mutants.txt) passed every check above on
// an H100. Where those shapes reach wgmma, K is 264: 5 K tiles of 64, so each block
// refills a stage that was just read once, and waits on memory while doing it. Here 128 blocks of
// 128 x 256 (chapter 08's tile; about one per SM) walk 64 K tiles each, 60 refills after a read,
// from operands that fit in L2 (2 x 16 MiB), so that the tensor cores rather than the copies set
// the pace and the two warpgroups can drift apart. The arithmetic is exact, so that one wrong
// element shows: op(A)[m][k] = 1 + k / 64 (the number of k's K tile, from 1), op(B) = 1, so every
// element of C is 64 (1 + 2 + ... + 64) = 133120, every partial sum an integer below 2^24, the
// same in any order of addition, in every chapter. A stage read after its refill holds K tile
// t + 4 instead of t, larger values of A: the errors all have one sign and cannot cancel.
// On the H100 it did NOT catch that mutant: 5 runs of each product, all exact. The
// warpgroups stay closer together than one copy's latency, so a refill lands after the slower one
// is done. What caught it is this test under compute-sanitizer racecheck, whose instrumentation
// slows warps unevenly: 7 checks of the K = 264 products failed (tools/mutants.txt runs it so).
// The check stays for what it does cover: 64 K tiles, each stage's barrier through 16 phases.
// Without workspace, so that no chapter splits K and chapters 07-11 run their own kernels.
// Then chapter 12's shapes: 256 x 8512 (one batch tile of 256, whose block has two consumers and
// a ring of 4 stages: 133 tiles of 64 rows by 2 of 128 are more than an H100 runs at once), and
// 256 x 512 and 32 x 2048 (batch tiles of 32, rings of 8 stages), without workspace (64 K tiles
// per block) and with it (K split, summed by the kernel: exact integers show one partial tile
// added twice or left out).
struct RingRace {
  Shape shape;
  bool workspace;
};
const RingRace kRingRaces[] = {{{2048, 2048, 4096}, false}, {{256, 8512, 4096}, false},
                               {{256, 512, 4096}, false},   {{32, 2048, 4096}, false},
                               {{256, 512, 4096}, true},    {{32, 2048, 4096}, true}};
constexpr int kRingRaceTileK = 64;  // chapter 07's K tile
constexpr int kRingRaceRuns = 5;    // per product

void check_ring_race(const RingRace& race, float* workspace, Launches& launches) {
  const Shape& s = race.shape;
  const int k_tiles = s.k / kRingRaceTileK;
  const float exact = float(kRingRaceTileK) * k_tiles * (k_tiles + 1) / 2;
  for (const NamedOps& named : kProducts) {
    DeviceBuffer<__half> a(size_t(s.m) * s.k), b(size_t(s.k) * s.n);
    DeviceBuffer<float> c(size_t(s.m) * s.n);
    std::vector<__half> a_host(a.count);
    for (int m = 0; m < s.m; ++m) {
      for (int k = 0; k < s.k; ++k) {
        const size_t stored = named.ops.a == Op::N ? size_t(m) * s.k + k : size_t(k) * s.m + m;
        a_host[stored] = __float2half_rn(float(1 + k / kRingRaceTileK));
      }
    }
    a.upload(a_host);
    b.upload(std::vector<__half>(b.count, __float2half_rn(1.0f)));
    const GemmProblem problem = problem_for(s, named.ops, a.ptr, b.ptr, c.ptr,
                                            race.workspace ? workspace : nullptr, Epilogue{});
    const std::string what = format("ring race: %s M=%d N=%d K=%d, exact integers%s", named.product,
                                    s.m, s.n, s.k, race.workspace ? ", with workspace" : "");
    gemm(problem, launches.stream);  // uncaptured first launch: see check_epilogue
    int bad_runs = 0;
    std::string first_bad;
    for (int run = 0; run < kRingRaceRuns; ++run) {
      c.poison();
      const std::vector<std::string> kernels =
          testing::run_captured(launches.stream, [&] { gemm(problem, launches.stream); });
      check_dispatch(what, facts_of(problem), kernels, launches);
      const std::vector<float> got = c.download();
      size_t bad = 0, first = 0;
      for (size_t i = 0; i < got.size(); ++i) {
        if (got[i] != exact && bad++ == 0) first = i;
      }
      if (bad == 0) continue;
      if (bad_runs++ == 0) {
        first_bad = format("; run %d: %zu of %zu elements wrong, row %zu col %zu: %.9g", run + 1,
                           bad, got.size(), first / s.n, first % s.n, got[first]);
      }
    }
    CHECK_MSG(bad_runs == 0,
              format("%s: %d of %d runs wrong, expected %.9g everywhere%s", what.c_str(), bad_runs,
                     kRingRaceRuns, exact, first_bad.c_str()));
  }
}

bool rejects(const GemmProblem& problem) {
  try {
    gemm(problem, nullptr);
  } catch (const std::invalid_argument&) {
    return true;
  }
  return false;
}

void check_rejects_empty() {
  GemmProblem empty;
  empty.m = 0;
  empty.n = 4;
  empty.k = 4;
  CHECK_MSG(rejects(empty), "an empty problem is refused with std::invalid_argument");
}

// A^T . B^T is none of the MLP's products, and no chapter compiles a kernel for it.
void check_rejects_both_transposed() {
  const DeviceBuffer<__half> a(16), b(16);
  DeviceBuffer<float> c(16);
  GemmProblem problem;
  problem.m = problem.n = problem.k = 4;
  problem.a = a.ptr;
  problem.b = b.ptr;
  problem.c = c.ptr;
  problem.op_a = problem.op_b = Op::T;
  CHECK_MSG(rejects(problem), "A^T . B^T is refused with std::invalid_argument");
}

// An epilogue with one of its buffers missing: gemm() must refuse it before launching anything.
struct MissingBuffer {
  EpilogueKind kind;
  const char* buffer;
  void (*remove)(GemmProblem&);
};
const MissingBuffer kMissingBuffers[] = {
    {EpilogueKind::kBias, "c", [](GemmProblem& p) { p.c = nullptr; }},
    {EpilogueKind::kBias, "bias", [](GemmProblem& p) { p.epilogue.bias = nullptr; }},
    {EpilogueKind::kBiasRelu, "c", [](GemmProblem& p) { p.c = nullptr; }},
    {EpilogueKind::kBiasRelu, "bias", [](GemmProblem& p) { p.epilogue.bias = nullptr; }},
    {EpilogueKind::kBiasRelu, "out", [](GemmProblem& p) { p.epilogue.out = nullptr; }},
    {EpilogueKind::kReluGrad, "c", [](GemmProblem& p) { p.c = nullptr; }},
    {EpilogueKind::kReluGrad, "activation",
     [](GemmProblem& p) { p.epilogue.activation = nullptr; }},
    {EpilogueKind::kReluGrad, "out", [](GemmProblem& p) { p.epilogue.out = nullptr; }},
    {EpilogueKind::kSgd, "c", [](GemmProblem& p) { p.c = nullptr; }},
    {EpilogueKind::kSgd, "master", [](GemmProblem& p) { p.epilogue.master = nullptr; }},
    {EpilogueKind::kSgd, "out", [](GemmProblem& p) { p.epilogue.out = nullptr; }},
};

// Run last: a chapter that wrongly accepts one of these faults on the null buffer.
void check_rejects_missing_buffers(SplitMix64& rng) {
  const Shape s{4, 4, 4};
  const EpilogueInputs inputs(s, rng);
  const EpilogueBuffers buffers(s, inputs);
  const DeviceBuffer<__half> a(size_t(s.m) * s.k), b(size_t(s.k) * s.n);
  for (const MissingBuffer& missing : kMissingBuffers) {
    // A fusing chapter needs no c for these epilogues, so it rightly takes them without one.
    if (std::strcmp(missing.buffer, "c") == 0 && !needs_c(missing.kind)) continue;
    GemmProblem problem = problem_for(s, kForward, a.ptr, b.ptr, buffers.c.ptr, nullptr,
                                      epilogue_for(missing.kind, buffers));
    missing.remove(problem);
    CHECK_MSG(rejects(problem), format("a %s epilogue without %s is refused with "
                                       "std::invalid_argument",
                                       epilogue_name(missing.kind), missing.buffer));
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string name = std::string("gemm ") + chapter_name();
  if (!gpu_available()) return testing::skip(name.c_str(), "no CUDA device");
  try {
    if (!chapter_unsupported_here().empty()) {
      return testing::skip(name.c_str(), chapter_unsupported_here());
    }
    // Fresh inputs on every run; the seed is printed so a failure can be replayed.
    const uint64_t seed = argc > 1 ? std::stoull(argv[1]) : std::random_device{}();
    const std::string mode = argc > 2 ? argv[2] : "";
    if (!mode.empty() && mode != "small" && mode != "sanitize") {
      throw std::invalid_argument("unknown mode '" + mode + "' (small or sanitize)");
    }
    const bool sanitize = mode == "sanitize";
    const bool small = mode == "small" || sanitize;
    std::printf("%s on %s, seed %llu, epilogues %s\n", name.c_str(), describe(query_gpu()).c_str(),
                static_cast<unsigned long long>(seed),
                chapter_fuses_epilogue() ? "fused" : "in a second pass");
    SplitMix64 rng(seed);
    DeviceBuffer<float> workspace(kGemmWorkspaceFloats);
    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreate(&stream));  // blocking: see captured_kernels.cuh
    const std::unique_ptr<CUstream_st, decltype(&cudaStreamDestroy)> owned_stream(
        stream, &cudaStreamDestroy);
    Launches launches{stream, query_device(), testing::chapter_kernels(chapter_name()), {}, {}};
    int shapes = 0;
    for (const Shape& shape : kShapes) {
      if (small && !is_small(shape)) continue;
      ++shapes;
      for (const NamedOps& named : kProducts) {
        const Product product(shape, named, rng);
        for (EpilogueKind kind : named.epilogues) {
          check_epilogue(product, kind, workspace.ptr, rng, launches);
        }
      }
    }
    for (const Shape& shape : kEveryEpilogueShapes) {
      for (const NamedOps& named : kProducts) {
        const Product product(shape, named, rng);
        for (EpilogueKind kind : kEveryEpilogue) {
          check_epilogue(product, kind, workspace.ptr, rng, launches);
        }
      }
    }
    check_misaligned(workspace.ptr, rng, launches, sanitize);
    // Under `small` (the mutants') only where a TMA ring runs, for the mutants that break its
    // barriers; never under `sanitize` (see the top of the file).
    if (!sanitize && (!small || launches.chapter.tma_dispatch || launches.chapter.whole_k)) {
      for (const RingRace& race : kRingRaces) check_ring_race(race, workspace.ptr, launches);
    }
    check_every_path_ran(launches);
    check_every_split_path_took_every_epilogue(launches);
    const int product_checks = testing::checks();
    check_rejects_empty();
    check_rejects_both_transposed();
    check_rejects_missing_buffers(rng);
    std::printf(
        "%d shapes, each as 3 products stored and through 4 epilogues, some also from "
        "misaligned buffers: %d checks; refusals: %d checks\n",
        shapes, product_checks, testing::checks() - product_checks);
  } catch (const std::exception& error) {
    CHECK_MSG(false, error.what());
  }
  return testing::finish(name.c_str());
}
