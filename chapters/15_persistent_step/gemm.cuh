// Chapter 10: the persistent training step. One kernel trains every step of an epoch.
//
// After chapter 09 a training step of a small model is mostly launch cost. At batch 32 a step is
// some 20 kernels replayed as one CUDA graph, and at hidden 128 it takes nearly as long as at
// hidden 1024 with a twentieth of the arithmetic (docs/10_persistent_step.md has the measured
// numbers): every kernel waits for the one before it to drain, and its blocks to start. The way
// past that is to stop launching: one kernel whose blocks stay resident for all the steps and wait
// for each other on the GPU.
//
//   step by step (chapters 06-09)           persistent (this chapter)
//   per step, one kernel each:              one launch for all the steps of a train() call:
//     gather, forward 0 .. L-1, loss,         step 1: fwd 0 | ... | fwd L-1, loss | bwd 0 |
//     backward data and weights per layer,    step 2: fwd 0 | ... (no launch in between)
//     bias SGD: 3 L + 2 kernels or more       each | a grid barrier: 2 L a step
//
// The kernel (steps.cuh) runs, for each step, a phase per layer forward (bias and ReLU in the
// epilogue, the first layer reading the batch straight from the images through the epoch's
// shuffled order; the output layer's phase also takes the loss: softmax cross-entropy and the
// output layer's dZ, tile by tile, the step's loss written to its slot), and L backward phases,
// each the backward-data product of one layer with the SGD of the layer above (a layer's SGD
// overwrites the fp16 weights its backward-data product reads, so it comes one phase later). Within
// a phase every block takes 32 x 32 tiles of the phase's products in turn (tile.cuh) and finishes
// them through the same epilogues as chapters 06-09 (common/epilogue.cuh); between phases, a grid
// barrier (grid_barrier.cuh) makes what every block wrote visible to every block. The arithmetic
// and its rounding points are the trainer's: fp16 operands, fp32 accumulation, fp32 master weights.
//
// When: steps_refusal() in steps.cuh, widths up to 2048 where batch x width is at most 132 tiles of
// 32 x 32 (hidden 512 at batch 256, 1024 at 128, 2048 at 64). The trainer uses the persistent step
// there by default (chapter_step_launch in common/trainer.cuh) and everywhere else trains a step at
// a time on chapter 09's kernels, which are this chapter's launch_gemm too (the evaluation and
// every product outside the persistent kernel). Where the model fits in the shared memory of one
// thread block cluster (batch up to 32, hidden up to 256), a second persistent kernel keeps it
// there and its blocks hand each other the data on chip (on_chip.cuh).
#pragma once

#include "09_swap_ab_split_k/gemm.cuh"
#include "15_persistent_step/steps.cuh"
#include "gemm_interface.cuh"
#include "step_interface.cuh"

namespace mnist::persistent_step {

// Chapter 09's GEMMs for everything outside the persistent kernel: they fuse the epilogue, and a
// step trained one at a time is replayed as a CUDA graph.
constexpr bool kFusedEpilogue = swap_ab_split_k::kFusedEpilogue;
constexpr bool kReplayStepAsGraph = swap_ab_split_k::kReplayStepAsGraph;

// Chapter 09's kernels need an H100-class GPU and sm_90a code; the persistent kernel itself needs
// only chapter 03's mma.sync and chapter 04's cp.async, and a cooperative launch.
constexpr bool kNeedsSm90a = swap_ab_split_k::kNeedsSm90a;

inline void launch_gemm(const GemmProblem& p, cudaStream_t stream) {
  swap_ab_split_k::launch_gemm(p, stream);
}

// All the steps of a train() call in one launch, where steps_refusal() takes the model.
constexpr StepTraining kStepTraining = {steps_refusal, train_steps, kScratchWordsPerRow};

}  // namespace mnist::persistent_step
