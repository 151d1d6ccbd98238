// A barrier across the whole grid, for a kernel whose blocks are all resident at once (a
// cooperative launch guarantees it): every block waits until every block has arrived, and what any
// thread wrote before the barrier, every thread reads after it.
//
// One word, `count`, zero at first (the trainer's scratch). Thread 0 of each block adds to it
// once: block 0 adds 2^31 - (blocks - 1), every other block 1. The arrivals add exactly 2^31, so
// the last one flips the top bit and leaves the low bits zero; a block waits until the top bit
// differs from the one its own add returned. Nothing is reset between barriers or launches.
//
// Memory order (PTX memory model): the add is a release after __syncthreads has gathered the
// block's writes; the wait reads with acquire, and since the adds of one word form a release
// sequence, it sees every block's writes.
#pragma once

#include "race_stress.cuh"

namespace mnist::persistent_step {

constexpr unsigned kTopBit = 0x80000000u;

__device__ __forceinline__ void grid_barrier(unsigned* count) {
  __syncthreads();  // the block's writes of this phase come before its arrival
  if (threadIdx.x == 0) {
    stress_delay(0);  // arrivals in another order
    const unsigned add = blockIdx.x == 0 ? kTopBit - (gridDim.x - 1) : 1u;
    unsigned arrived, now;
    // release: this block's writes before its arrival
    asm volatile("atom.add.release.gpu.u32 %0, [%1], %2;"
                 : "=r"(arrived)
                 : "l"(count), "r"(add)
                 : "memory");
    do {  // acquire: every block's writes before the barrier, before the reads after it
      asm volatile("ld.acquire.gpu.u32 %0, [%1];" : "=r"(now) : "l"(count) : "memory");
    } while (((now ^ arrived) & kTopBit) == 0);
    stress_delay(1);
  }
  __syncthreads();  // and the same for the block's other threads
}

}  // namespace mnist::persistent_step
