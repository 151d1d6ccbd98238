// TMA's store, introduced by chapter 10 and included by the later chapters that store through it:
// the copy from shared memory to a matrix in global memory, its bulk groups and their waits, the L2
// policy it stores under, and the named barrier a consumer warpgroup fills its staging box by.
#pragma once

#include <cuda.h>

#include <cstdint>

#include "07_tma/tma.cuh"
#include "08_wgmma/wgmma.cuh"
#include "gemm_interface.cuh"

namespace mnist::tile_scheduler {

using namespace wgmma;

// A stored box row: 32 floats, 128 bytes, the swizzle span.
constexpr int kStoreBoxColumns = kSwizzleBytes / int(sizeof(float));

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)

// An L2 cache policy (PTX ISA, "createpolicy") under which the lines a copy writes are the first
// L2 gives up when it needs room. C is written once and read by no block of the kernel: its lines
// should leave for DRAM before the operand tiles, which the group's other tiles read again.
__device__ __forceinline__ uint64_t l2_evict_first() {
  uint64_t policy;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(policy));
  return policy;
}

// TMA's store: the box of the stored matrix whose first element is (inner, outer), from shared
// memory at `source`, in this thread's current bulk group, its lines cached in L2 under `policy`.
// The copy engine skips what lies outside the matrix.
__device__ __forceinline__ void tma_store(const CUtensorMap& map, int inner, int outer,
                                          uint32_t source, uint64_t policy) {
  asm volatile(
      "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group.L2::cache_hint [%0, {%1, %2}], [%3], "
      "%4;\n" ::"l"(reinterpret_cast<uint64_t>(&map)),
      "r"(inner), "r"(outer), "r"(source), "l"(policy)
      : "memory");
}

__device__ __forceinline__ void bulk_commit() {
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}

// Returns once at most kPending of this thread's bulk groups have still to read their source.
template <int kPending>
__device__ __forceinline__ void bulk_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(kPending) : "memory");
}

// Returns once all of this thread's bulk groups are complete: their writes done.
__device__ __forceinline__ void bulk_wait_all() {
  asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
}

// A barrier of consumer warpgroup `consumer` alone (named barrier 1 + consumer; __syncthreads uses
// 0): the producer and the other consumer go on. The barrier's number is written into the
// instruction: given in a register, ptxas reserves all 16 of the block's barriers.
__device__ __forceinline__ void warpgroup_sync(int consumer) {
  if (consumer == 0) {
    asm volatile("bar.sync 1, %0;\n" ::"n"(kWarpgroupThreads) : "memory");
  } else {
    asm volatile("bar.sync 2, %0;\n" ::"n"(kWarpgroupThreads) : "memory");
  }
}

#endif  // sm_90a

// TMA can store C: its rows a multiple of 16 bytes, its start 16-byte aligned.
inline bool stores_by_tma(const GemmProblem& p) {
  return p.n % 4 == 0 && reinterpret_cast<uintptr_t>(p.c) % 16 == 0;
}

// The tensor map of C for store_accumulators: boxes of 32 columns by 64 rows, 128-byte swizzle.
inline CUtensorMap store_map(const GemmProblem& p) {
  return encode_tensor_map(p.c, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, int(sizeof(float)), p.n, p.m,
                           kStoreBoxColumns, kWgmmaM, CU_TENSOR_MAP_L2_PROMOTION_NONE, "C");
}

}  // namespace mnist::tile_scheduler
