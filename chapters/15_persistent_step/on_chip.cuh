// The on-chip training step: where a small model fits in the shared memory of one thread block
// cluster, the cluster trains it with its weights, activations and gradients on chip, from the
// launch's first step to its last, and a block waits only for the data it needs next, as it lands
// in its own shared memory, instead of at a grid barrier in L2.
//
// The grid kernel (steps.cuh) pays, per phase, a round trip to L2 for its operands, another for
// its stores to drain before the barrier's release, and the barrier's own atomic and polling in
// L2: some 4,000 cycles a phase at batch 32, hidden 128, whatever the arithmetic
// (docs/10_persistent_step.md, "Where a tile's time goes"). Here a phase reads only its own
// shared memory and pushes its results straight into the shared memory of the blocks that need
// them (distributed shared memory, DSMEM), with stores that count themselves off the receiver's
// mbarrier (below, "Pushing data into another block's shared memory").
//
// Who owns what. The cluster is kClusterBlocks blocks; block b owns rows [b R, b R + R) of every
// hidden layer's weights (R = out / kClusterBlocks), their fp16 copy and bias, and the output
// layer is small enough (kClasses rows) that every block keeps all of it and updates it alike.
//
//   forward, hidden layer l       Y[:, own] = ReLU(X W_own^T + b_own), X whole in every block;
//                                 Y[:, own] sent into every block's X of layer l + 1
//   --- each block waits for the other 15 blocks' columns ---
//   output layer (every block)    logits, softmax cross-entropy, dZ; the output layer's SGD;
//                                 dZ of layer L-2, own columns: (dZ W)[:, own], masked by ReLU'
//   backward, hidden layer l >= 1 dZ_own W_own, a B x in partial product, each block's columns
//                                 sent to their owner; SGD of W_own, b_own
//   --- each block waits for its columns of the other 15 partial products ---
//   (each block)                  dZ of layer l - 1, own columns: its 16 partials added in block
//                                 order, masked by ReLU'
//   backward, layer 0             SGD of W_own, b_own: the step's end
//
// L - 1 + L - 2 waits a step where the grid kernel has 2 L grid barriers, and nothing read from
// L2 but the batch, which is copied in one step ahead. What does not fit in shared memory is the
// first layer's fp32 masters (25 KB a block at hidden 128, beside 99 KB of two batches): they
// live in registers for the whole launch (FirstLayerMasters).
//
// When: on_chip_refusal() below; the trainer takes this kernel for the models it leaves empty,
// and the grid kernel for the rest of steps_refusal()'s (steps.cuh).
#pragma once

#include <cooperative_groups.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "03_mma_sync/mma.cuh"
#include "04_cp_async/cp_async.cuh"
#include "07_wgmma/tma.cuh"
#include "15_persistent_step/schedule.cuh"
#include "cuda_check.cuh"
#include "dataset.hpp"
#include "mlp_device.cuh"
#include "occupancy.cuh"

namespace mnist::persistent_step {

namespace cg = cooperative_groups;

constexpr int kClusterBlocks = 16;  // the largest cluster the H100 runs (a non-portable size)
constexpr int kOnChipRows = 32;     // batch rows in shared memory: two mma tiles of M
static_assert(kOnChipRows == 32, "the softmax takes a row a lane of one warp");
constexpr int kOwnRowsMax = 16;     // a hidden layer's rows per block: widths up to 256
constexpr int kPad = 8;             // halves after each row of a shared operand (below)
constexpr int kClassesPadded = 16;  // the output layer's rows, zeros past kClasses: one mma K step
constexpr int kDzStride = kClassesPadded + kPad;  // a dZ row: up to 16 columns, and the pad
// The H100's 227 KB of shared memory a block, less a margin of 3 KB.
constexpr int kOnChipSmemLimit = 224 * 1024;
// Rows of shared operands are kPad halves longer than their data: 16 bytes more, so that the 8
// rows one ldmatrix reads start in 8 different 16-byte bank groups (784 + 8 halves is 1,584 bytes,
// 48 mod 128) rather than two or four rows in the same.

// Where each buffer lies in a block's dynamic shared memory, in bytes, for one model; the host
// computes it and the kernel takes it as a parameter.
struct OnChipLayout {
  int layers;
  int in[kMaxLayers], out[kMaxLayers];
  int own_rows[kMaxLayers];  // R of each hidden layer
  int partial_cols;          // columns of a partial product's slot: the largest R of layers 0..L-3
  int batch[2];              // kOnChipRows x (kPixels + kPad) halves: this step's and the next's
  int weight16[kMaxLayers];  // fp16 rows of layer l: own rows (16, zeros past R; layer 0: R
                             // rounded up to 8), or the output layer's kClassesPadded
  int weight32[kMaxLayers];  // fp32 master rows of layer l >= 1
  int bias[kMaxLayers];      // own biases (kClassesPadded floats, zeros past R or kClasses)
  int input[kMaxLayers];     // X of layer l >= 1, whole: kOnChipRows x (in + kPad) halves
  int input_second;          // a second X of layer 1, for odd steps (see the kernel)
  int dz[kMaxLayers];        // dZ of layer l, own columns (all kClasses for the output layer):
                             // kOnChipRows x kDzStride halves, zeros past R
  int logits;                // kOnChipRows x kClasses floats
  int partial[2];            // kClusterBlocks slots of kOnChipRows x partial_cols floats
  int sums;                  // kWarps x 128 floats: the warps' partial tiles of a product split
                             // along K
  int arrivals;              // kArrivals mbarriers (input_arrival, partial_arrival)
  int bytes;
};

__host__ __device__ inline int round_up(int x, int to) {
  return (x + to - 1) / to * to;
}

// The mbarriers a block receives on: one for each X of layers 1 .. L-1 (two for layer 1), and one
// for each of the two partial-product buffers.
constexpr int kArrivals = 2 * kMaxLayers + 2;
__host__ __device__ inline int input_arrival(int l, int buffer) {
  return 2 * l + buffer;
}
__host__ __device__ inline int partial_arrival(int buffer) {
  return 2 * kMaxLayers + buffer;
}

// The layout for the model of `sizes` (layers + 1 widths); bytes > kOnChipSmemLimit where it does
// not fit.
__host__ __device__ inline OnChipLayout on_chip_layout(const int* sizes, int layers) {
  OnChipLayout s{};
  s.layers = layers;
  int bytes = 0;
  const auto take = [&](int count) {  // 16-byte aligned, for ldmatrix and cp.async
    const int at = bytes;
    bytes += round_up(count, 16);
    return at;
  };
  for (int i = 0; i < 2; ++i) s.batch[i] = take(kOnChipRows * (kPixels + kPad) * 2);
  for (int l = 0; l < layers; ++l) {
    s.in[l] = sizes[l];
    s.out[l] = sizes[l + 1];
    const bool hidden = l + 1 < layers;
    s.own_rows[l] = hidden ? s.out[l] / kClusterBlocks : kClasses;
    const int rows16 = !hidden ? kClassesPadded : l == 0 ? round_up(s.own_rows[l], 8) : 16;
    s.weight16[l] = take(rows16 * (s.in[l] + kPad) * 2);
    if (l > 0) s.weight32[l] = take(s.own_rows[l] * s.in[l] * 4);
    s.bias[l] = take(kClassesPadded * 4);
    if (l > 0) s.input[l] = take(kOnChipRows * (s.in[l] + kPad) * 2);
    if (l == 1) s.input_second = take(kOnChipRows * (s.in[l] + kPad) * 2);
    s.dz[l] = take(kOnChipRows * kDzStride * 2);
    if (l + 2 < layers) s.partial_cols = std::max(s.partial_cols, s.own_rows[l]);
  }
  s.logits = take(kOnChipRows * kClasses * 4);
  for (int i = 0; i < 2; ++i) {
    s.partial[i] = take(kClusterBlocks * kOnChipRows * s.partial_cols * 4);
  }
  s.sums = take(kWarps * kMmaM * kMmaN * 4);
  s.arrivals = take(kArrivals * 8);
  s.bytes = bytes;
  return s;
}

// Why the on-chip step does not take a model of `sizes` at `batch`, or empty. Asks nothing of the
// GPU; a GPU that cannot run a cluster of 16 gets the grid kernel (train_steps, steps.cuh).
inline std::string on_chip_refusal(const LayerSizes& sizes, int batch) {
  const int layers = static_cast<int>(sizes.size()) - 1;
  if (batch > kOnChipRows) return "batches up to " + std::to_string(kOnChipRows);
  if (layers < 3 || layers > kMaxLayers) return "3 to " + std::to_string(kMaxLayers) + " layers";
  for (int l = 1; l < layers; ++l) {
    if (sizes[l] % (2 * kClusterBlocks) != 0 || sizes[l] > kClusterBlocks * kOwnRowsMax) {
      return "hidden widths that are multiples of " + std::to_string(2 * kClusterBlocks) +
             " up to " + std::to_string(kClusterBlocks * kOwnRowsMax);
    }
  }
  if (on_chip_layout(sizes.data(), layers).bytes > kOnChipSmemLimit) {
    return "models whose weights, activations and two batches fit in " +
           std::to_string(kOnChipSmemLimit / 1024) + " KB of shared memory a block";
  }
  return "";
}

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

// Pushing data into another block's shared memory, and knowing it has all arrived.
//
// barrier.cluster would do it, but its release is a fence over all of memory at GPU scope
// (MEMBAR.ALL.GPU in the SASS): on the H100 some 1,200 cycles a barrier, and it also waits for any
// store to global memory still in flight. Hopper's asynchronous store instead, st.async, writes
// into a block of the cluster and counts its bytes off an mbarrier in that block: the receiver
// says how many bytes it expects (expect_tx), and its mbarrier's phase completes when they have
// all landed. No fence, no barrier across the cluster; a block waits for exactly the data it
// reads (PTX ISA: st.async, mbarrier). The mbarrier's instructions are chapter 07's (tma.cuh),
// whose wrappers, like this chapter's on-chip kernel, exist only for the sm_90a feature set.
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)

using wgmma::shared_address;

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
// every thread). Thread 0's arrival, with the byte count, is the one the mbarrier was set up for;
// stores that land before it are counted all the same. The wait acquires at cluster scope: what
// the stores wrote is what the block reads after it.
__device__ __forceinline__ void receive(uint64_t* arrivals, int arrival, int bytes,
                                        uint32_t& phases) {
  const uint32_t at = shared_address(arrivals + arrival);
  if (threadIdx.x == 0) wgmma::mbarrier_arrive_expect_tx(at, bytes);
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

// common/mlp_device.cuh's softmax_cross_entropy_block for at most 32 rows, by warp 0 alone and
// without a block barrier: lane r takes row r, its gradient goes to grad[r * grad_stride], and the
// lanes from `rows` on write zeros there (a product may run over all 32 rows). The sums go down a
// fixed tree of shuffles, the block tree's last five levels: the same result in every run, and the
// same as the block's, whose first levels add only zeros here. Valid in thread 0; the other warps
// return at once, and a __syncthreads after the call hands grad to them.
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
// (kAKMajor) or [k][m], B stored [n][k] (kBKMajor) or [k][n]; ldmatrix transposes what is stored
// the other way, as in chapter 03.
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

// The batch of step `step` into `rows` (kOnChipRows x (kPixels + kPad) halves), gathered through
// the epoch's order, zeros past its last row; one cp.async group, not waited for.
// kThreads / kOnChipRows threads copy each row, so that a thread looks up one image, not one per
// copy.
__device__ inline void load_batch_async(const Model& m, int step, __half* rows) {
  constexpr int kPieces = kPixels * 2 / 16;  // 16-byte copies a row
  constexpr int kPerRow = kThreads / kOnChipRows;
  static_assert(kThreads % kOnChipRows == 0, "whole threads a row");
  const int count = min(m.batch, m.train_count - step * m.batch);
  const int r = threadIdx.x / kPerRow;
  const bool inside = r < count;
  const __half* image = inside
                            ? m.train_images + size_t(m.order[size_t(step) * m.batch + r]) * kPixels
                            : m.train_images;
  for (int piece = threadIdx.x % kPerRow; piece < kPieces; piece += kPerRow) {
    cp_async::cp_async_16(rows + r * (kPixels + kPad) + piece * 8, image + piece * 8,
                          inside ? 16 : 0);
  }
  cp_async::cp_async_commit();
}

// The block's share of the model between global and shared memory: its own rows of each hidden
// layer (fp16 copy, fp32 masters but the first layer's, bias) and the whole output layer.
// to_shared: at the launch's start; otherwise back, at its end (block 0 writes the output layer).
__device__ inline void move_parameters(const Model& m, const OnChipLayout& s, uint8_t* smem, int me,
                                       bool to_shared) {
  for (int l = 0; l < s.layers; ++l) {
    const LayerBuffers& y = m.layer[l].buffers;
    const bool hidden = l + 1 < s.layers;
    if (!hidden && !to_shared && me != 0) continue;
    const int rows = s.own_rows[l], row0 = hidden ? me * rows : 0, in = s.in[l];
    __half* w16 = reinterpret_cast<__half*>(smem + s.weight16[l]);
    float* w32 = reinterpret_cast<float*>(smem + s.weight32[l]);
    float* bias = reinterpret_cast<float*>(smem + s.bias[l]);
    for (int i = threadIdx.x; i < rows * in; i += kThreads) {
      const int r = i / in, c = i % in;
      const size_t g = size_t(row0 + r) * in + c;
      if (to_shared) {
        w16[r * (in + kPad) + c] = y.weight_operand[g];
        if (l > 0) w32[i] = y.weights[g];
      } else {
        y.weight_operand[g] = w16[r * (in + kPad) + c];
        if (l > 0) y.weights[g] = w32[i];
      }
    }
    for (int r = threadIdx.x; r < rows; r += kThreads) {
      if (to_shared) {
        bias[r] = y.bias[row0 + r];
      } else {
        y.bias[row0 + r] = bias[r];
      }
    }
  }
}

// bias -= learning_rate * (the column sums of dZ over `rows` rows, in row order): bias_sgd_column
// (mlp_device.cuh), the step-by-step trainer's, over dZ in shared memory (rows kDzStride apart).
__device__ inline void bias_sgd_shared(const __half* dz, float* bias, int cols, int rows,
                                       float learning_rate) {
  for (int col = threadIdx.x; col < cols; col += kThreads) {
    bias_sgd_column(dz, bias, kDzStride, col, rows, learning_rate);
  }
}

// W[r][c], W[r][c + 1] -= learning_rate (v0, v1) on the fp32 masters (rows `cols` floats apart),
// and their fp16 copy (rows cols + kPad halves apart) refreshed from them: a pair of a layer's SGD.
__device__ inline void sgd_pair(float* w32, __half* w16, int cols, int r, int c, float v0, float v1,
                                float learning_rate) {
  float* const w = w32 + r * cols + c;
  w[0] -= learning_rate * v0;
  w[1] -= learning_rate * v1;
  *reinterpret_cast<__half2*>(w16 + r * (cols + kPad) + c) = __floats2half2_rn(w[0], w[1]);
}

// Sends this block's columns [me own, me own + own) of a kOnChipRows x (row halves) buffer to the
// same place of every other block's, in pieces of Word, counted off each one's mbarrier `arrival`
// (the same offset in every block).
template <class Word>
__device__ inline void send_own_columns(const __half* buffer, int row, int own, int me,
                                        const uint64_t* arrival) {
  // A warp sends to one block at a time, its lanes along the rows: what one block receives leaves
  // together, and the two remote addresses are mapped once a block (what lies further into the
  // buffer lies as far into the receiver's).
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

// The first layer's SGD, W_own -= learning_rate dZ_own^T X with X the batch, taken transposed:
// (X^T dZ_own)[pixel][own row], kPixels / 16 mma tiles of M for each 8 own rows, dealt to the warps
// in turn. Taken the other way round, R = 8 own rows would fill half of each 16-row mma tile.
// Its fp32 masters do not fit in shared memory beside two batches (OnChipLayout); they live in
// the registers of the threads that update them, loaded at the launch's start and stored at its
// end: a step then stores nothing to global memory but its loss.
constexpr int kPixelTiles = kPixels / kMmaM;
static_assert(kPixels % kMmaM == 0, "whole mma tiles of pixels");
constexpr int kFirstLayerTilesMax = kPixelTiles * kOwnRowsMax / kMmaN;
constexpr int kFirstLayerTilesPerWarp = (kFirstLayerTilesMax + kWarps - 1) / kWarps;
struct FirstLayerMasters {
  // W[c][p], W[c + 1][p] at v[i][h], (c, p) = place(i, h): what mma leaves in a thread (Fragment).
  float2 v[kFirstLayerTilesPerWarp][2];

  // The own row c and pixel p of this thread's v[i][h] in the warp's tile i: c = 2 (lane % 4) and
  // p = lane / 4 + 8 h within the tile; c >= own where it holds none (own is even, so is c: c + 1
  // < own too).
  struct Place {
    int tile, c, p;
  };
  __device__ static Place place(int i, int h) {
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, tile = warp + i * kWarps;
    return {tile, tile / kPixelTiles * kMmaN + lane % 4 * 2,
            tile % kPixelTiles * kMmaM + lane / 4 + h * 8};
  }
  // Where this thread finds master W[c][p] of (tile i, h): null where there is none; W[c + 1][p]
  // is kPixels floats further.
  __device__ static float* at(float* weights, int own, int me, int i, int h) {
    const Place q = place(i, h);
    return q.c < own ? weights + size_t(me * own + q.c) * kPixels + q.p : nullptr;
  }
  __device__ void load(float* weights, int own, int me) {
#pragma unroll
    for (int i = 0; i < kFirstLayerTilesPerWarp; ++i) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        if (const float* w = at(weights, own, me, i, h)) v[i][h] = make_float2(w[0], w[kPixels]);
      }
    }
  }
  __device__ void store(float* weights, int own, int me) const {
#pragma unroll
    for (int i = 0; i < kFirstLayerTilesPerWarp; ++i) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        if (float* w = at(weights, own, me, i, h)) w[0] = v[i][h].x, w[kPixels] = v[i][h].y;
      }
    }
  }
  __device__ void update(int own, const __half* dz, const __half* x, __half* w16,
                         float learning_rate) {
    const int tiles = kPixelTiles * round_up(own, kMmaN) / kMmaN;
#pragma unroll
    for (int i = 0; i < kFirstLayerTilesPerWarp; ++i) {
      const int tile = place(i, 0).tile;
      if (tile >= tiles) break;
      const Fragment acc =
          tile_product<false, false>(x, kPixels + kPad, dz, kDzStride, tile % kPixelTiles,
                                     tile / kPixelTiles, 0, kOnChipRows / kMmaK, 1);
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const Place q = place(i, h);
        if (q.c >= own) continue;
        const float2 updated = make_float2(v[i][h].x - learning_rate * acc.v[2 * h],
                                           v[i][h].y - learning_rate * acc.v[2 * h + 1]);
        v[i][h] = updated;
        w16[q.c * (kPixels + kPad) + q.p] = __float2half_rn(updated.x);
        w16[(q.c + 1) * (kPixels + kPad) + q.p] = __float2half_rn(updated.y);
      }
    }
  }
};

#endif  // sm_90a

// Steps *step_index, ..., *step_index + steps - 1, by one cluster of kClusterBlocks blocks.
//
// Who may overwrite what. A block writes into another's buffer only what that block waits for
// next, and only after receiving what it needs from every block for its own next phase, which
// each block sends after its reads of the buffer in question (its program order): X of layer
// l >= 2 is rewritten a step later, after the step's first phase, which every block enters only
// after its whole last step; a partial-product buffer, two backward phases later, after the
// phase between, whose partials each block sends after reading its own. Only X of layer 1 is
// written by a phase (the next step's first) that follows no data of this step's last, while
// its last readers (layer 1's SGD, the ReLU' of layer 0) may still be running elsewhere: it has
// two buffers, one for even steps and one for odd.
__global__ void __launch_bounds__(kThreads, 1)
    on_chip_training_kernel(const __grid_constant__ Model m, const __grid_constant__ OnChipLayout s,
                            int steps, float learning_rate) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ __align__(16) uint8_t smem[];
  cg::cluster_group cluster = cg::this_cluster();
  const int me = static_cast<int>(cluster.block_rank());
  const int L = s.layers;
  const auto halves = [&](int offset) { return reinterpret_cast<__half*>(smem + offset); };
  const auto floats = [&](int offset) { return reinterpret_cast<float*>(smem + offset); };
  float* const sums = floats(s.sums);
  uint64_t* const arrivals = reinterpret_cast<uint64_t*>(smem + s.arrivals);

  // Zeros everywhere first: the pads of the weights, dZ and partial products must be 0 for the
  // products that run over them, and no stale bit may be a NaN that 0 times it keeps.
  for (int i = threadIdx.x; i < s.bytes / 16; i += kThreads) {
    reinterpret_cast<uint4*>(smem)[i] = make_uint4(0, 0, 0, 0);
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int i = 0; i < kArrivals; ++i) wgmma::mbarrier_init(shared_address(arrivals + i), 1);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  move_parameters(m, s, smem, me, true);
  // The first layer's masters live in registers for the whole launch (FirstLayerMasters).
  FirstLayerMasters masters;
  masters.load(m.layer[0].buffers.weights, s.own_rows[0], me);
  const int first = *m.step_index;  // block 0 writes it after the last barrier
  load_batch_async(m, first, halves(s.batch[first % 2]));
  uint32_t phases = 0;
  cluster.sync();  // every block has started, zeroed its memory and set up its mbarriers

  for (int step = first; step < first + steps; ++step) {
    const int rows = min(m.batch, m.train_count - step * m.batch);
    const int* const batch_order = m.order + size_t(step) * m.batch;
    const int parity = (step - first) % 2;  // which X of layer 1
    const auto input = [&](int l) {
      return halves(l == 1 && parity == 1 ? s.input_second : s.input[l]);
    };
    // Thread r keeps row r's label from here to the loss (softmax_cross_entropy_warp gives row r
    // to thread r): its load waits for nothing in between.
    const int label = threadIdx.x < rows ? int(m.train_labels[batch_order[threadIdx.x]]) : 0;
    cp_async::cp_async_wait<0>();  // this step's batch, copied during the last step
    __syncthreads();

    // Forward through the hidden layers: own columns, then sent to every block.
    for (int l = 0; l + 1 < L; ++l) {
      const int in = s.in[l], own = s.own_rows[l], next = s.out[l] + kPad;
      const __half* x = l == 0 ? halves(s.batch[step % 2]) : input(l);
      const float* bias = floats(s.bias[l]);
      __half* const mine = input(l + 1);
      block_product<true, true>(
          x, in + kPad, halves(s.weight16[l]), in + kPad, kOnChipRows, round_up(own, kMmaN), in,
          sums, [&](int r, int c, float v0, float v1) {
            if (c >= own) return;  // own is even, so is c: c + 1 < own too
            *reinterpret_cast<__half2*>(mine + r * next + me * own + c) =
                __floats2half2_rn(fmaxf(v0 + bias[c], 0.0f), fmaxf(v1 + bias[c + 1], 0.0f));
          });
      // Own columns to the other blocks, 16 bytes at a time where a row's share allows it.
      const int arrival = input_arrival(l + 1, l == 0 ? parity : 0);
      if (own % 8 == 0) {
        send_own_columns<uint4>(mine, next, own, me, arrivals + arrival);
      } else {
        send_own_columns<__half2>(mine, next, own, me, arrivals + arrival);
      }
      // The next step's batch goes out while the others' columns come in: the buffer it fills
      // was last read by this block's previous step.
      if (l == 0 && step + 1 < first + steps) {
        load_batch_async(m, step + 1, halves(s.batch[(step + 1) % 2]));
      }
      receive(arrivals, arrival, (kClusterBlocks - 1) * kOnChipRows * own * 2, phases);
    }

    // The output layer, in every block alike: logits, loss and dZ.
    const int top = L - 1, hidden_in = s.in[top];
    __half* const x_top = input(top);
    float* const logits = floats(s.logits);
    {
      const float* bias = floats(s.bias[top]);
      block_product<true, true>(x_top, hidden_in + kPad, halves(s.weight16[top]), hidden_in + kPad,
                                kOnChipRows, kClassesPadded, hidden_in, sums,
                                [&](int r, int c, float v0, float v1) {
                                  if (c < kClasses) logits[r * kClasses + c] = v0 + bias[c];
                                  if (c + 1 < kClasses)
                                    logits[r * kClasses + c + 1] = v1 + bias[c + 1];
                                });
    }
    // Warp 0 alone: 32 rows need no block-wide tree, and so no barrier but the one after.
    __half* const dz_top = halves(s.dz[top]);
    const LossSums loss = softmax_cross_entropy_warp(
        logits, [=](int) { return label; }, rows, rows, dz_top, kDzStride);
    if (me == 0 && threadIdx.x == 0) m.step_losses[step] = loss.loss / rows;
    __syncthreads();
    {
      // dZ of the layer below, own columns: (dZ W) masked by ReLU' of its output. The whole of
      // dZ W is 2 x 16 mma tiles, one step of K: cheaper to take whole than to pick columns.
      const int below = top - 1, own = s.own_rows[below];
      __half* const dz_below = halves(s.dz[below]);
      block_product<true, false>(
          dz_top, kDzStride, halves(s.weight16[top]), hidden_in + kPad, kOnChipRows, hidden_in,
          kClassesPadded, sums, [&](int r, int c, float v0, float v1) {
            const int j = c - me * own;
            if (j < 0 || j >= own) return;
            const __half* y = x_top + r * (hidden_in + kPad) + c;
            dz_below[r * kDzStride + j] = __float2half_rn(__half2float(y[0]) > 0.0f ? v0 : 0.0f);
            dz_below[r * kDzStride + j + 1] =
                __float2half_rn(__half2float(y[1]) > 0.0f ? v1 : 0.0f);
          });
      // The output layer's SGD: every block computes the same update of its copy.
      float* const w32 = floats(s.weight32[top]);
      __half* const w16 = halves(s.weight16[top]);
      block_product<false, false>(dz_top, kDzStride, x_top, hidden_in + kPad, kClassesPadded,
                                  hidden_in, kOnChipRows, sums,
                                  [&](int r, int c, float v0, float v1) {
                                    if (r < kClasses)
                                      sgd_pair(w32, w16, hidden_in, r, c, v0, v1, learning_rate);
                                  });
      bias_sgd_shared(dz_top, floats(s.bias[top]), kClasses, rows, learning_rate);
    }

    // Backward through the hidden layers above the first.
    for (int l = top - 1; l >= 1; --l) {
      const int in = s.in[l], own = s.own_rows[l], below_own = s.own_rows[l - 1];
      const __half* const dz = halves(s.dz[l]);
      __half* const w16 = halves(s.weight16[l]);
      float* const partial = floats(s.partial[l % 2]);
      const uint64_t* const arrival = arrivals + partial_arrival(l % 2);
      const int slot = kOnChipRows * s.partial_cols;
      // dZ_own W_own: this block's share of every column of dX, each column to its owner's slot.
      block_product<true, false>(
          dz, kDzStride, w16, in + kPad, kOnChipRows, in, kClassesPadded, sums,
          [&](int r, int c, float v0, float v1) {
            const int owner = c / below_own, j = c % below_own;
            float2* to = reinterpret_cast<float2*>(partial + me * slot + r * s.partial_cols + j);
            if (owner == me) {
              *to = make_float2(v0, v1);
            } else {
              store_async(address_in(to, owner), make_float2(v0, v1), address_in(arrival, owner));
            }
          });
      float* const w32 = floats(s.weight32[l]);
      const __half* const x = input(l);
      block_product<false, false>(dz, kDzStride, x, in + kPad, kMmaM, in, kOnChipRows, sums,
                                  [&](int r, int c, float v0, float v1) {
                                    if (r < own)
                                      sgd_pair(w32, w16, in, r, c, v0, v1, learning_rate);
                                  });
      bias_sgd_shared(dz, floats(s.bias[l]), own, rows, learning_rate);
      receive(arrivals, partial_arrival(l % 2), (kClusterBlocks - 1) * kOnChipRows * below_own * 4,
              phases);
      // dZ of the layer below, own columns: the 16 partials in block order, masked by ReLU' of
      // that layer's output, which is X of this one.
      __half* const dz_below = halves(s.dz[l - 1]);
      for (int i = threadIdx.x; i < kOnChipRows * below_own; i += kThreads) {
        const int r = i / below_own, j = i % below_own;
        float sum = 0.0f;
        for (int from = 0; from < kClusterBlocks; ++from) {
          sum += partial[from * slot + r * s.partial_cols + j];
        }
        const bool on = __half2float(x[r * (in + kPad) + me * below_own + j]) > 0.0f;
        dz_below[r * kDzStride + j] = __float2half_rn(on ? sum : 0.0f);
      }
      __syncthreads();
    }

    // The first layer's SGD: the batch as X, the masters from registers.
    masters.update(s.own_rows[0], halves(s.dz[0]), halves(s.batch[step % 2]), halves(s.weight16[0]),
                   learning_rate);
    bias_sgd_shared(halves(s.dz[0]), floats(s.bias[0]), s.own_rows[0], rows, learning_rate);
    __syncthreads();
  }
  masters.store(m.layer[0].buffers.weights, s.own_rows[0], me);
  move_parameters(m, s, smem, me, false);
  if (me == 0 && threadIdx.x == 0) *m.step_index = first + steps;
  cluster.sync();  // no block leaves while another may still write into its shared memory
#else
  __trap();  // built without sm_90a: see 07_wgmma/wgmma.cuh
#endif
}

// Whether this GPU runs a cluster of kClusterBlocks blocks of this kernel with the most shared
// memory it may take; asked once.
inline bool on_chip_runs_here() {
  static const bool runs = [] {
    CUDA_CHECK(cudaFuncSetAttribute(on_chip_training_kernel,
                                    cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
    CUDA_CHECK(cudaFuncSetAttribute(on_chip_training_kernel,
                                    cudaFuncAttributeMaxDynamicSharedMemorySize, kOnChipSmemLimit));
    const ClusterLaunch launch(kClusterBlocks, kClusterBlocks, kThreads, kOnChipSmemLimit, nullptr);
    int clusters = 0;
    const cudaError_t status =
        cudaOccupancyMaxActiveClusters(&clusters, on_chip_training_kernel, &launch.config);
    if (status != cudaSuccess) {
      (void)cudaGetLastError();  // a GPU without clusters answers with an error: not ours to keep
      return false;
    }
    return clusters >= 1;
  }();
  return runs;
}

// One launch of the on-chip kernel: one cluster, for `steps` steps.
inline void train_steps_on_chip(const Model& m, const LayerSizes& sizes, int steps,
                                float learning_rate, cudaStream_t stream) {
  const OnChipLayout layout = on_chip_layout(sizes.data(), m.layers);
  const ClusterLaunch launch(kClusterBlocks, kClusterBlocks, kThreads, layout.bytes, stream);
  CUDA_CHECK(
      cudaLaunchKernelEx(&launch.config, on_chip_training_kernel, m, layout, steps, learning_rate));
}

}  // namespace mnist::persistent_step
