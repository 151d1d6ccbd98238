// Chapter 19: wait only for the data a block reads. Chapter 18's cluster keeps the model on chip
// and meets at the cluster's barrier after every exchange, whose release is a fence over all of
// memory at GPU scope. Here each block pushes its results with st.async, counted off an mbarrier
// in the receiver, and a block waits only for the bytes it reads next (messages.cuh, on_chip.cuh):
// no block waits for the others' arrival. The next step's batch is copied during this one, and
// the first layer's fp32 masters live in registers for the whole launch.
//
// When: on_chip_refusal() (layout.cuh), chapter 18's rule with two batches in the bytes, on a GPU
// that runs a cluster of 16 blocks. Chapter 17's grid kernel trains the other models its rule
// takes, and chapter 14's GEMMs the rest, a step at a time, and every product outside the kernels.
#pragma once

#include "14_weight_update/weight_update.cuh"
#include "17_step_tile/steps.cuh"
#include "19_on_chip/layout.cuh"
#include "19_on_chip/on_chip.cuh"
#include "gemm_interface.cuh"
#include "step_interface.cuh"

namespace mnist::on_chip {

// Chapter 14's GEMMs outside the kernels, as in chapters 16-18.
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
  if (!on_chip_refusal(sizes, buffers.batch).empty() ||
      !launch_cluster<on_chip_training_kernel>(buffers, on_chip_layout(sizes), steps, learning_rate,
                                               stream)) {
    step_tile::train_steps(buffers, steps, learning_rate, stream);
  }
}

constexpr StepTraining kStepTraining = {steps_refusal, train_steps, step_tile::kScratchWordsPerRow};

}  // namespace mnist::on_chip
