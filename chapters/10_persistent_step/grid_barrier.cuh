// A barrier across the whole grid, for a kernel whose blocks are all resident at once (a
// cooperative launch guarantees it, or refuses to start): every block waits until every block has
// arrived, and whatever any thread wrote before the barrier, every thread reads after it.
//
// Two words of device memory, zero at the start (the trainer's StepBuffers::sync):
//   arrived     blocks that have reached the current barrier
//   generation  how many barriers have completed, modulo 2^32
// One thread per block, after the block's own barrier:
//   reads the generation g        the barrier cannot complete before this block arrives, so g is
//                                 the current one
//   fence, atomicAdd(arrived, 1)  a release: the fence orders every write the block made before
//                                 (its other threads' too, through __syncthreads) ahead of the
//                                 arrival
//   the last to arrive            resets arrived to 0, fences, and bumps the generation: the reset
//                                 lands before anyone can arrive at the next barrier, which needs
//                                 the new generation first
//   the others                    spin until the generation differs from g
//   fence                         an acquire: the reads after it see every write that came before
//                                 any block's arrival (and __syncthreads hands that on to the
//                                 block's other threads)
// In the PTX memory model's terms, each block's fence.sc (the __threadfence) before its atomic
// arrival and the waiting thread's fence after it observed the last arrival's effect form the
// release and acquire patterns that order the writes before the barrier ahead of the reads after
// it, across SMs. Without the first fence a block's writes may still be on their way when another
// block reads them; without the second the reads may be served from before the barrier (a stale
// L1 line among them). Every barrier leaves `arrived` at 0, so the next launch finds the words as
// it needs them.
//
// Deadlock. A block that waits here holds its SM until every other block arrives, so all of them
// must be running at the same time: with more blocks than fit on the GPU the last ones would never
// be scheduled. The launch therefore asks for a cooperative launch (cudaLaunchAttributeCooperative)
// of at most the resident blocks, which the runtime checks.
#pragma once

namespace mnist::persistent_step {

struct GridBarrier {
  unsigned arrived;
  unsigned generation;
};

__device__ __forceinline__ void grid_barrier(GridBarrier* barrier) {
  __syncthreads();  // the block's writes of this phase come before its arrival
  if (threadIdx.x == 0) {
    volatile unsigned* generation = &barrier->generation;
    const unsigned seen = *generation;
    __threadfence();  // release: this block's writes before its arrival
    if (atomicAdd(&barrier->arrived, 1) == gridDim.x - 1) {
      atomicExch(&barrier->arrived, 0);
      __threadfence();  // the reset before the new generation
      atomicAdd(&barrier->generation, 1);
    } else {
      while (*generation == seen) {
      }
    }
    __threadfence();  // acquire: every block's writes before the barrier, before the reads after it
  }
  __syncthreads();  // and the same for the block's other threads
}

}  // namespace mnist::persistent_step
