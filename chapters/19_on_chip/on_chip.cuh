// The on-chip kernel. A phase reads only its own block's shared memory and pushes its results into
// the shared memory of the blocks that read them next (messages.cuh); a block waits for the data it
// reads next, as it lands, not at a cluster barrier. Who owns what: 18_cluster_model/layout.cuh.
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
// Nothing is read from L2 but the batch, copied a step ahead, and nothing written but the loss.
#pragma once

#include <cooperative_groups.h>

#include <cstdint>

#include "19_on_chip/layout.cuh"
#include "19_on_chip/messages.cuh"

namespace mnist::on_chip {

namespace cg = cooperative_groups;

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)

// The first layer's SGD, W_own -= learning_rate dZ_own^T X with X the batch, taken transposed:
// (X^T dZ_own)[pixel][own row], kPixels / 16 mma tiles of M for each 8 own rows, dealt to the warps
// in turn (R = 8 own rows would fill half of each 16-row mma tile the other way round). Its fp32
// masters do not fit in shared memory beside two batches: they live in the registers of the
// threads that update them, loaded at the launch's start and stored at its end.
constexpr int kPixelTiles = kPixels / kMmaM;
static_assert(kPixels % kMmaM == 0, "whole mma tiles of pixels");
constexpr int kFirstLayerTilesMax = kPixelTiles * kOwnRowsMax / kMmaN;
constexpr int kFirstLayerTilesPerWarp = (kFirstLayerTilesMax + kWarps - 1) / kWarps;
struct FirstLayerMasters {
  // W[c][p], W[c + 1][p] at v[i][h], (c, p) = place(i, h): what mma leaves in a thread (mma.cuh).
  float2 v[kFirstLayerTilesPerWarp][2];

  // The own row c (even, as own is) and pixel p of this thread's v[i][h] in the warp's tile i;
  // c >= own where it holds none.
  struct Place {
    int tile, c, p;
  };
  __device__ static Place place(int i, int h) {
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, tile = warp + i * kWarps;
    return {tile, tile / kPixelTiles * kMmaN + lane % 4 * 2,
            tile % kPixelTiles * kMmaM + lane / 4 + h * 8};
  }
  // Master W[c][p] of (tile i, h), or null; W[c + 1][p] is kPixels floats further.
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
      float acc[4] = {};
      tile_product<false, false>(x, kPixels + kPad, dz, kDzStride, tile % kPixelTiles,
                                 tile / kPixelTiles, kOnChipRows, acc);
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const Place q = place(i, h);
        if (q.c >= own) continue;
        const float2 updated = make_float2(v[i][h].x - learning_rate * acc[2 * h],
                                           v[i][h].y - learning_rate * acc[2 * h + 1]);
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
// each block sends after its reads of the buffer in question: X of layer l >= 2 is rewritten a
// step later, a partial-product buffer two backward phases later. Only X of layer 1 is written by
// a phase (the next step's first) that follows no data of this step's last, while its last
// readers (layer 1's SGD, the ReLU' of layer 0) may still be running elsewhere: it has two
// buffers, one for even steps and one for odd.
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
  const auto batch = [&](int step) { return halves(step % 2 == 0 ? s.input[0] : s.batch_second); };
  uint64_t* const arrivals = reinterpret_cast<uint64_t*>(smem + s.arrivals);

  // Zeros first: the products run over the pads, and a stale NaN times 0 stays NaN.
  for (int i = threadIdx.x; i < s.bytes / 16; i += kThreads) {
    reinterpret_cast<uint4*>(smem)[i] = make_uint4(0, 0, 0, 0);
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int i = 0; i < kArrivals; ++i) tma::mbarrier_init(shared_address(arrivals + i), 1);
    clusters::fence_barrier_init();
  }
  move_parameters(m, s, smem, me, true);
  FirstLayerMasters masters;
  masters.load(m.layer[0].buffers.weights, s.own_rows[0], me);
  const int first = *m.step_index;  // block 0 writes it after the last barrier
  load_batch_async(m, first, batch(first));
  uint32_t phases = 0;
  cluster.sync();  // every block has started, zeroed its memory and set up its mbarriers

  for (int step = first; step < first + steps; ++step) {
    const int rows = min(m.batch, m.train_count - step * m.batch);
    const int* const batch_order = m.order + size_t(step) * m.batch;
    const int parity = (step - first) % 2;  // which X of layer 1
    const auto input = [&](int l) {
      return halves(l == 1 && parity == 1 ? s.input_second : s.input[l]);
    };
    // Thread r keeps row r's label until the loss takes row r (softmax_cross_entropy_warp).
    const int label = threadIdx.x < rows ? int(m.train_labels[batch_order[threadIdx.x]]) : 0;
    cp_async::cp_async_wait<0>();  // this step's batch, copied during the last step
    __syncthreads();

    // Forward through the hidden layers: own columns, then sent to every block.
    for (int l = 0; l + 1 < L; ++l) {
      const int in = s.in[l], own = s.own_rows[l], next = s.out[l] + kPad;
      const __half* x = l == 0 ? batch(step) : input(l);
      const float* bias = floats(s.bias[l]);
      __half* const mine = input(l + 1);
      block_product<true, true>(x, in + kPad, halves(s.weight16[l]), in + kPad, kOnChipRows,
                                round_up(own, kMmaN), in, [&](int r, int c, float v0, float v1) {
                                  if (c >= own) return;  // own is even, so is c: c + 1 < own too
                                  *reinterpret_cast<__half2*>(mine + r * next + me * own + c) =
                                      __floats2half2_rn(fmaxf(v0 + bias[c], 0.0f),
                                                        fmaxf(v1 + bias[c + 1], 0.0f));
                                });
      // Own columns to the other blocks, 16 bytes at a time where a row's share allows it.
      const int arrival = input_arrival(l + 1, l == 0 ? parity : 0);
      if (own % 8 == 0) {
        send_own_columns<uint4>(mine, next, own, me, arrivals + arrival);
      } else {
        send_own_columns<__half2>(mine, next, own, me, arrivals + arrival);
      }
      // The next step's batch, copied while the columns come in, into the buffer last read by
      // the previous step.
      if (l == 0 && step + 1 < first + steps) {
        load_batch_async(m, step + 1, batch(step + 1));
      }
      receive(arrivals, arrival, (kClusterBlocks - 1) * kOnChipRows * own * 2, phases);
    }

    // The output layer, in every block alike: logits, loss and dZ.
    const int top = L - 1, hidden_in = s.in[top];
    __half* const x_top = input(top);
    float* const logits = floats(s.logits);
    output_logits(x_top, halves(s.weight16[top]), floats(s.bias[top]), hidden_in, logits);
    // Warp 0 alone: 32 rows need no block-wide tree, and so no barrier but the one after.
    __half* const dz_top = halves(s.dz[top]);
    const LossSums loss = softmax_cross_entropy_warp(
        logits, [=](int) { return label; }, rows, rows, dz_top, kDzStride);
    if (me == 0 && threadIdx.x == 0) m.step_losses[step] = loss.loss / rows;
    __syncthreads();
    {
      // dZ of the layer below, own columns: (dZ W) masked by ReLU' of its output (all of dZ W is
      // 2 x 16 mma tiles of one K step: cheaper whole than picked).
      const int below = top - 1, own = s.own_rows[below];
      __half* const dz_below = halves(s.dz[below]);
      block_product<true, false>(
          dz_top, kDzStride, halves(s.weight16[top]), hidden_in + kPad, kOnChipRows, hidden_in,
          kClassesPadded, [&](int r, int c, float v0, float v1) {
            const int j = c - me * own;
            if (j < 0 || j >= own) return;
            const __half* y = x_top + r * (hidden_in + kPad) + c;
            *reinterpret_cast<__half2*>(dz_below + r * kDzStride + j) = __floats2half2_rn(
                __half2float(y[0]) > 0.0f ? v0 : 0.0f, __half2float(y[1]) > 0.0f ? v1 : 0.0f);
          });
      // The output layer's SGD: every block computes the same update of its copy.
      layer_sgd(dz_top, x_top, hidden_in, kClasses, rows, floats(s.weight32[top]),
                halves(s.weight16[top]), floats(s.bias[top]), learning_rate);
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
          dz, kDzStride, w16, in + kPad, kOnChipRows, in, kClassesPadded,
          [&](int r, int c, float v0, float v1) {
            const int owner = c / below_own, j = c % below_own;
            float2* to = reinterpret_cast<float2*>(partial + me * slot + r * s.partial_cols + j);
            if (owner == me) {
              *to = make_float2(v0, v1);
            } else {
              store_async(address_in(to, owner), make_float2(v0, v1), address_in(arrival, owner));
            }
          });
      const __half* const x = input(l);
      layer_sgd(dz, x, in, own, rows, floats(s.weight32[l]), w16, floats(s.bias[l]), learning_rate);
      receive(arrivals, partial_arrival(l % 2), (kClusterBlocks - 1) * kOnChipRows * below_own * 4,
              phases);
      add_partials(partial, s.partial_cols, x, in, me, below_own, halves(s.dz[l - 1]));
    }

    // The first layer's SGD: the batch as X, the masters from registers.
    masters.update(s.own_rows[0], halves(s.dz[0]), batch(step), halves(s.weight16[0]),
                   learning_rate);
    for (int col = threadIdx.x; col < s.own_rows[0]; col += kThreads) {
      bias_sgd_column(halves(s.dz[0]), floats(s.bias[0]), kDzStride, col, rows, learning_rate);
    }
    __syncthreads();
  }
  masters.store(m.layer[0].buffers.weights, s.own_rows[0], me);
  move_parameters(m, s, smem, me, false);
  if (me == 0 && threadIdx.x == 0) *m.step_index = first + steps;
  cluster.sync();  // no block leaves while another may still write into its shared memory
#else
  __trap();  // built without sm_90a: see 08_wgmma/wgmma.cuh
#endif
}

}  // namespace mnist::on_chip
