// The GPU MLP trainer shared by every chapter: data resident on the device, all buffers carved
// from one arena before the first step, the chapter's gemm() for the three products of each layer,
// each with its epilogue (gemm_interface.cuh).
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "dataset.hpp"
#include "device_arena.cuh"
#include "gemm_interface.cuh"
#include "mlp_kernels.cuh"
#include "model.hpp"
#include "step_interface.cuh"

namespace mnist {

// How a training step reaches the GPU. kHost: the host launches the step's kernels one by one,
// every step. kGraph: the step is recorded once in a CUDA graph and every step is one replay.
// kPersistent: the chapter trains all the steps of a train() call in one launch of its own
// (step_interface.cuh; chapter 10 on), where chapter_steps_refusal() is empty.
enum class StepLaunch { kHost, kGraph, kPersistent };

// The chapter's own choice for a model of `sizes` at `batch`: many steps per launch where it takes
// them, else one CUDA graph per step from chapter 06 on and host launches before.
StepLaunch chapter_step_launch(const LayerSizes& sizes, int batch);

// "host", "graph" or "persistent", as --launch and the epochs CSV write it.
const char* step_launch_name(StepLaunch launch);

class Trainer {
 public:
  // batch: samples per step; the whole dataset is copied to the device here. Throws
  // std::invalid_argument with chapter_steps_refusal() where `launch` is kPersistent and the
  // chapter does not take the model at this batch.
  Trainer(const ModelParams& init, const Dataset& data, int batch, StepLaunch launch);
  ~Trainer();
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  // Starts an epoch that visits the training samples in this order (one copy per epoch).
  void set_order(const std::vector<int>& order);
  // The next `steps` SGD steps of the epoch: step s trains on samples order[s * batch, ...), the
  // last one of the epoch on what is left, and its mean loss goes to loss slot s. Asynchronous:
  // nothing waits for the GPU.
  void train(int steps, float learning_rate);
  // The losses of slots [0, count); waits for the GPU.
  std::vector<float> losses(int count);
  // The fp32 master weights and biases as they are now, for tests; waits for the GPU.
  ModelParams parameters();
  // Mean loss and accuracy on the test split; waits for the GPU.
  Evaluation evaluate();

  // Kernels (graph nodes) in one full-batch step, counted by recording one without running it
  // (with kPersistent, one launch that trains one step).
  int kernels_per_step();
  // Bytes a step must move between DRAM and the SMs at the least: each layer's fp16 weights read
  // by the forward and (above the first layer) the backward-data product, and the SGD update's
  // read and write of the fp32 weights and write of the fp16 copy. Activations are left out: at
  // the sizes where this floor matters they are a small fraction, and they can stay in L2.
  double step_bytes_floor() const;

  cudaStream_t stream() const { return stream_; }
  int steps_per_epoch() const { return steps_per_epoch_; }
  size_t device_bytes() const { return arena_->bytes(); }

 private:
  using Layer = LayerBuffers;
  // A recorded step, for full batches or for the last, shorter batch of an epoch.
  struct StepGraph {
    int rows = 0;
    float learning_rate = 0;
    cudaGraphExec_t exec = nullptr;
  };
  // Takes every device buffer from the arena (called twice, see DeviceArena).
  void carve(DeviceArena& arena);
  // Forward pass over `rows` inputs; leaves the logits in logits_.
  void forward(const __half* x, int rows);
  // One step's kernels on the stream: the step index comes from the device (step_index_).
  void launch_step(int rows, float learning_rate);
  // What enqueue() puts on the stream, recorded into a graph, not run.
  template <class Enqueue>
  cudaGraph_t record(Enqueue&& enqueue);
  void replay(StepGraph& graph, int rows, float learning_rate);
  // The chapter's gemm() on the trainer's stream, with the trainer's GEMM workspace; where the
  // problem has no c, product_ (where a chapter that does not fuse the epilogue stores the
  // product first).
  void multiply(GemmProblem problem);
  int rows_of_step(int step) const;

  LayerSizes sizes_;
  int batch_, train_count_, test_count_, max_rows_, steps_per_epoch_;
  StepLaunch launch_;
  int next_step_ = 0;  // host copy of step_index_
  StepGraph full_graph_, last_graph_;
  cudaStream_t stream_ = nullptr;
  std::vector<Layer> layers_;
  __half *train_images_ = nullptr, *test_images_ = nullptr, *batch_x_ = nullptr;
  uint8_t *train_labels_ = nullptr, *test_labels_ = nullptr, *batch_labels_ = nullptr;
  int* order_ = nullptr;
  int* step_index_ = nullptr;           // the step of the epoch that runs next
  float* logits_ = nullptr;             // rows x kClasses, with the bias
  float* product_ = nullptr;            // the unfused chapters' GEMM results, see multiply()
  float* gemm_workspace_ = nullptr;     // kGemmWorkspaceFloats, see gemm_interface.cuh
  BiasUpdate* bias_updates_ = nullptr;  // one per layer, for bias_sgd
  int bias_count_ = 0;                  // biases of all layers
  float* step_losses_ = nullptr;
  float* loss_partials_ = nullptr;  // batch, for a chapter's many-step launch (StepBuffers)
  unsigned* step_sync_ = nullptr;  // kStepSyncWords, zero: see StepBuffers
  double* eval_loss_sum_ = nullptr;
  int* eval_correct_ = nullptr;
  std::unique_ptr<DeviceArena> arena_;
  StepBuffers step_buffers_;  // the above, for chapter_train_steps()
};

}  // namespace mnist
