// The CPU reference trainer: the same MLP, initialisation, batch order, loss and SGD as the GPU
// trainers, written as plainly as possible in float64. The tests compare every chapter's loss
// curve against it.
#pragma once

#include <vector>

#include "dataset.hpp"
#include "model.hpp"

namespace mnist {

enum class Arithmetic {
  // Every value in float64: for finite-difference gradient checks.
  kFloat64,
  // Round exactly where the GPU trainers round: GEMM operands (inputs, weight copies,
  // activations, gradients) to fp16 and master parameters to fp32. Products and sums stay in
  // float64, so only the GPU's fp32 accumulation order separates the two loss curves.
  kMirrorGpu,
};

class ReferenceTrainer {
 public:
  ReferenceTrainer(const ModelParams& init, Arithmetic arithmetic);

  // Forward and backward pass over rows[0..batch) of `split`; keeps the gradients of the mean
  // softmax cross-entropy and returns that loss.
  double compute_gradients(const Split& split, const int* rows, int batch);
  void apply_sgd(double learning_rate);
  double train_step(const Split& split, const int* rows, int batch, double learning_rate) {
    const double loss = compute_gradients(split, rows, batch);
    apply_sgd(learning_rate);
    return loss;
  }
  Evaluation evaluate(const Split& split);
  // Fills activations_ and returns the logits (batch x classes) of rows[0..batch); for tests, the
  // margins of the predictions.
  const std::vector<double>& forward(const Split& split, const int* rows, int batch);

  int layers() const { return static_cast<int>(weights_.size()); }
  // Parameters and gradients by layer (weights out x in, row-major), for tests.
  std::vector<double>& weights(int layer) { return weights_[layer]; }
  std::vector<double>& biases(int layer) { return biases_[layer]; }
  const std::vector<double>& weight_gradient(int layer) const { return weight_grads_[layer]; }
  const std::vector<double>& bias_gradient(int layer) const { return bias_grads_[layer]; }

 private:
  double to_operand(double x) const;
  double to_master(double x) const;

  LayerSizes sizes_;
  Arithmetic arithmetic_;
  std::vector<std::vector<double>> weights_, biases_;
  std::vector<std::vector<double>> weight_operands_;  // what the GEMMs multiply by, per pass
  std::vector<std::vector<double>> weight_grads_, bias_grads_;
  std::vector<std::vector<double>> activations_;  // [0] is the input batch, [layers] the logits
};

}  // namespace mnist
