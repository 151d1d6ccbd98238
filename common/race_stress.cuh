// Delays at the hand-offs of the asynchronous pipelines, in a build configured with
// -Drace_stress=true (which defines MNIST_RACE_STRESS); in any other build, nothing.
//
// A hand-off that lacks its barrier or its wait is a race that an unloaded GPU almost always wins:
// the warp that should have waited is rarely behind. Here a warp sleeps, now and then, right after
// it acquires something (an mbarrier phase, a cluster or grid barrier) and right before it hands
// something over (an arrival): the warps of a block and the blocks of a grid drift apart by
// microseconds, and such a race loses often enough for a test to see it (the suite `stress`,
// README.md). What the delays cannot widen, the machine code shows (tests/check_fences.py,
// check_tma_stores.py).
#pragma once

#include <cstdint>

namespace mnist {

// Sleeps in one hand-off of four, 0.25-4 us, chosen by a hash of the block, the warp, `site` (what
// is handed over: a barrier's address and phase, a tile) and the SM clock's low bits.
__device__ __forceinline__ void stress_delay(uint32_t site) {
#ifdef MNIST_RACE_STRESS
  uint32_t h = (blockIdx.x + 7919u * blockIdx.y) * 0x9E3779B1u ^ (threadIdx.x / 32) * 0x85EBCA77u ^
               site * 0xC2B2AE3Du ^ static_cast<uint32_t>(clock()) * 0x27D4EB2Fu;
  h ^= h >> 15;
  h *= 0x2C1B3C6Du;
  h ^= h >> 12;
  if (h % 4 == 0) __nanosleep(256 + h / 4 % 3840);
#else
  (void)site;
#endif
}

}  // namespace mnist
