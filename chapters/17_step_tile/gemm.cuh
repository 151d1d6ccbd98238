// Chapter 17: the step's tiles. Chapter 16's persistent kernel, its small products made fast.
//
// Chapter 16 trains every step of a train() call in one launch, its phases split at grid barriers,
// each phase's products cut into plain 32 x 32 tiles. A phase of a small model is short, and what
// lengthens it is a tile's own chain of waits: each mma waiting for the one before, the epilogue's
// loads after the last mma, a loss phase and a bias loop that wait on memory row after row. Here
// (tile.cuh, steps.cuh):
//
//   chapter 16                               this chapter
//   one accumulator set a warp               kChains sets in turn, K tiles of 128
//   weight gradients on 32 x 32 tiles        2 x 2 of them a block where every block gets one
//   epilogue inputs loaded after the K loop  loaded while the first copies are in flight
//   the loss a phase of its own (block 0)    in the output layer's phase, a tile's rows at a time
//   a thread per bias column, row by row     a group of columns staged in shared memory at once
//   a phase's products one after another     one list, the longer tiles on the blocks with fewer
//
// The barrier, the schedule, the rule and the cooperative launch are chapter 16's; the same
// arithmetic as the step-by-step trainer.
#pragma once

#include "14_weight_update/weight_update.cuh"
#include "17_step_tile/steps.cuh"
#include "gemm_interface.cuh"
#include "step_interface.cuh"

namespace mnist::step_tile {

// Chapter 14's GEMMs outside the persistent kernel, as in chapter 16.
constexpr bool kFusedEpilogue = true;
constexpr bool kReplayStepAsGraph = true;
constexpr bool kNeedsSm90a = true;

inline void launch_gemm(const GemmProblem& p, cudaStream_t stream) {
  weight_update::launch_weight_update_or_fall_back(p, stream);
}

// All the steps of a train() call in one launch, where chapter 16's steps_refusal() takes the
// model.
constexpr StepTraining kStepTraining = {steps_refusal, train_steps, kScratchWordsPerRow};

}  // namespace mnist::step_tile
