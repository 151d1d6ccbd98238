// Chapter 16: the persistent training step. One kernel trains every step of a train() call.
//
// A small model's step is mostly launch cost: some 20 kernels, each waiting for the one before it
// to drain and for its own blocks to start. Here the blocks of one kernel stay resident for all
// the steps and wait for each other on the GPU instead (steps.cuh):
//
//   step by step (chapters 06-15)           persistent (this chapter)
//   per step, one kernel each:              one launch for all the steps of a train() call:
//     gather, forward 0 .. L-1, loss,         step 1: fwd 0 | ... | fwd L-1 | loss | bwd 0 |
//     backward data and weights per layer,    step 2: fwd 0 | ... (no launch in between)
//     bias SGD: 3 L + 2 kernels or more       each | a grid barrier: 2 L + 1 a step
//
// Within a phase (schedule.cuh) the blocks share out the 32 x 32 tiles of its products (chapter
// 15's tile, through its epilogues); between phases a grid barrier (grid_barrier.cuh) makes every
// block's writes visible to every block. Same arithmetic as the step-by-step trainer, which stays
// the default where steps_refusal() (launch.cuh) refuses the model.
#pragma once

#include "14_weight_update/weight_update.cuh"
#include "16_persistent_step/steps.cuh"
#include "gemm_interface.cuh"
#include "step_interface.cuh"

namespace mnist::persistent_step {

// Chapter 14's GEMMs outside the persistent kernel (the evaluation, the models steps_refusal()
// refuses); the kernel itself needs only mma.sync, cp.async and a cooperative launch.
constexpr bool kFusedEpilogue = true;
constexpr bool kReplayStepAsGraph = true;
constexpr bool kNeedsSm90a = true;

inline void launch_gemm(const GemmProblem& p, cudaStream_t stream) {
  weight_update::launch_weight_update_or_fall_back(p, stream);
}

// All the steps of a train() call in one launch, where steps_refusal() takes the model.
constexpr StepTraining kStepTraining = {steps_refusal, train_steps, kScratchWordsPerRow};

}  // namespace mnist::persistent_step
