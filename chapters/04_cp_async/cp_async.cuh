// Asynchronous copies from global to shared memory, introduced by chapter 04 and included by
// chapters 05 and 06: `cp.async` and its group waits, each wrapped once, the tile copy built on
// them, and the layout of a ring of stages in shared memory.
//
// Why cp.async. A plain copy is `ld.global` into registers, then `st.shared`: the store must wait
// for the load, so the thread stalls for the whole memory latency, or else keeps every tile in
// flight in registers. `cp.async` goes from global to shared memory without passing through
// registers; the thread only issues it and carries on. `.cg` ("cache global") caches the data in
// L2 only and bypasses L1: each element is read once per block, from shared memory afterwards, so
// it would only evict useful lines from L1 (.cg requires 16-byte copies; .ca, through L1, allows
// 4 and 8). A copy is waited for in groups: `cp.async.commit_group` closes the group of this
// thread's copies issued since the last commit, and `cp.async.wait_group N` waits until at most
// the N most recently committed groups of this thread are still pending, i.e. all older ones
// have landed. Both are per thread: a barrier afterwards makes everyone's copies visible to
// everyone.
//
// The L2 line hint. `.L2::128B` asks L2 to fetch the whole 128-byte line around the copied 16
// bytes. A K-major tile row is 32 halves = 64 bytes of a longer stored row, so without the hint
// each K step asks DRAM for 64-byte pieces, one per tile row; with it, the first half of a line
// also brings the second, which the next K step needs, and each line comes from DRAM in one
// request instead of two (docs/04_cp_async.md measures it).
#pragma once

#include <cuda_fp16.h>

#include <cstdint>

#include "02_smem_tiling/smem_tile.cuh"

namespace mnist::cp_async {

// Starts copying 16 bytes from global to shared memory, without waiting and without registers.
// Only the first src_bytes (16 or 0) are read; the rest of the 16 are filled with zeros. L2 fetches
// the 128-byte line around src (see above).
__device__ __forceinline__ void cp_async_16(__half* dst, const __half* src, int src_bytes) {
  const auto shared = static_cast<uint32_t>(__cvta_generic_to_shared(dst));
  const auto global = __cvta_generic_to_global(src);
  asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], 16, %2;\n" ::"r"(shared),
               "l"(global), "r"(src_bytes)
               : "memory");
}

// Closes this thread's group of the copies issued since the last commit.
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}

// Waits until at most kPending of this thread's committed groups are still in flight.
template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
}

// Chapter 02's load_tile (smem_tile.cuh), asynchronous: starts copying the Tile of an operand whose
// op(X) tile starts at (mn0, k0) into shared memory, zeros outside the matrix, and returns before
// the data lands. A piece wholly outside the matrix is a cp.async of 0 source bytes, which writes
// 16 bytes of zeros. An operand that cannot take 16-byte copies (`vectorized` false) is gathered
// half by half with ordinary loads and stores into the same place: slower, since those do wait,
// but the barrier that orders the asynchronous copies orders them too.
template <class Tile, int kThreads>
__device__ __forceinline__ void load_tile_async(const __half* x, int mn_extent, int k_extent,
                                                int mn0, int k0, bool vectorized, __half* tile) {
  smem_tiling::for_each_piece<Tile, kThreads>(
      mn_extent, k_extent, mn0, k0, tile, [&](int row, int col, int rows, int cols, __half* dst) {
        if (vectorized) {
          // cols % 8 == 0 and col % 8 == 0: the piece is wholly inside or wholly outside. Outside,
          // copy 0 bytes (16 zeros) from an address that is still valid: the matrix's first
          // element.
          const bool inside = row < rows && col < cols;
          cp_async_16(dst, inside ? x + static_cast<size_t>(row) * cols + col : x, inside ? 16 : 0);
        } else {
          *reinterpret_cast<uint4*>(dst) = smem_tiling::gather_piece(x, row, col, rows, cols);
        }
      });
}

// A ring of kStages stages in shared memory, each stage the A tile, then the B tile. SmemTile's
// sizes are multiples of 16 bytes, so every tile, and every 16-byte piece of it, starts 16-byte
// aligned.
template <class ATile, class BTile, int kStages>
struct Ring {
  using A = ATile;
  using B = BTile;
  static constexpr int kStageElements = A::kElements + B::kElements;
  static constexpr int kBytes = kStages * kStageElements * int(sizeof(__half));
};

}  // namespace mnist::cp_async
