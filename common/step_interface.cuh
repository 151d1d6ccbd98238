// The second way a chapter can plug in, besides launch_gemm() (gemm_interface.cuh): training many
// steps in one launch of its own, on the trainer's device buffers. A chapter that does so declares
// in its gemm.cuh, beside kFusedEpilogue and the rest,
//   constexpr StepTraining kStepTraining = {steps_refusal, train_steps, scratch words a batch row};
// a chapter that does not declares nothing, and common/chapter.cu gives it a StepTraining that
// refuses every model. The trainer still owns everything else: the data, the shuffled order, the
// buffers, evaluation, the CSVs and the errors.
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

// What a training step reads and writes besides the layers: step s of the epoch trains on the
// training images order[s * batch, ...), min(batch, train_count - s * batch) of them, and its mean
// loss goes to step_losses[s]. *step_index is the step that runs next. Plain pointers and numbers,
// so that a kernel can take them by value.
struct StepData {
  __half* train_images = nullptr;  // train_count x kPixels
  uint8_t* train_labels = nullptr;
  int* order = nullptr;
  int* step_index = nullptr;
  int next_step = 0;  // *step_index as the host knows it, for a chapter that launches per step
  int batch = 0, train_count = 0;
  float* logits = nullptr;  // batch x kClasses
  float* step_losses = nullptr;
  // The chapter's own device memory: StepTraining::scratch_words_per_row x batch words of 4 bytes,
  // zero when the trainer is made; each launch finds them as the one before left them.
  void* scratch = nullptr;
  // StepTraining::model_scratch_bytes of the model, zero when the trainer is made; the same rule.
  void* model_scratch = nullptr;
};

// Everything a training step reads and writes, as the trainer lays it out; the trainer owns one.
struct StepBuffers : StepData {
  std::vector<LayerBuffers> layers;
};

// How a chapter trains many steps per launch.
struct StepTraining {
  // Empty where the chapter trains a model of `sizes` at `batch` many steps per launch; otherwise
  // one line that says why not. Asks nothing of the GPU, so that a model is refused the same way
  // on any machine.
  std::string (*refusal)(const LayerSizes& sizes, int batch);
  // Enqueues steps *step_index, ..., *step_index + steps - 1 on `stream` as one launch and leaves
  // *step_index advanced by `steps`; asynchronous. Only where refusal() is empty.
  void (*train)(const StepBuffers& buffers, int steps, float learning_rate, cudaStream_t stream);
  int scratch_words_per_row = 0;  // StepData::scratch
  // Optional, for a chapter that keeps copies of the parameters of its own (chapter 20's fp8
  // weights): the bytes of StepData::model_scratch for a model of `sizes` at `batch`; prepare(),
  // run once the trainer has written the initial parameters, before the first step; and
  // before_evaluation(), which leaves the fp16 weight copies (LayerBuffers::weight_operand) that
  // evaluation multiplies by equal to fp16(masters), where train() does not keep them so.
  size_t (*model_scratch_bytes)(const LayerSizes& sizes, int batch) = nullptr;
  void (*prepare)(const StepBuffers& buffers, cudaStream_t stream) = nullptr;
  void (*before_evaluation)(const StepBuffers& buffers, cudaStream_t stream) = nullptr;
  // Whether train() multiplies the hidden layers' e4m3 copies (chapter 20): the CPU reference it
  // follows is then Arithmetic::kMirrorFp8, after prepare()'s warm-up step at learning rate 0 on
  // the first rows of the training set.
  bool fp8_products = false;
};

// The chapter's refusal(): for a chapter without kStepTraining, a line saying so.
std::string chapter_steps_refusal(const LayerSizes& sizes, int batch);

// The chapter's train(), its launch checked; only where chapter_steps_refusal() is empty.
void chapter_train_steps(const StepBuffers& buffers, int steps, float learning_rate,
                         cudaStream_t stream);

// The chapter's StepTraining::scratch_words_per_row.
int chapter_step_scratch_words_per_row();

// The chapter's optional members, as no-ops (0 bytes) where it leaves them out.
size_t chapter_model_scratch_bytes(const LayerSizes& sizes, int batch);
void chapter_prepare_steps(const StepBuffers& buffers, cudaStream_t stream);
void chapter_before_evaluation(const StepBuffers& buffers, cudaStream_t stream);
bool chapter_steps_use_fp8();

}  // namespace mnist
