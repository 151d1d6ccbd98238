// The on-chip kernel's tools: pushing data into another block's shared memory and knowing it has
// all arrived, and the block-wide products over operands in shared memory.
//
// barrier.cluster would order the pushes, but its release is a fence over all of memory at GPU
// scope (MEMBAR.ALL.GPU), which also waits for any store to global memory in flight. Hopper's
// asynchronous store, st.async, instead writes into a block of the cluster and counts its bytes
// off an mbarrier in that block: the receiver says how many bytes it expects (expect_tx), and the
// mbarrier's phase completes when they have all landed. No fence and no barrier across the
// cluster; a block waits for exactly the data it reads (PTX ISA: st.async, mbarrier). The
// mbarrier's instructions are chapter 07's (tma.cuh), for the sm_90a feature set alone.
#pragma once

#include <cstdint>

#include "03_mma_sync/mma.cuh"
#include "07_tma/tma.cuh"
#include "18_on_chip/layout.cuh"
#include "dataset.hpp"
#include "mlp_device.cuh"

namespace mnist::on_chip {

// ldmatrix .x2: two 8 x 8 matrices; lanes 0-15 give the row addresses (chapter 03's mma.cuh has
// the .x4 and what a lane receives).
template <bool kTranspose>
__device__ __forceinline__ void ldmatrix_x2(const __half* row_address, uint32_t (&r)[2]) {
  const auto address = static_cast<uint32_t>(__cvta_generic_to_shared(row_address));
  if (kTranspose) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];\n"
                 : "=r"(r[0]), "=r"(r[1])
                 : "r"(address));
  } else {
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];\n"
                 : "=r"(r[0]), "=r"(r[1])
                 : "r"(address));
  }
}

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)

using tma::shared_address;

// The address of `local`'s twin in block `block` of the cluster (same offset, same layout).
__device__ __forceinline__ uint32_t address_in(const void* local, int block) {
  uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;"
               : "=r"(remote)
               : "r"(shared_address(local)), "r"(block));
  return remote;
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

// A warp's 16 x 8 tile of C, as mma leaves it: v[0..1] row lane / 4, v[2..3] row lane / 4 + 8,
// columns 2 (lane % 4) and 2 (lane % 4) + 1 (chapter 03's mma.cuh).
struct Fragment {
  float v[4];
};

// One warp's 16 x 8 tile (mt, nt) of op(A) op(B), over the steps of 16 from k_first to k_steps in
// strides of k_stride. Operands in shared memory with row strides lda, ldb halves: A stored [m][k]
// (kAKMajor) or [k][m], B stored [n][k] (kBKMajor) or [k][n].
template <bool kAKMajor, bool kBKMajor>
__device__ __forceinline__ Fragment tile_product(const __half* a, int lda, const __half* b, int ldb,
                                                 int mt, int nt, int k_first, int k_steps,
                                                 int k_stride) {
  const int lane = threadIdx.x % 32, matrix = lane / 8, row = lane % 8;
  const int m = mt * kMmaM, n = nt * kMmaN;
  float acc[4] = {};
  for (int step = k_first; step < k_steps; step += k_stride) {
    const int k = step * kMmaK;
    uint32_t af[4], bf[2];
    const int mi = m + matrix % 2 * 8, ka = k + matrix / 2 * 8;  // A: 4 matrices
    if (kAKMajor) {
      mma_sync::ldmatrix_x4<false>(a + (mi + row) * lda + ka, af);
    } else {
      mma_sync::ldmatrix_x4<true>(a + (ka + row) * lda + mi, af);
    }
    const int kb = k + matrix % 2 * 8;  // B: 2 matrices, (k, n) and (k + 8, n)
    if (kBKMajor) {
      ldmatrix_x2<false>(b + (n + row) * ldb + kb, bf);
    } else {
      ldmatrix_x2<true>(b + (kb + row) * ldb + n, bf);
    }
    mma_sync::mma_m16n8k16(acc, af, bf);
  }
  return {{acc[0], acc[1], acc[2], acc[3]}};
}

// C = op(A) op(B), m x n x k (multiples of 16, 8 and 16), by the block's warps, each result pair
// handed to finish(row, col, v0, v1) for C[row][col] and C[row][col + 1] (col even). Where C has
// fewer mma tiles than the block has warps, the warps share each tile's K and add their partial
// tiles in `sums` in warp order (the same bits every run). Every thread calls it; it ends at a
// block barrier, after which every thread sees what finish wrote.
template <bool kAKMajor, bool kBKMajor, class Finish>
__device__ void block_product(const __half* a, int lda, const __half* b, int ldb, int m, int n,
                              int k, float* sums, Finish finish) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int tiles_n = n / kMmaN, tiles = m / kMmaM * tiles_n, k_steps = k / kMmaK;
  const auto finish_tile = [&](int tile, const Fragment& f) {
    const int row = tile / tiles_n * kMmaM + lane / 4, col = tile % tiles_n * kMmaN + lane % 4 * 2;
    finish(row, col, f.v[0], f.v[1]);
    finish(row + 8, col, f.v[2], f.v[3]);
  };
  if (tiles >= kWarps) {  // a warp a tile at a time, all of K
    for (int tile = warp; tile < tiles; tile += kWarps) {
      finish_tile(tile, tile_product<kAKMajor, kBKMajor>(a, lda, b, ldb, tile / tiles_n,
                                                         tile % tiles_n, 0, k_steps, 1));
    }
  } else {  // `slices` warps a tile, each every slices-th step of K
    const int slices = kWarps / tiles;
    Fragment f = {};
    if (warp < tiles * slices) {
      const int tile = warp % tiles;
      f = tile_product<kAKMajor, kBKMajor>(a, lda, b, ldb, tile / tiles_n, tile % tiles_n,
                                           warp / tiles, k_steps, slices);
    }
    for (int e = 0; e < 4; ++e) sums[(warp * 4 + e) * 32 + lane] = f.v[e];
    __syncthreads();
    if (warp < tiles) {
      Fragment sum = {};
      for (int slice = 0; slice < slices; ++slice) {
        for (int e = 0; e < 4; ++e) sum.v[e] += sums[((warp + slice * tiles) * 4 + e) * 32 + lane];
      }
      finish_tile(warp, sum);
    }
  }
  __syncthreads();
}

#endif  // sm_90a

}  // namespace mnist::on_chip
