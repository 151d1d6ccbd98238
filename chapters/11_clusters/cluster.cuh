// Thread block clusters, introduced by chapter 11: a block's rank in its cluster, the cluster-wide
// barrier, the address of a block's shared memory as another block of the cluster sees it, an
// arrival on another block's mbarrier, and TMA's multicast load into every block of a cluster.
#pragma once

#include <cuda.h>

#include <cstdint>

#include "07_tma/tma.cuh"
#include "race_stress.cuh"

namespace mnist::clusters {

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)

// This block's rank in its cluster.
__device__ __forceinline__ uint32_t cluster_rank() {
  uint32_t rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
  return rank;
}

// Every thread of every block of the cluster arrives, then waits for all the others: what the
// blocks wrote before, their barriers' initialisation among it, is visible to all after it.
__device__ __forceinline__ void cluster_sync() {
  stress_delay(0);
  asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;\n" ::: "memory");
  stress_delay(1);
}

// The barriers' initialisation, ordered before the other blocks' remote arrivals and copies.
__device__ __forceinline__ void fence_barrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

// The address of this block's shared `local` in block `rank`'s shared memory (shared::cluster).
__device__ __forceinline__ uint32_t cluster_address(uint32_t local, uint32_t rank) {
  uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(local), "r"(rank));
  return remote;
}

// An arrival on the barrier at shared::cluster address `barrier`, in any block of the cluster.
// CTA-scope, as chapter 09's: the reads it releases were wgmma's, finished at wgmma_wait.
__device__ __forceinline__ void mbarrier_arrive_cluster(uint32_t barrier) {
  stress_delay(barrier);
  asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];\n" ::"r"(barrier) : "memory");
}

// tma_load to `destination` in every block of `mask`, each copy counting its bytes on the barrier
// at `barrier` in the block it writes.
__device__ __forceinline__ void tma_load_multicast(uint32_t destination, const CUtensorMap& map,
                                                   int inner, int outer, uint32_t barrier,
                                                   uint16_t mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      ".multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(destination),
      "l"(reinterpret_cast<uint64_t>(&map)), "r"(inner), "r"(outer), "r"(barrier), "h"(mask)
      : "memory");
}

// tma_load_tile (07_tma/tma.cuh), multicast to the blocks of `mask`.
template <class Tile>
__device__ __forceinline__ void tma_load_tile_multicast(const CUtensorMap& map,
                                                        uint32_t destination, int mn0, int k0,
                                                        uint32_t barrier, uint16_t mask) {
#pragma unroll
  for (int box = 0; box < Tile::kBoxes; ++box) {
    if (Tile::kKMajor) {
      tma_load_multicast(destination, map, k0, mn0, barrier, mask);
    } else {
      tma_load_multicast(destination + box * Tile::kBoxBytes, map, mn0 + box * tma::kSwizzleHalves,
                         k0, barrier, mask);
    }
  }
}

#endif  // sm_90a

}  // namespace mnist::clusters
