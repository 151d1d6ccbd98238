// Chapter 18: the model in one cluster. A small model that fits in one cluster's shared memory
// (layout.cuh) stays there for a launch's steps (training.cuh); else chapter 17's grid kernel.
#pragma once

#include "14_weight_update/weight_update.cuh"
#include "17_step_tile/steps.cuh"
#include "18_cluster_model/training.cuh"
#include "gemm_interface.cuh"
#include "step_interface.cuh"

namespace mnist::cluster_model {

// Chapter 14's GEMMs outside the kernels, as in chapters 16 and 17.
constexpr bool kFusedEpilogue = true;
constexpr bool kReplayStepAsGraph = true;
constexpr bool kNeedsSm90a = true;

inline void launch_gemm(const GemmProblem& p, cudaStream_t stream) {
  weight_update::launch_weight_update_or_fall_back(p, stream);
}

// On one cluster where the model fits and the GPU runs it, else on chapter 17's grid kernel.
inline void train_steps(const StepBuffers& buffers, int steps, float learning_rate,
                        cudaStream_t stream) {
  const LayerSizes sizes = sizes_of(buffers);
  if (!model_refusal(sizes, buffers.batch).empty() ||
      !launch_cluster<cluster_training_kernel>(buffers, model_layout(sizes), steps, learning_rate,
                                               stream)) {
    step_tile::train_steps(buffers, steps, learning_rate, stream);
  }
}

constexpr StepTraining kStepTraining = {steps_refusal, train_steps, step_tile::kScratchWordsPerRow};

}  // namespace mnist::cluster_model
