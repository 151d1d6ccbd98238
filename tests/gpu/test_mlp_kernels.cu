// The MLP's own kernels (common/mlp_kernels.cuh), the same in every chapter, against float64
// computations on the CPU: random inputs (never all zeros) and awkward shapes (1 row, a prime
// number of rows, a partial batch, more rows than a block has threads, one-column layers).
//   test_mlp_kernels [SEED]     default: a fresh seed, printed so that a failure can be replayed
// 1. softmax_cross_entropy: every gradient element within one fp16 unit, the mean loss and the
//    loss sum within their fp32 bounds, the correct count exact, the step slot and counter, and
//    nothing written past the rows. Controls: the gradient without its 1/rows, the gradient
//    against the next class's one-hot, and the loss of a class loop that stops one class short
//    must each fail the same checks.
// 2. bias_sgd: every bias of every layer within its fp32 bound of the float64 update over exactly
//    `rows` rows, nothing past a layer's biases touched. Controls: half the learning rate, and the
//    sum over all the buffer's rows instead of the batch's, must fail.
// 3. gather_batch: the step's rows of the order, bit for bit, nothing past them written.
// 4. to_half: every element bit for bit as the CPU's round to nearest even, nothing past them.
// Every kernel is recorded from a blocking stream in global capture mode and replayed, so one
// launched on the legacy default stream instead of the caller's is refused.
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "check.hpp"
#include "cuda_check.cuh"
#include "dataset.hpp"
#include "gpu_info.hpp"
#include "half.hpp"
#include "mlp_kernels.cuh"
#include "rng.hpp"

using namespace mnist;

namespace {

constexpr int kGuard = 16;  // elements past each output that a kernel must leave alone
constexpr float kLearningRate = 0.05f;
const double kFp32Unit = std::ldexp(1.0, -24);  // relative rounding error of one fp32 operation

template <class T>
struct DeviceBuffer {
  explicit DeviceBuffer(const std::vector<T>& host) : count(host.size()) {
    CUDA_CHECK(cudaMalloc(&ptr, count * sizeof(T)));
    CUDA_CHECK(cudaMemcpy(ptr, host.data(), count * sizeof(T), cudaMemcpyHostToDevice));
  }
  ~DeviceBuffer() { cudaFree(ptr); }  // no throwing from a destructor
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  std::vector<T> download() const {
    std::vector<T> host(count);
    CUDA_CHECK(cudaMemcpy(host.data(), ptr, count * sizeof(T), cudaMemcpyDeviceToHost));
    return host;
  }
  T* ptr = nullptr;
  size_t count;
};

__half half_from_bits(unsigned short bits) {
  __half_raw raw;
  raw.x = bits;
  return raw;
}
unsigned short bits_of(__half h) {
  return static_cast<__half_raw>(h).x;
}
const __half kHalfPoison = half_from_bits(0x7e00);  // a quiet NaN: an unwritten element shows

// Records `launch(stream)` from a blocking stream in global capture mode, then replays it once and
// waits. A kernel sent to the legacy default stream instead of `stream` would make the legacy
// stream wait on a capturing blocking stream, which CUDA refuses (cudaErrorStreamCaptureImplicit):
// the launch's check throws.
template <class Launch>
void run_captured(Launch launch) {
  cudaStream_t stream = nullptr;
  CUDA_CHECK(cudaStreamCreate(&stream));
  cudaGraph_t graph = nullptr;
  CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  try {
    launch(stream);
  } catch (...) {
    cudaStreamEndCapture(stream, &graph);
    if (graph) cudaGraphDestroy(graph);
    cudaStreamDestroy(stream);
    throw;
  }
  CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec = nullptr;
  const cudaError_t instantiated = cudaGraphInstantiate(&exec, graph, 0);
  CUDA_CHECK(cudaGraphDestroy(graph));
  CUDA_CHECK(instantiated);
  CUDA_CHECK(cudaGraphLaunch(exec, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  CUDA_CHECK(cudaGraphExecDestroy(exec));
  CUDA_CHECK(cudaStreamDestroy(stream));
}

// A random fp16 value in [-bound, bound] that is not zero.
__half random_nonzero_half(SplitMix64& rng, float bound) {
  for (;;) {
    const __half h = __float2half_rn((2 * rng.uniform01() - 1) * bound);
    if (__half2float(h) != 0) return h;
  }
}

// One fp16 unit in the last place at |x|: the spacing of fp16 values there, 2^-24 among the
// subnormals. An fp32 result rounded to fp16 lies within half of it, plus fp32's own error.
double half_unit(double x) {
  constexpr int kMantissaBits = 10, kSmallestExponent = -24;
  int exponent = 0;
  std::frexp(std::fabs(x), &exponent);  // |x| = f * 2^exponent, f in [0.5, 1)
  return std::ldexp(1.0, std::max(exponent - 1 - kMantissaBits, kSmallestExponent));
}

// ---- softmax_cross_entropy ----

struct Logits {
  int rows;
  std::vector<float> z;  // rows x kClasses
  std::vector<uint8_t> labels;
};

// Uniform logits in +-kSpread; every 7th row shifted by kShift, where expf overflows (e^92 is past
// fp32's largest value) unless a logit of the row is subtracted first; in every 7th row from row 5,
// one class other than 0 alone kShift above the rest, where it overflows unless that logit is the
// one subtracted, the row's maximum; one row with two equal maxima (the first counts, as in
// std::max_element); every third row labelled with its argmax, so some rows are classified right.
Logits random_logits(int rows, SplitMix64& rng) {
  constexpr float kSpread = 8.0f, kShift = 100.0f;
  Logits l{rows, std::vector<float>(static_cast<size_t>(rows) * kClasses), {}};
  for (int r = 0; r < rows; ++r) {
    float* z = &l.z[static_cast<size_t>(r) * kClasses];
    for (int c = 0; c < kClasses; ++c) {
      z[c] = (2 * rng.uniform01() - 1) * kSpread + (r % 7 == 3 ? kShift : 0.0f);
    }
    if (r % 7 == 5) z[1 + r / 7 % (kClasses - 1)] += kShift;
    const int best = static_cast<int>(std::max_element(z, z + kClasses) - z);
    int label = static_cast<int>(rng.below(kClasses));
    if (r % 3 == 0) label = best;
    if (r == rows / 2 && rows > 1) {  // a tie, labelled with the second of the two maxima
      z[2] = z[kClasses - 1] = z[best] + 1.0f;
      label = kClasses - 1;
    }
    l.labels.push_back(static_cast<uint8_t>(label));
  }
  return l;
}

// The float64 softmax cross-entropy of `l` over the first `classes` classes (kClasses, or fewer
// for a control); grad is the gradient of the mean loss, (softmax - one_hot(label + label_shift))
// / rows * grad_scale.
struct SoftmaxResult {
  std::vector<double> grad;
  double loss_sum = 0;
  int correct = 0;
};
SoftmaxResult softmax_reference(const Logits& l, int classes = kClasses, int label_shift = 0,
                                double grad_scale = 1) {
  SoftmaxResult out;
  for (int r = 0; r < l.rows; ++r) {
    const float* z = &l.z[static_cast<size_t>(r) * kClasses];
    const int best = static_cast<int>(std::max_element(z, z + classes) - z);
    double sum = 0;
    for (int c = 0; c < classes; ++c) sum += std::exp(static_cast<double>(z[c]) - z[best]);
    const int label = l.labels[r];
    out.loss_sum += std::log(sum) - (static_cast<double>(z[label]) - z[best]);
    out.correct += best == label;
    const int hot = (label + label_shift) % kClasses;
    for (int c = 0; c < kClasses; ++c) {
      const double p = std::exp(static_cast<double>(z[c]) - z[best]) / sum;
      out.grad.push_back((p - (c == hot)) / l.rows * grad_scale);
    }
  }
  return out;
}

// How many gradient elements lie further than one fp16 unit from `expected`.
int gradient_misses(const std::vector<__half>& gpu, const std::vector<double>& expected) {
  int misses = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    const double d = std::fabs(static_cast<double>(__half2float(gpu[i])) - expected[i]);
    if (!(d <= half_unit(expected[i]))) ++misses;  // NaN (an unwritten element) misses too
  }
  return misses;
}

// The loss sum in fp32 against float64. Each row's loss (at most ~20 here) comes out of expf,
// logf, a sum of 10 terms and two subtractions of fp32 values below 110: good to kRowAbsolute (a
// few 1e-6 at worst by the operations' error bounds, no fast math). The block then adds up to 4
// rows per thread and a tree 8 levels deep: at most kSumRoundings roundings, each within 2^-24 of
// the sum so far (row losses are never negative). A class loop one class short moves a row's loss
// by ~0.1 (the control).
constexpr double kRowAbsolute = 1e-5, kSumRoundings = 12;
double loss_sum_tolerance(double sum, int rows) {
  return rows * kRowAbsolute + kSumRoundings * kFp32Unit * sum;
}
// The mean: the sum's bound over rows, and one more rounding for the division.
bool mean_loss_within(double gpu, double expected_sum, int rows) {
  const double mean = expected_sum / rows;
  return std::fabs(gpu - mean) <= loss_sum_tolerance(expected_sum, rows) / rows + kFp32Unit * mean;
}

void test_softmax_cross_entropy(int rows, SplitMix64& rng) {
  constexpr int kSlots = 4, kStepBefore = 2;
  constexpr float kUnwrittenSlot = -1.0f;
  constexpr double kLossSumBefore = 0.5;
  constexpr int kCorrectBefore = 3;
  const Logits l = random_logits(rows, rng);
  const DeviceBuffer<float> logits(l.z);
  const DeviceBuffer<uint8_t> labels(l.labels);
  const size_t grad_count = static_cast<size_t>(rows) * kClasses;
  DeviceBuffer<__half> grad(std::vector<__half>(grad_count + kGuard, kHalfPoison));
  DeviceBuffer<float> slots(std::vector<float>(kSlots, kUnwrittenSlot));
  DeviceBuffer<int> step(std::vector<int>{kStepBefore});
  DeviceBuffer<double> loss_sum(std::vector<double>{kLossSumBefore});
  DeviceBuffer<int> correct(std::vector<int>{kCorrectBefore});

  // As the trainer calls it: a training step's outputs, then evaluation's sums.
  LossOutputs training;
  training.grad = grad.ptr;
  training.step_losses = slots.ptr;
  training.step = step.ptr;
  LossOutputs evaluation;
  evaluation.loss_sum = loss_sum.ptr;
  evaluation.correct = correct.ptr;
  run_captured([&](cudaStream_t stream) {
    softmax_cross_entropy(logits.ptr, labels.ptr, rows, training, stream);
    softmax_cross_entropy(logits.ptr, labels.ptr, rows, evaluation, stream);
  });

  const std::vector<__half> gpu_grad = grad.download();
  const std::vector<float> gpu_slots = slots.download();
  const int gpu_step = step.download()[0];
  const double gpu_loss_sum = loss_sum.download()[0] - kLossSumBefore;
  const int gpu_correct = correct.download()[0] - kCorrectBefore;

  const SoftmaxResult expected = softmax_reference(l);
  const double mean = expected.loss_sum / rows;
  const int misses = gradient_misses(gpu_grad, expected.grad);
  int guard_changed = 0;
  for (size_t i = grad_count; i < gpu_grad.size(); ++i) {
    guard_changed += bits_of(gpu_grad[i]) != bits_of(kHalfPoison);
  }
  std::printf(
      "softmax_cross_entropy, %4d rows: %d of %zu gradient elements off by more than one fp16 "
      "unit; mean loss %.6f (float64 %.6f), loss sum %.4f (%.4f), %d correct (%d)\n",
      rows, misses, grad_count, gpu_slots[kStepBefore], mean, gpu_loss_sum, expected.loss_sum,
      gpu_correct, expected.correct);
  const std::string shape = " (" + std::to_string(rows) + " rows)";
  CHECK_MSG(misses == 0, "every gradient element within one fp16 unit" + shape);
  CHECK_MSG(guard_changed == 0, "nothing written past the gradient's rows" + shape);
  CHECK_MSG(gpu_step == kStepBefore + 1, "the step counter moves on by one" + shape);
  bool other_slots_kept = true;
  for (int s = 0; s < kSlots; ++s) {
    if (s != kStepBefore) other_slots_kept &= gpu_slots[s] == kUnwrittenSlot;
  }
  CHECK_MSG(other_slots_kept, "only the step's loss slot is written" + shape);
  CHECK_MSG(mean_loss_within(gpu_slots[kStepBefore], expected.loss_sum, rows),
            "the step's mean loss" + shape);
  CHECK_MSG(
      std::fabs(gpu_loss_sum - expected.loss_sum) <= loss_sum_tolerance(expected.loss_sum, rows),
      "the added loss sum" + shape);
  CHECK_MSG(gpu_correct == expected.correct, "the added count of correct rows" + shape);

  // Controls: each plausible bug's result, computed here, must fail the check above. Not with one
  // row for the last two: 1/rows is then 1, and a single row's last class may weigh too little
  // in its sum (e^-12 of the largest) to move the loss measurably.
  CHECK_MSG(gradient_misses(gpu_grad, softmax_reference(l, kClasses, 1).grad) > 0,
            "control: the next class's one-hot is told apart" + shape);
  if (rows > 1) {
    CHECK_MSG(gradient_misses(gpu_grad, softmax_reference(l, kClasses, 0, rows).grad) > 0,
              "control: the gradient without 1/rows is told apart" + shape);
    CHECK_MSG(!mean_loss_within(gpu_slots[kStepBefore], softmax_reference(l, kClasses - 1).loss_sum,
                                rows),
              "control: a class loop one class short is told apart" + shape);
  }
}

// ---- bias_sgd ----

// Layers of awkward widths, together more than one block of threads; the gradient buffer has
// kBufferRows rows, of which a partial batch uses fewer: the rest hold another batch's values.
void test_bias_sgd(int rows, SplitMix64& rng) {
  const std::vector<int> widths = {300, 37, 1, 10};
  constexpr int kBufferRows = 37;
  constexpr float kGradBound = 0.05f, kBiasBound = 0.5f;
  constexpr float kGuardValue = 1234.5f;
  std::vector<std::vector<__half>> grads;
  std::vector<float> biases_before;  // layer by layer, each followed by kGuard guard values
  std::vector<size_t> bias_offsets;
  int total_cols = 0;
  for (int cols : widths) {
    std::vector<__half> grad(static_cast<size_t>(kBufferRows) * cols);
    for (__half& g : grad) g = random_nonzero_half(rng, kGradBound);
    grads.push_back(grad);
    bias_offsets.push_back(biases_before.size());
    for (int j = 0; j < cols; ++j) biases_before.push_back((2 * rng.uniform01() - 1) * kBiasBound);
    biases_before.insert(biases_before.end(), kGuard, kGuardValue);
    total_cols += cols;
  }
  std::vector<std::unique_ptr<DeviceBuffer<__half>>> grad_buffers;
  DeviceBuffer<float> biases(biases_before);
  std::vector<BiasUpdate> updates;
  for (size_t l = 0; l < widths.size(); ++l) {
    grad_buffers.push_back(std::make_unique<DeviceBuffer<__half>>(grads[l]));
    updates.push_back({grad_buffers.back()->ptr, biases.ptr + bias_offsets[l], widths[l]});
  }
  const DeviceBuffer<BiasUpdate> device_updates(updates);
  run_captured([&](cudaStream_t stream) {
    bias_sgd(device_updates.ptr, static_cast<int>(widths.size()), total_cols, rows, kLearningRate,
             stream);
  });
  const std::vector<float> gpu = biases.download();

  // bias - lr * (sum of the column over `summed_rows` rows) in float64, against the GPU's fp32:
  // a sum of `rows` terms in order (rows roundings of at most 2^-24 of the running sum, bounded by
  // the sum of magnitudes), the product with lr and the subtraction (one rounding each). The
  // tolerance doubles that bound.
  auto misses = [&](double rate, int summed_rows) {
    int count = 0;
    for (size_t l = 0; l < widths.size(); ++l) {
      for (int j = 0; j < widths[l]; ++j) {
        double sum = 0, magnitudes = 0;
        for (int r = 0; r < summed_rows; ++r) {
          const double g = __half2float(grads[l][static_cast<size_t>(r) * widths[l] + j]);
          sum += g;
          magnitudes += std::fabs(g);
        }
        const size_t at = bias_offsets[l] + j;
        const double expected = biases_before[at] - rate * sum;
        const double bound =
            (rows + 2) * kFp32Unit *
            (std::fabs(expected) + kLearningRate * magnitudes + std::fabs(rate * sum));
        count += !(std::fabs(gpu[at] - expected) <= 2 * bound);
      }
    }
    return count;
  };
  int guard_changed = 0;
  for (size_t l = 0; l < widths.size(); ++l) {
    for (int g = 0; g < kGuard; ++g)
      guard_changed += gpu[bias_offsets[l] + widths[l] + g] != kGuardValue;
  }
  const int wrong = misses(kLearningRate, rows);
  std::printf("bias_sgd, %2d of %d rows, layers of 300, 37, 1 and 10 biases: %d of %d off\n", rows,
              kBufferRows, wrong, total_cols);
  const std::string shape = " (" + std::to_string(rows) + " rows)";
  CHECK_MSG(wrong == 0, "every bias of every layer within its fp32 bound" + shape);
  CHECK_MSG(guard_changed == 0, "nothing past a layer's biases written" + shape);
  CHECK_MSG(misses(kLearningRate / 2, rows) > 0,
            "control: half the learning rate is told apart" + shape);
  if (rows < kBufferRows) {
    CHECK_MSG(misses(kLearningRate, kBufferRows) > 0,
              "control: a sum over the whole buffer, not the batch's rows, is told apart" + shape);
  }
}

// ---- gather_batch ----

void test_gather_batch(int batch, int step_index, SplitMix64& rng) {
  constexpr int kImages = 101;
  const int rows = std::min(batch, kImages - step_index * batch);
  std::vector<__half> images(static_cast<size_t>(kImages) * kPixels);
  for (__half& p : images) p = random_nonzero_half(rng, 3.0f);
  std::vector<uint8_t> labels(kImages);
  for (uint8_t& label : labels) label = static_cast<uint8_t>(rng.below(kClasses));
  const std::vector<int> order = epoch_order(kImages, rng.next(), 0);
  const size_t x_count = static_cast<size_t>(batch) * kPixels + kGuard;
  const DeviceBuffer<__half> d_images(images);
  const DeviceBuffer<uint8_t> d_labels(labels);
  const DeviceBuffer<int> d_order(order);
  const DeviceBuffer<int> d_step(std::vector<int>{step_index});
  DeviceBuffer<__half> x(std::vector<__half>(x_count, kHalfPoison));
  constexpr uint8_t kUnwrittenLabel = 0xff;
  DeviceBuffer<uint8_t> batch_labels(std::vector<uint8_t>(batch + kGuard, kUnwrittenLabel));
  run_captured([&](cudaStream_t stream) {
    gather_batch(d_images.ptr, d_labels.ptr, d_order.ptr, d_step.ptr, batch, rows, kPixels, x.ptr,
                 batch_labels.ptr, stream);
  });
  const std::vector<__half> gpu_x = x.download();
  const std::vector<uint8_t> gpu_labels = batch_labels.download();

  int wrong_pixels = 0, wrong_labels = 0, written_past = 0;
  for (int r = 0; r < rows; ++r) {
    const int source = order[step_index * batch + r];
    for (int p = 0; p < kPixels; ++p) {
      wrong_pixels += bits_of(gpu_x[static_cast<size_t>(r) * kPixels + p]) !=
                      bits_of(images[static_cast<size_t>(source) * kPixels + p]);
    }
    wrong_labels += gpu_labels[r] != labels[source];
  }
  for (size_t i = static_cast<size_t>(rows) * kPixels; i < gpu_x.size(); ++i) {
    written_past += bits_of(gpu_x[i]) != bits_of(kHalfPoison);
  }
  for (size_t i = rows; i < gpu_labels.size(); ++i)
    written_past += gpu_labels[i] != kUnwrittenLabel;
  std::printf("gather_batch, step %d at batch %d (%d rows): %d pixels, %d labels wrong\n",
              step_index, batch, rows, wrong_pixels, wrong_labels);
  const std::string shape =
      " (step " + std::to_string(step_index) + ", " + std::to_string(rows) + " rows)";
  CHECK_MSG(wrong_pixels == 0 && wrong_labels == 0, "the step's rows of the order" + shape);
  CHECK_MSG(written_past == 0, "nothing written past the step's rows" + shape);
}

// ---- to_half ----

void test_to_half(SplitMix64& rng) {
  constexpr int kCount = 1000003;  // not a multiple of the block size
  std::vector<float> x(kCount);
  for (float& v : x) {
    // 2^-31 .. 2^17: subnormal fp16, normal, and beyond fp16's largest value
    v = std::ldexp(2 * rng.uniform01() - 1, static_cast<int>(rng.below(48)) - 30);
  }
  const DeviceBuffer<float> d_x(x);
  DeviceBuffer<__half> out(std::vector<__half>(kCount + kGuard, kHalfPoison));
  run_captured([&](cudaStream_t stream) { to_half(d_x.ptr, kCount, out.ptr, stream); });
  const std::vector<__half> gpu = out.download();
  int wrong = 0, written_past = 0;
  for (int i = 0; i < kCount; ++i) {
    const float cpu = round_to_half(x[i]);
    const float got = __half2float(gpu[i]);
    wrong += std::memcmp(&cpu, &got, sizeof cpu) != 0;
  }
  for (size_t i = kCount; i < gpu.size(); ++i)
    written_past += bits_of(gpu[i]) != bits_of(kHalfPoison);
  std::printf("to_half, %d values: %d differ from round to nearest even\n", kCount, wrong);
  CHECK_MSG(wrong == 0, "every value rounded to nearest even");
  CHECK_MSG(written_past == 0, "nothing written past the values");
}

}  // namespace

int main(int argc, char** argv) {
  const char* name = "mlp_kernels";
  if (argc > 2) {
    std::fprintf(stderr, "usage: %s [SEED]\n", argv[0]);
    return 2;
  }
  if (!gpu_available()) return testing::skip(name, "no CUDA device");
  try {
    const uint64_t seed = argc > 1 ? std::stoull(argv[1]) : std::random_device{}();
    std::printf("%s on %s, seed %llu\n", name, describe(query_gpu()).c_str(),
                static_cast<unsigned long long>(seed));
    SplitMix64 rng(seed);
    // 1 row, a partial batch, a prime batch, one row per thread, and evaluation's chunk of 1000
    // (several rows per thread).
    for (int rows : {1, 27, 37, 256, 1000}) test_softmax_cross_entropy(rows, rng);
    for (int rows : {1, 27, 37}) test_bias_sgd(rows, rng);
    test_gather_batch(37, 1, rng);  // a full batch
    test_gather_batch(37, 2, rng);  // the last, partial one: 101 - 74 = 27 rows
    test_to_half(rng);
  } catch (const std::exception& error) {
    CHECK_MSG(false, error.what());
  }
  return testing::finish(name);
}
