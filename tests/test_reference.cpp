// The CPU reference trainer that every chapter is compared against: its GEMM, its gradients
// (against finite differences) and its training (the loss must fall on real MNIST).
//   test_reference DATA_DIR
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

#include "check.hpp"
#include "idx.hpp"
#include "reference_gemm.hpp"
#include "reference_trainer.hpp"
#include "rng.hpp"

using namespace mnist;

namespace {

std::vector<double> random_values(size_t count, SplitMix64& rng) {
  std::vector<double> values(count);
  for (double& v : values) v = 2 * rng.uniform01() - 1;
  return values;
}

// Every layout, on a small product and on one large enough to be shared among threads.
void test_gemm_layouts(int m, int n, int k) {
  SplitMix64 rng(1);
  for (Op op_a : {Op::N, Op::T}) {
    for (Op op_b : {Op::N, Op::T}) {
      const std::vector<double> a = random_values(m * k, rng), b = random_values(k * n, rng);
      std::vector<double> c(m * n, NAN);
      reference_gemm(m, n, k, a.data(), op_a, b.data(), op_b, c.data());
      double worst = 0;
      for (int i = 0; i < m; ++i) {
        for (int j = 0; j < n; ++j) {
          double sum = 0;
          for (int p = 0; p < k; ++p) {
            sum += (op_a == Op::N ? a[i * k + p] : a[p * m + i]) *
                   (op_b == Op::N ? b[p * n + j] : b[j * k + p]);
          }
          const double d = std::fabs(c[i * n + j] - sum);
          worst = std::isnan(d) ? INFINITY : std::max(worst, d);  // an element never written is NaN
        }
      }
      CHECK_MSG(worst < 1e-12, std::string("layout ") + op_name(op_a) + op_name(op_b) + " " +
                                   std::to_string(m) + " x " + std::to_string(n));
    }
  }
}

Split random_split(int count, SplitMix64& rng) {
  Split split;
  split.count = count;
  split.images.resize(static_cast<size_t>(count) * kPixels);
  for (float& x : split.images) x = 2 * rng.uniform01() - 1;
  for (int i = 0; i < count; ++i) split.labels.push_back(static_cast<uint8_t>(rng.below(kClasses)));
  return split;
}

// Central differences of the batch loss against the analytic gradient, for a spread of weights
// and biases in every layer, in float64.
void test_gradients() {
  SplitMix64 rng(2);
  const Split split = random_split(6, rng);
  std::vector<int> rows(split.count);
  std::iota(rows.begin(), rows.end(), 0);
  ReferenceTrainer trainer(init_params({784, 7, 5, 10}, 3), Arithmetic::kFloat64);
  trainer.compute_gradients(split, rows.data(), split.count);

  constexpr double kStep = 1e-6;
  int compared = 0;
  double worst = 0;
  auto compare = [&](std::vector<double>& params, const std::vector<double>& analytic) {
    const std::vector<double> saved_analytic = analytic;
    for (size_t i = 0; i < params.size(); i += 1 + params.size() / 23) {
      const double original = params[i];
      params[i] = original + kStep;
      const double up = trainer.compute_gradients(split, rows.data(), split.count);
      params[i] = original - kStep;
      const double down = trainer.compute_gradients(split, rows.data(), split.count);
      params[i] = original;
      const double numeric = (up - down) / (2 * kStep);
      worst = std::max(
          worst, std::fabs(numeric - saved_analytic[i]) / (1e-6 + std::fabs(saved_analytic[i])));
      ++compared;
    }
  };
  for (int l = 0; l < trainer.layers(); ++l) {
    trainer.compute_gradients(split, rows.data(), split.count);
    compare(trainer.weights(l), trainer.weight_gradient(l));
    trainer.compute_gradients(split, rows.data(), split.count);
    compare(trainer.biases(l), trainer.bias_gradient(l));
  }
  std::printf("gradient check: %d parameters, worst relative error %.2e\n", compared, worst);
  CHECK(compared >= 50);
  CHECK_MSG(worst < 1e-5, "analytic gradient matches central differences");
}

// Delayed scaling: scale 1 before the first quantisation, then the power of two that the largest
// amax of the last kFp8History quantisations allows; values read back as their e4m3 code at that
// scale says.
void test_fp8_scaling() {
  Fp8Scaling scaling;
  CHECK(scaling.scale() == 1.0f);
  std::vector<double> values = {3.0, -0.1, 5e-4};
  scaling.quantise(values);
  CHECK_MSG(values[0] == 3.0 && values[1] == -0.1015625 && values[2] == 0.0,
            "at scale 1: 3 exact, -0.1 to the nearest e4m3 value, 5e-4 (under half of 2^-9) to 0");
  CHECK(scaling.scale() == 128.0f);  // 448 / 3 = 149.3: the power of two below
  values = {1e-3};
  scaling.quantise(values);
  CHECK(values[0] == std::ldexp(1.0, -10));  // 0.128 to the e4m3 value 0.125, / 128
  for (int i = 1; i < kFp8History; ++i) {
    CHECK(scaling.scale() == 128.0f);  // amax 3 still in the history
    values = {0.5};
    scaling.quantise(values);
  }
  CHECK_MSG(scaling.scale() == 512.0f, "amax 3 has left the history: 448 / 0.5 = 896 -> 512");
}

// A few hundred steps on MNIST: the loss must fall well below ln(10), rounding operands to fp16
// (the GPU's arithmetic) must not change the curve by much, and e4m3 operands in the hidden layers
// (after a first step at learning rate 0 that fills their amax histories) must change it more than
// fp16 does, yet still learn.
void test_training(const std::string& data_dir) {
  const Dataset data = load_dataset(data_dir);
  constexpr int kBatch = 32, kSteps = 300, kWindow = 50;
  constexpr double kLearningRate = 0.05;
  const ModelParams init = init_params({784, 64, 64, 64, 10}, 42);
  const std::vector<int> order = epoch_order(data.train.count, 42, 0);
  ReferenceTrainer mirror(init, Arithmetic::kMirrorGpu), exact(init, Arithmetic::kFloat64),
      fp8(init, Arithmetic::kMirrorFp8);
  fp8.train_step(data.train, order.data(), kBatch, 0.0);
  double first = 0, last = 0, last_fp8 = 0, largest_gap = 0, largest_fp8_gap = 0;
  for (int s = 0; s < kSteps; ++s) {
    const double loss = mirror.train_step(data.train, &order[s * kBatch], kBatch, kLearningRate);
    const double exact_loss =
        exact.train_step(data.train, &order[s * kBatch], kBatch, kLearningRate);
    const double fp8_loss = fp8.train_step(data.train, &order[s * kBatch], kBatch, kLearningRate);
    largest_gap = std::max(largest_gap, std::fabs(loss - exact_loss));
    largest_fp8_gap = std::max(largest_fp8_gap, std::fabs(fp8_loss - exact_loss));
    if (s < kWindow) first += loss / kWindow;
    if (s >= kSteps - kWindow) last += loss / kWindow, last_fp8 += fp8_loss / kWindow;
  }
  const Evaluation test = mirror.evaluate(data.test), test_fp8 = fp8.evaluate(data.test);
  std::printf(
      "reference 784-64-64-64-10: loss %.4f (first %d steps) -> %.4f (last %d), "
      "test accuracy %.4f, largest fp16-vs-fp64 loss gap %.2e\n"
      "  e4m3 hidden layers: loss -> %.4f (last %d), test accuracy %.4f, largest e4m3-vs-fp64 "
      "loss gap %.2e\n",
      first, kWindow, last, kWindow, test.accuracy, largest_gap, last_fp8, kWindow,
      test_fp8.accuracy, largest_fp8_gap);
  CHECK_MSG(first > 1.0 && last < 0.5 * first, "the loss falls");
  CHECK_MSG(test.accuracy > 0.85, "300 steps of SGD learn MNIST well past chance");
  CHECK_MSG(largest_gap < 0.05, "fp16 operands barely move the loss curve");
  CHECK_MSG(largest_fp8_gap > largest_gap, "e4m3 operands move the curve more than fp16 ones");
  CHECK_MSG(last_fp8 < 0.5 * first && test_fp8.accuracy > 0.85, "e4m3 operands still learn");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DATA_DIR\n", argv[0]);
    return 2;
  }
  test_gemm_layouts(5, 7, 3);
  test_gemm_layouts(67, 129, 257);
  test_gradients();
  test_fp8_scaling();
  try {
    test_training(argv[1]);
  } catch (const DataError& error) {
    CHECK_MSG(false, std::string(error.what()) + " (run data/fetch.sh)");
  }
  return testing::finish("reference");
}
