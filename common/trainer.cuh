// The GPU MLP trainer shared by every chapter: data resident on the device, all buffers carved
// from one arena before the first step, the chapter's gemm() for the three products of each layer.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "dataset.hpp"
#include "device_arena.cuh"
#include "gemm_interface.cuh"
#include "model.hpp"
#include "reference_trainer.hpp"

namespace mnist {

class Trainer {
 public:
  // max_batch bounds the batch size of step(); the whole dataset is copied to the device here.
  Trainer(const ModelParams& init, const Dataset& data, int max_batch);
  ~Trainer();
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  // The order in which the following steps visit the training samples (one copy per epoch).
  void set_order(const std::vector<int>& order);
  // One SGD step on samples order[first, first + batch); its mean loss goes to loss slot `slot`.
  // Asynchronous: nothing waits for the GPU.
  void step(int first, int batch, float learning_rate, int slot);
  // The losses of slots [0, count); waits for the GPU.
  std::vector<float> losses(int count);
  // Mean loss and accuracy on the test split; waits for the GPU.
  Evaluation evaluate();
  // Current parameters, downloaded; waits for the GPU.
  ModelParams params();

  cudaStream_t stream() const { return stream_; }
  int loss_slots() const { return loss_slots_; }
  size_t device_bytes() const { return arena_->bytes(); }

 private:
  struct Layer {
    int in = 0, out = 0;
    float *weights = nullptr, *bias = nullptr;  // fp32 master copies
    __half* weight_operand = nullptr;           // fp16 copy the GEMMs read
    float *weight_grad = nullptr, *bias_grad = nullptr;
    float* z = nullptr;        // GEMM output, rows x out
    __half* output = nullptr;  // fp16(ReLU(z + bias)), hidden layers only
  };
  // Takes every device buffer from the arena (called twice, see DeviceArena).
  void carve(DeviceArena& arena);
  // Forward pass over `rows` inputs; leaves the logits without bias in layers_.back().z.
  void forward(const __half* x, int rows);
  // The chapter's gemm() on the trainer's stream, with the trainer's GEMM workspace.
  void multiply(GemmProblem problem);

  LayerSizes sizes_;
  int train_count_, test_count_, max_rows_, loss_slots_;
  cudaStream_t stream_ = nullptr;
  std::vector<Layer> layers_;
  __half *train_images_ = nullptr, *test_images_ = nullptr, *batch_x_ = nullptr;
  uint8_t *train_labels_ = nullptr, *test_labels_ = nullptr, *batch_labels_ = nullptr;
  int* order_ = nullptr;
  float* input_grad_ = nullptr;                   // dX of the layer being back-propagated
  float* gemm_workspace_ = nullptr;               // kGemmWorkspaceFloats, see gemm_interface.cuh
  __half *grad_a_ = nullptr, *grad_b_ = nullptr;  // fp16 dZ, ping-pong between layers
  float* step_losses_ = nullptr;
  double* eval_loss_sum_ = nullptr;
  int* eval_correct_ = nullptr;
  std::unique_ptr<DeviceArena> arena_;
};

}  // namespace mnist
