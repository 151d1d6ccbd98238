// The second way a chapter can plug in, from chapter 10 on: besides launch_gemm() (the GEMM
// interface, gemm_interface.cuh) it may train many steps in one launch of its own, on the trainer's
// device buffers. A chapter does so by holding steps.cuh in its folder, which defines
// steps_refusal() and train_steps() in its namespace (common/chapter.cu finds it with
// __has_include, as it finds gemm.cuh). The trainer still owns everything else: the data, the
// shuffled order, the buffers, evaluation, the CSVs and the errors.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include "model.hpp"

namespace mnist {

// One layer's buffers in the trainer's arena (trainer.cuh), as its steps use them.
struct LayerBuffers {
  int in = 0, out = 0;
  float *weights = nullptr, *bias = nullptr;  // fp32 master copies
  __half* weight_operand = nullptr;           // fp16 copy the GEMMs read
  __half* output = nullptr;                   // fp16(ReLU(X W^T + bias)), hidden layers only
  __half* grad = nullptr;                     // fp16 dZ, the gradient at this layer's output
};

// Words of device memory, zero at first, that each trainer keeps for a chapter's device-side
// synchronisation (chapter 10's grid barrier): each launch finds them as the one before left them.
constexpr int kStepSyncWords = 1;

// Everything a training step reads and writes, as the trainer lays it out: step s of the epoch
// trains on the training images order[s * batch, ...), min(batch, train_count - s * batch) of
// them, and its mean loss goes to step_losses[s]. *step_index is the step that runs next.
struct StepBuffers {
  std::vector<LayerBuffers> layers;
  const __half* train_images = nullptr;  // train_count x kPixels
  const uint8_t* train_labels = nullptr;
  const int* order = nullptr;
  int* step_index = nullptr;
  int batch = 0, train_count = 0;
  float* logits = nullptr;  // batch x kClasses
  float* step_losses = nullptr;
  float* loss_partials = nullptr;  // batch floats: a chapter's partial sums of a step's loss
  unsigned* sync = nullptr;  // kStepSyncWords words
};

// Empty where the chapter trains a model of `sizes` at `batch` many steps per launch; otherwise
// one line that says why not: every chapter before 10, and the widths and batches its rule leaves
// to the step-by-step trainer. Asks nothing of the GPU, so that a model is refused the same way on
// any machine; a GPU that cannot run the chapter's launch makes chapter_train_steps() throw.
std::string chapter_steps_refusal(const LayerSizes& sizes, int batch);

// Enqueues steps *step_index, ..., *step_index + steps - 1 on `stream`, as one launch, and leaves
// *step_index advanced by `steps`; asynchronous, like the trainer's other launches. Only where
// chapter_steps_refusal() is empty for the buffers' model and batch.
void chapter_train_steps(const StepBuffers& buffers, int steps, float learning_rate,
                         cudaStream_t stream);

}  // namespace mnist
