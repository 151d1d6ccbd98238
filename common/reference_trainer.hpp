// The CPU reference trainer: the same MLP, initialisation, batch order, loss and SGD as the GPU
// trainers, written as plainly as possible in float64. The tests compare every chapter's loss
// curve against it.
#pragma once

#include <vector>

#include "dataset.hpp"
#include "fp8.hpp"
#include "model.hpp"

namespace mnist {

enum class Arithmetic {
  // Every value in float64: for finite-difference gradient checks.
  kFloat64,
  // Round exactly where the GPU trainers round: GEMM operands (inputs, weight copies,
  // activations, gradients) to fp16 and master parameters to fp32. Products and sums stay in
  // float64, so only the GPU's fp32 accumulation order separates the two loss curves.
  kMirrorGpu,
  // As kMirrorGpu, but the products of the hidden layers (all but the output layer) multiply e4m3
  // operands: each such layer's input, weights and output gradient is a tensor quantised with a
  // scale of its own (fp8.hpp's fp8_scale) from the largest amax of its last kFp8History
  // quantisations, scale 1 before the first: delayed scaling. Values are quantised from fp32, as
  // the GPU's epilogues hold them; a ReLU's mask is the quantised activation's sign. Evaluation
  // runs in kMirrorGpu's arithmetic.
  kMirrorFp8,
};

// A tensor's amax history and the scale it gives.
class Fp8Scaling {
 public:
  float scale() const;
  // Replaces every value by its e4m3 quantisation at scale(), read back unscaled, and records the
  // values' amax (taken after rounding them to fp32).
  void quantise(std::vector<double>& values);

 private:
  std::vector<float> amax_;  // the last kFp8History, oldest first
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
  const std::vector<double>& forward(const Split& split, const int* rows, int batch) {
    return forward(split, rows, batch, arithmetic_);
  }

  int layers() const { return static_cast<int>(weights_.size()); }
  // Parameters and gradients by layer (weights out x in, row-major), for tests.
  std::vector<double>& weights(int layer) { return weights_[layer]; }
  std::vector<double>& biases(int layer) { return biases_[layer]; }
  const std::vector<double>& weight_gradient(int layer) const { return weight_grads_[layer]; }
  const std::vector<double>& bias_gradient(int layer) const { return bias_grads_[layer]; }

 private:
  const std::vector<double>& forward(const Split& split, const int* rows, int batch,
                                     Arithmetic arithmetic);
  double to_operand(double x) const;
  double to_master(double x) const;
  // Whether layer l's products take fp8 operands in `arithmetic`.
  bool fp8_layer(int l, Arithmetic arithmetic) const {
    return arithmetic == Arithmetic::kMirrorFp8 && l + 1 < layers();
  }

  LayerSizes sizes_;
  Arithmetic arithmetic_;
  std::vector<std::vector<double>> weights_, biases_;
  std::vector<std::vector<double>> weight_operands_;  // what the GEMMs multiply by, per pass
  std::vector<std::vector<double>> weight_grads_, bias_grads_;
  std::vector<std::vector<double>> activations_;  // [0] is the input batch, [layers] the logits
  // kMirrorFp8: per hidden layer, the scaling of its input, its weights and its output gradient.
  std::vector<Fp8Scaling> input_scaling_, weight_scaling_, gradient_scaling_;
};

}  // namespace mnist
