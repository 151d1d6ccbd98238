#include "reference_trainer.hpp"

#include <algorithm>
#include <cmath>

#include "fp8.hpp"
#include "half.hpp"
#include "reference_gemm.hpp"

namespace mnist {

ReferenceTrainer::ReferenceTrainer(const ModelParams& init, Arithmetic arithmetic)
    : sizes_(init.sizes), arithmetic_(arithmetic) {
  for (int l = 0; l < init.layers(); ++l) {
    weights_.emplace_back(init.weights[l].begin(), init.weights[l].end());
    biases_.emplace_back(init.biases[l].begin(), init.biases[l].end());
    weight_grads_.emplace_back(weights_[l].size());
    bias_grads_.emplace_back(biases_[l].size());
    weight_operands_.emplace_back(weights_[l].size());
  }
  activations_.resize(sizes_.size());
  if (arithmetic == Arithmetic::kMirrorFp8) {
    input_scaling_.resize(layers() - 1);
    weight_scaling_.resize(layers() - 1);
    gradient_scaling_.resize(layers() - 1);
  }
}

float Fp8Scaling::scale() const {
  return amax_.empty() ? 1.0f : fp8_scale(*std::max_element(amax_.begin(), amax_.end()), kE4m3Max);
}

void Fp8Scaling::quantise(std::vector<double>& values) {
  const float s = scale();
  float amax = 0.0f;
  for (double& v : values) {
    const float x = static_cast<float>(v);
    amax = std::max(amax, std::fabs(x));
    v = static_cast<double>(decode_fp8<E4m3>(encode_fp8<E4m3>(x * s))) / s;
  }
  if (amax_.size() == kFp8History) amax_.erase(amax_.begin());
  amax_.push_back(amax);
}

double ReferenceTrainer::to_operand(double x) const {
  return arithmetic_ == Arithmetic::kFloat64 ? x : round_to_half(static_cast<float>(x));
}

double ReferenceTrainer::to_master(double x) const {
  return arithmetic_ == Arithmetic::kFloat64 ? x : static_cast<float>(x);
}

const std::vector<double>& ReferenceTrainer::forward(const Split& split, const int* rows, int batch,
                                                     Arithmetic arithmetic) {
  std::vector<double>& input = activations_[0];
  input.resize(static_cast<size_t>(batch) * kPixels);
  for (int r = 0; r < batch; ++r) {
    const float* image = split.images.data() + static_cast<size_t>(rows[r]) * kPixels;
    for (int p = 0; p < kPixels; ++p)
      input[static_cast<size_t>(r) * kPixels + p] = to_operand(image[p]);
  }
  if (fp8_layer(0, arithmetic)) input_scaling_[0].quantise(input);
  for (int l = 0; l < layers(); ++l) {
    const int in = sizes_[l], out = sizes_[l + 1];
    // Derived from the masters on every pass, so that tests may edit weights() directly.
    if (fp8_layer(l, arithmetic)) {
      weight_operands_[l] = weights_[l];
      weight_scaling_[l].quantise(weight_operands_[l]);
    } else {
      std::transform(weights_[l].begin(), weights_[l].end(), weight_operands_[l].begin(),
                     [this](double w) { return to_operand(w); });
    }
    std::vector<double>& z = activations_[l + 1];
    z.resize(static_cast<size_t>(batch) * out);
    reference_gemm(batch, out, in, activations_[l].data(), kForward.a, weight_operands_[l].data(),
                   kForward.b, z.data());
    const bool hidden = l + 1 < layers();
    for (int r = 0; r < batch; ++r) {
      for (int j = 0; j < out; ++j) {
        double& v = z[static_cast<size_t>(r) * out + j];
        v = to_master(v) + biases_[l][j];  // the GPU adds the bias to an fp32 accumulator
        if (hidden) {
          v = fp8_layer(l + 1, arithmetic) ? std::max(v, 0.0) : to_operand(std::max(v, 0.0));
        }
      }
    }
    if (fp8_layer(l + 1, arithmetic)) input_scaling_[l + 1].quantise(z);
  }
  return activations_.back();
}

double ReferenceTrainer::compute_gradients(const Split& split, const int* rows, int batch) {
  const std::vector<double>& logits = forward(split, rows, batch);

  // Softmax cross-entropy, mean over the batch; its gradient is (softmax - one_hot) / batch.
  std::vector<double> grad(static_cast<size_t>(batch) * kClasses);
  double loss = 0;
  for (int r = 0; r < batch; ++r) {
    const double* row = logits.data() + static_cast<size_t>(r) * kClasses;
    const double row_max = *std::max_element(row, row + kClasses);
    double sum = 0;
    for (int c = 0; c < kClasses; ++c) sum += std::exp(row[c] - row_max);
    const int label = split.labels[rows[r]];
    loss += std::log(sum) - (row[label] - row_max);
    for (int c = 0; c < kClasses; ++c) {
      const double p = std::exp(row[c] - row_max) / sum;
      grad[static_cast<size_t>(r) * kClasses + c] = to_operand((p - (c == label)) / batch);
    }
  }

  for (int l = layers() - 1; l >= 0; --l) {
    const int in = sizes_[l], out = sizes_[l + 1];
    const std::vector<double>& input = activations_[l];
    reference_gemm(out, in, batch, grad.data(), kBackwardWeight.a, input.data(), kBackwardWeight.b,
                   weight_grads_[l].data());
    std::fill(bias_grads_[l].begin(), bias_grads_[l].end(), 0.0);
    for (int r = 0; r < batch; ++r) {
      for (int j = 0; j < out; ++j) bias_grads_[l][j] += grad[static_cast<size_t>(r) * out + j];
    }
    if (l == 0) break;
    std::vector<double> input_grad(static_cast<size_t>(batch) * in);
    reference_gemm(batch, in, out, grad.data(), kBackwardData.a, weight_operands_[l].data(),
                   kBackwardData.b, input_grad.data());
    const bool fp8 = fp8_layer(l - 1, arithmetic_);
    for (size_t i = 0; i < input_grad.size(); ++i) {
      const double g = fp8 ? input_grad[i] : to_operand(input_grad[i]);
      input_grad[i] = input[i] > 0 ? g : 0.0;  // ReLU'
    }
    if (fp8) gradient_scaling_[l - 1].quantise(input_grad);
    grad = std::move(input_grad);
  }
  return loss / batch;
}

void ReferenceTrainer::apply_sgd(double learning_rate) {
  for (int l = 0; l < layers(); ++l) {
    for (size_t i = 0; i < weights_[l].size(); ++i) {
      weights_[l][i] = to_master(weights_[l][i] - learning_rate * weight_grads_[l][i]);
    }
    for (size_t j = 0; j < biases_[l].size(); ++j) {
      biases_[l][j] = to_master(biases_[l][j] - learning_rate * bias_grads_[l][j]);
    }
  }
}

Evaluation ReferenceTrainer::evaluate(const Split& split) {
  constexpr int kChunk = 1000;
  std::vector<int> rows(kChunk);
  double loss_sum = 0;
  int correct = 0;
  for (int start = 0; start < split.count; start += kChunk) {
    const int count = std::min(kChunk, split.count - start);
    for (int r = 0; r < count; ++r) rows[r] = start + r;
    const std::vector<double>& logits =
        forward(split, rows.data(), count,
                arithmetic_ == Arithmetic::kFloat64 ? arithmetic_ : Arithmetic::kMirrorGpu);
    for (int r = 0; r < count; ++r) {
      const double* row = logits.data() + static_cast<size_t>(r) * kClasses;
      const int best = static_cast<int>(std::max_element(row, row + kClasses) - row);
      const double row_max = row[best];
      double sum = 0;
      for (int c = 0; c < kClasses; ++c) sum += std::exp(row[c] - row_max);
      const int label = split.labels[start + r];
      loss_sum += std::log(sum) - (row[label] - row_max);
      correct += best == label;
    }
  }
  return {loss_sum / split.count, static_cast<double>(correct) / split.count};
}

}  // namespace mnist
