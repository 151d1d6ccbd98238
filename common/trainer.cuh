// The GPU MLP trainer shared by every chapter: data resident on the device, all buffers carved
// from one arena before the first step, the chapter's gemm() for the three products of each layer,
// each with its epilogue (gemm_interface.cuh).
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <optional>
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
// (step_interface.cuh; chapter 16 on), where chapter_steps_refusal() is empty.
enum class StepLaunch { kHost, kGraph, kPersistent };

// Test rows per forward pass of evaluate(): its last chunk holds what is left.
constexpr int kEvalChunk = 1000;

// How the trainer launches a step of a model of `sizes` at `batch`, and the one place that refuses
// what the chapter cannot run: `requested` (--launch) where given, else the chapter's own choice,
// many steps per launch where it takes the model, else one CUDA graph per step from chapter 06 on
// and host launches before. Throws std::invalid_argument with the chapter's line where kPersistent
// is requested for a model it does not take (asking nothing of the GPU, so that this comes first
// on any machine), then std::runtime_error where the chapter cannot run on this GPU
// (chapter_unsupported_here).
StepLaunch step_launch_for(const LayerSizes& sizes, int batch,
                           std::optional<StepLaunch> requested = std::nullopt);

// "host", "graph" or "persistent", as --launch and the epochs CSV write it.
const char* step_launch_name(StepLaunch launch);

class Trainer {
 public:
  // batch: samples per step; the whole dataset is copied to the device here. launch: as
  // step_launch_for() gives it for the model and batch.
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
  // read and write of the fp32 weights and write of the fp16 copy (an FP8 step: the hidden layers'
  // e4m3 copies instead, as read and written). Activations are left out: at the sizes where this
  // floor matters they are a small fraction, and they can stay in L2.
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
  size_t scratch_words() const;  // StepData::scratch
  // Forward pass over `rows` inputs; leaves the logits in step_.logits.
  void forward(const __half* x, int rows);
  // One step's kernels on the stream: the step index comes from the device (step_.step_index).
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
  int test_count_, max_rows_, steps_per_epoch_;
  StepLaunch launch_;
  size_t model_scratch_bytes_;  // StepData::model_scratch, persistent launches only
  int next_step_ = 0;           // host copy of *step_.step_index
  StepGraph full_graph_, last_graph_;
  cudaStream_t stream_ = nullptr;
  // The layers, the training data and order, the logits (max_rows_ x kClasses, with the bias),
  // the losses and the chapter's scratch: what every step reads and writes, and what
  // chapter_train_steps() trains on.
  StepBuffers step_;
  __half *test_images_ = nullptr, *batch_x_ = nullptr;
  uint8_t *test_labels_ = nullptr, *batch_labels_ = nullptr;
  float* product_ = nullptr;            // the unfused chapters' GEMM results, see multiply()
  float* gemm_workspace_ = nullptr;     // kGemmWorkspaceFloats, see gemm_interface.cuh
  BiasUpdate* bias_updates_ = nullptr;  // one per layer, for bias_sgd
  int bias_count_ = 0;                  // biases of all layers
  double* eval_loss_sum_ = nullptr;
  int* eval_correct_ = nullptr;
  std::unique_ptr<DeviceArena> arena_;
};

}  // namespace mnist
