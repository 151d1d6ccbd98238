// What a warp-specialised block needs beyond chapters 07 and 08, introduced by chapter 09 and
// included by the later chapters whose blocks split into a producer and consumers: the consumers'
// arrival on a stage's empty barrier and setmaxnreg, which moves registers between warpgroups.
#pragma once

#include <cstdint>

#include "race_stress.cuh"

namespace mnist::warp_specialized {

// Registers per thread after setmaxnreg, for a block of one producer and two consumer warpgroups
// (384 threads, launched with 168 each: 65536 / 384, down to a multiple of 8). The producer keeps
// few, the consumers' 128 accumulators take the rest: 128 x 40 + 256 x 232 = 384 x 168.
constexpr int kProducerRegisters = 40;
constexpr int kConsumerRegisters = 232;

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)

// Arrives on the barrier, counting one of the arrivals its phase waits for.
__device__ __forceinline__ void mbarrier_arrive(uint32_t barrier) {
  stress_delay(barrier);
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(barrier) : "memory");
}

// setmaxnreg is executed by all warps of a warpgroup alike: the warpgroup's register budget
// shrinks to, or grows to, kRegisters per thread (PTX ISA, "setmaxnreg").
template <int kRegisters>
__device__ __forceinline__ void setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegisters));
}

template <int kRegisters>
__device__ __forceinline__ void setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegisters));
}

#endif  // sm_90a

}  // namespace mnist::warp_specialized
