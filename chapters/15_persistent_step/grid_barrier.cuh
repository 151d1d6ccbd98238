// A barrier across the whole grid, for a kernel whose blocks are all resident at once (a
// cooperative launch guarantees it, or refuses to start): every block waits until every block has
// arrived, and whatever any thread wrote before the barrier, every thread reads after it.
//
// One word, `count`, zero at first (the trainer's scratch). One thread per block arrives with one
// atomic add: block 0 adds 2^31 - (blocks - 1), every other block 1. A barrier's arrivals add
// exactly 2^31, so the top bit flips with the last arrival, whichever block that is, and the low
// bits come back to zero. A block waits until the top bit differs from the one its own add
// returned. Nothing is reset: the next barrier and the next launch find the word as they need it.
//
// Memory order (PTX memory model): the arrival is atom.add.release.gpu, after __syncthreads has
// gathered the block's writes; the wait reads with ld.acquire.gpu, and since the adds of one word
// form a release sequence it sees every block's writes. The last arrival waits too: its add is
// only a release.
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
