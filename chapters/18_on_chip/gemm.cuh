// Chapter 18: the model on chip. Where a small model fits in the shared memory of one thread block
// cluster, one cluster trains it there, the blocks handing each other their results through
// distributed shared memory instead of meeting at grid barriers in L2 (on_chip.cuh).
//
// Chapter 16's grid kernel pays, every phase, a round trip to L2 for its operands, another for its
// stores to drain before the barrier's release, and the barrier's own atomic and polling in L2,
// whatever the arithmetic. On chip a step has L - 1 + L - 2 waits for data, where the grid kernel
// has 2 L barriers, and reads nothing from L2 but the batch.
//
// When: on_chip_refusal() (layout.cuh), batches up to 32 and 3 to 8 layers of hidden widths that
// are multiples of 32 up to 256, on a GPU that runs a cluster of 16 blocks. Chapter 16's grid
// kernel trains the other models its rule takes, and chapter 14's GEMMs the rest, a step at a
// time, and every product outside the kernels.
#pragma once

#include "14_weight_update/weight_update.cuh"
#include "16_step_tile/steps.cuh"
#include "18_on_chip/layout.cuh"
#include "18_on_chip/on_chip.cuh"
#include "gemm_interface.cuh"
#include "step_interface.cuh"

namespace mnist::on_chip {

// Chapter 14's GEMMs outside the kernels, as in chapters 15 and 16.
constexpr bool kFusedEpilogue = true;
constexpr bool kReplayStepAsGraph = true;
constexpr bool kNeedsSm90a = true;

inline void launch_gemm(const GemmProblem& p, cudaStream_t stream) {
  weight_update::launch_weight_update_or_fall_back(p, stream);
}

// The steps of a train() call on one cluster where the model fits there, else on chapter 16's grid
// kernel (which refuses what its rule does not take).
inline void train_steps(const StepBuffers& buffers, int steps, float learning_rate,
                        cudaStream_t stream) {
  const LayerSizes sizes = persistent_step::sizes_of(buffers);
  if (on_chip_refusal(sizes, buffers.batch).empty() && on_chip_runs_here()) {
    train_steps_on_chip(persistent_step::model_of(buffers), sizes, steps, learning_rate, stream);
  } else {
    step_tile::train_steps(buffers, steps, learning_rate, stream);
  }
}

constexpr StepTraining kStepTraining = {persistent_step::steps_refusal, train_steps,
                                        step_tile::kScratchWordsPerRow};

}  // namespace mnist::on_chip
