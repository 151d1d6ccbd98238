// The on-chip kernel's tools: pushing data into another block's shared memory and knowing it has
// all arrived, and the softmax of one warp.
//
// barrier.cluster (chapter 18) would order the pushes, but its release is a fence over all of
// memory at GPU scope (MEMBAR.ALL.GPU), which also waits for any store to global memory in flight.
// Hopper's asynchronous store, st.async, instead writes into a block of the cluster and counts its
// bytes off an mbarrier in that block: the receiver says how many bytes it expects (expect_tx), and
// the mbarrier's phase completes when they have all landed. No fence and no barrier across the
// cluster; a block waits for exactly the data it reads (PTX ISA: st.async, mbarrier). The
// mbarrier's instructions are chapter 07's (tma.cuh), mapa chapter 11's (cluster.cuh), for the
// sm_90a feature set alone.
#pragma once

#include <cstdint>

#include "11_clusters/cluster.cuh"
#include "18_cluster_model/products.cuh"
#include "19_on_chip/layout.cuh"

namespace mnist::on_chip {

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)

using tma::shared_address;

// The address of `local`'s twin in block `block` of the cluster (same offset, same layout).
__device__ __forceinline__ uint32_t address_in(const void* local, int block) {
  return clusters::cluster_address(shared_address(local), block);
}

// 16, 8 or 4 bytes to `remote` (address_in), counted off the mbarrier at `remote_arrival`.
__device__ __forceinline__ void store_async(uint32_t remote, uint4 v, uint32_t remote_arrival) {
  asm volatile(
      "st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.b32 [%0], {%1, %2, %3, %4}, "
      "[%5];" ::"r"(remote),
      "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w), "r"(remote_arrival)
      : "memory");
}
__device__ __forceinline__ void store_async(uint32_t remote, float2 v, uint32_t remote_arrival) {
  asm volatile(
      "st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.f32 [%0], {%1, %2}, [%3];" ::"r"(
          remote),
      "f"(v.x), "f"(v.y), "r"(remote_arrival)
      : "memory");
}
__device__ __forceinline__ void store_async(uint32_t remote, __half2 v, uint32_t remote_arrival) {
  asm volatile(
      "st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [%0], %1, [%2];" ::"r"(remote),
      "r"(*reinterpret_cast<uint32_t*>(&v)), "r"(remote_arrival)
      : "memory");
}

// Waits until mbarrier `arrival` of this block has received `bytes` from the others, every thread
// of the block; `phases` holds, bit by bit, which phase of each mbarrier comes next (the same in
// every thread). Thread 0 arrives with the byte count; stores that land before it count all the
// same. The wait acquires at cluster scope: what the stores wrote is what the block reads after.
__device__ __forceinline__ void receive(uint64_t* arrivals, int arrival, int bytes,
                                        uint32_t& phases) {
  const uint32_t at = shared_address(arrivals + arrival);
  if (threadIdx.x == 0) tma::mbarrier_arrive_expect_tx(at, bytes);
  const uint32_t parity = phases >> arrival & 1;
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "WAIT_%=:\n"
      "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra WAIT_%=;\n"
      "}\n" ::"r"(at),
      "r"(parity)
      : "memory");
  stress_delay(at ^ parity);
  phases ^= 1u << arrival;
}

// Sends this block's columns [me own, me own + own) of a kOnChipRows x (row halves) buffer to the
// same place of every other block's, in pieces of Word, counted off each one's mbarrier `arrival`
// (the same offset in every block).
template <class Word>
__device__ inline void send_own_columns(const __half* buffer, int row, int own, int me,
                                        const uint64_t* arrival) {
  // A warp sends to one block at a time, its lanes along the rows; the remote addresses are mapped
  // once a block (what lies further into the buffer lies as far into the receiver's).
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int words = own * 2 / sizeof(Word);  // a row's share
  for (int block = warp; block < kClusterBlocks; block += kWarps) {
    if (block == me) continue;
    const uint32_t to = address_in(buffer, block), to_arrival = address_in(arrival, block);
    for (int i = lane; i < kOnChipRows * words; i += 32) {
      const int r = i / words, w = i % words;
      const Word* const at = reinterpret_cast<const Word*>(buffer + r * row + me * own) + w;
      const int offset = static_cast<int>(reinterpret_cast<const uint8_t*>(at) -
                                          reinterpret_cast<const uint8_t*>(buffer));
      store_async(to + offset, *at, to_arrival);
    }
  }
}

// common/mlp_device.cuh's softmax_cross_entropy_block for at most 32 rows, by warp 0 alone and
// without a block barrier: lane r takes row r, its gradient goes to grad[r * grad_stride], and the
// lanes from `rows` on write zeros there (a product may run over all 32 rows). The sums go down
// the block tree's last five levels as shuffles: the same bits as the block's, in every run.
// Valid in thread 0; a __syncthreads after the call hands grad to the other warps.
static_assert(kOnChipRows == 32, "the warp softmax takes a row a lane");
template <class LabelOf>
__device__ LossSums softmax_cross_entropy_warp(const float* z, LabelOf label_of, int rows,
                                               int mean_over, __half* grad, int grad_stride) {
  if (threadIdx.x >= 32) return {};
  const int r = threadIdx.x;
  float loss = 0.0f;
  int correct = 0;
  if (r < rows) {
    softmax_cross_entropy_row(z + r * kClasses, label_of(r), mean_over, grad + r * grad_stride,
                              loss, correct);
  } else {
    for (int c = 0; c < kClasses; ++c) grad[r * grad_stride + c] = __float2half(0.0f);
  }
  for (int offset = 16; offset > 0; offset /= 2) {
    loss += __shfl_down_sync(0xffffffffu, loss, offset);
    correct += __shfl_down_sync(0xffffffffu, correct, offset);
  }
  return {loss, correct};
}

#endif  // sm_90a

}  // namespace mnist::on_chip
