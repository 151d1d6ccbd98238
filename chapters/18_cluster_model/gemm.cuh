// Chapter 18: the model in one cluster. Where a small model fits in the shared memory of one thread
// block cluster, one cluster trains it there for every step of a launch: its weights, activations
// and gradients stay on chip, and the blocks store their results straight into each other's shared
// memory and meet at the cluster's barrier (training.cuh), not at grid barriers in L2, each of
// which costs chapter 17's kernel a round trip to L2 for its operands and one for its stores.
//
// When: model_refusal() (layout.cuh), on a GPU that runs a cluster of 16 blocks. Chapter 17's grid
// kernel trains the other models its rule takes, and chapter 14's GEMMs the rest, a step at a
// time, and every product outside the kernels.
#pragma once

#include "14_weight_update/weight_update.cuh"
#include "17_step_tile/steps.cuh"
#include "18_cluster_model/layout.cuh"
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

// The steps of a train() call on one cluster where the model fits there, else on chapter 17's grid
// kernel (which refuses what its rule does not take).
inline void train_steps(const StepBuffers& buffers, int steps, float learning_rate,
                        cudaStream_t stream) {
  const LayerSizes sizes = persistent_step::sizes_of(buffers);
  if (model_refusal(sizes, buffers.batch).empty() && cluster_runs_here()) {
    train_steps_in_cluster(persistent_step::model_of(buffers), sizes, steps, learning_rate, stream);
  } else {
    step_tile::train_steps(buffers, steps, learning_rate, stream);
  }
}

constexpr StepTraining kStepTraining = {persistent_step::steps_refusal, train_steps,
                                        step_tile::kScratchWordsPerRow};

}  // namespace mnist::cluster_model
