#include "reference_trainer.hpp"

#include <algorithm>
#include <cmath>

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
}

double ReferenceTrainer::to_operand(double x) const {
  return arithmetic_ == Arithmetic::kMirrorGpu ? round_to_half(static_cast<float>(x)) : x;
}

double ReferenceTrainer::to_master(double x) const {
  return arithmetic_ == Arithmetic::kMirrorGpu ? static_cast<float>(x) : x;
}

const std::vector<double>& ReferenceTrainer::forward(const Split& split, const int* rows,
                                                     int batch) {
  std::vector<double>& input = activations_[0];
  input.resize(static_cast<size_t>(batch) * kPixels);
  for (int r = 0; r < batch; ++r) {
    const float* image = split.images.data() + static_cast<size_t>(rows[r]) * kPixels;
    for (int p = 0; p < kPixels; ++p)
      input[static_cast<size_t>(r) * kPixels + p] = to_operand(image[p]);
  }
  for (int l = 0; l < layers(); ++l) {
    const int in = sizes_[l], out = sizes_[l + 1];
    // Derived from the masters on every pass, so that tests may edit weights() directly.
    std::transform(weights_[l].begin(), weights_[l].end(), weight_operands_[l].begin(),
                   [this](double w) { return to_operand(w); });
    std::vector<double>& z = activations_[l + 1];
    z.resize(static_cast<size_t>(batch) * out);
    reference_gemm(batch, out, in, activations_[l].data(), kForward.a, weight_operands_[l].data(),
                   kForward.b, z.data());
    const bool hidden = l + 1 < layers();
    for (int r = 0; r < batch; ++r) {
      for (int j = 0; j < out; ++j) {
        double& v = z[static_cast<size_t>(r) * out + j];
        v = to_master(v) + biases_[l][j];  // the GPU adds the bias to an fp32 accumulator
        if (hidden) v = to_operand(std::max(v, 0.0));
      }
    }
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
    for (size_t i = 0; i < input_grad.size(); ++i) {
      input_grad[i] = input[i] > 0 ? to_operand(input_grad[i]) : 0.0;  // ReLU'
    }
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
    const std::vector<double>& logits = forward(split, rows.data(), count);
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
