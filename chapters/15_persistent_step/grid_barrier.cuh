// A barrier across the whole grid, for a kernel whose blocks are all resident at once (a
// cooperative launch guarantees it, or refuses to start): every block waits until every block has
// arrived, and whatever any thread wrote before the barrier, every thread reads after it.
//
// One word of device memory, `count`, zero at the start (in the trainer's scratch). One
// thread per block, after the block's own barrier, arrives with one atomic add: block 0 adds
// 2^31 - (blocks - 1), every other block 1. The arrivals of one barrier add exactly 2^31 in all,
// so the low 31 bits come back to zero and the top bit flips, and it flips with the last arrival,
// whichever block that is: before it the sum is short of the next multiple of 2^31.
//
//   count, top bit T:   T | 0 ... 0      start of a barrier (low bits zero)
//   blocks 1..n-1 add 1 each, block 0 adds 2^31 - (n-1), in any order
//   count, top bit !T:  !T | 0 ... 0     the last arrival completes the sum
//
// A block waits until the top bit differs from the one in the value its own add returned. A block
// that leaves early and arrives at the next barrier cannot flip the bit back: that needs every
// block's arrival, the waiting ones' too. Nothing is reset, so the next barrier and the next
// launch find the word as they need it.
//
// Memory order, in the PTX memory model's terms. The arrival is atom.add.release.gpu: everything
// the block wrote before it (its other threads' writes too, through __syncthreads) is ordered
// before the add. The wait reads with ld.acquire.gpu: the reads after it see everything ordered
// before every add it has seen, since the adds of one word form a release sequence. __syncthreads
// hands that on to the block's other threads. The last arrival reads too, even though it knows the
// barrier is complete: its own add is only a release, and it needs the acquire as much as anyone.
// Chapter 09's counter and the first version of this barrier used __threadfence() (fence.sc.gpu)
// before a plain atomicAdd instead, and a second word for the generation; both are stronger and
// slower than needed: on the H100 this barrier takes 1.06 us among 116 blocks, the first one 1.94
// us (bench/sync_costs.cu; docs/10_persistent_step.md, "What a launch and a barrier cost").
//
// Deadlock. A block that waits here holds its SM until every other block arrives, so all of them
// must be running at the same time: with more blocks than fit on the GPU the last ones would never
// be scheduled. The launch therefore asks for a cooperative launch (cudaLaunchAttributeCooperative)
// of at most the resident blocks, which the runtime checks.
#pragma once

namespace mnist::persistent_step {

constexpr unsigned kTopBit = 0x80000000u;

__device__ __forceinline__ void grid_barrier(unsigned* count) {
  __syncthreads();  // the block's writes of this phase come before its arrival
  if (threadIdx.x == 0) {
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
  }
  __syncthreads();  // and the same for the block's other threads
}

}  // namespace mnist::persistent_step
