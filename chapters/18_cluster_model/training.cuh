// The training kernel: a phase reads its block's shared memory and stores where the next one reads.
//
//   forward, hidden layer l       Y[:, own] = ReLU(X W_own^T + b_own), X whole in every block;
//                                 Y[:, own] stored into every block's X of layer l + 1
//   --- cluster barrier ---
//   output layer (every block)    logits, softmax cross-entropy, dZ; the output layer's SGD;
//                                 dZ of layer L-2, own columns: (dZ W)[:, own], masked by ReLU'
//   backward, hidden layer l >= 1 dZ_own W_own, a B x in partial product, each block's columns
//                                 stored into their owner's slot; SGD of W_own, b_own
//   --- cluster barrier ---
//   (each block)                  dZ of layer l - 1, own columns: its 16 partials added in block
//                                 order, masked by ReLU'
//   backward, layer 0             SGD of W_own (its fp32 masters in global memory), b_own
//   --- cluster barrier: the step's end ---
#pragma once

#include <cooperative_groups.h>

#include "18_cluster_model/products.cuh"

namespace mnist::cluster_model {

namespace cg = cooperative_groups;

// Steps *step_index, ..., *step_index + steps - 1, by one cluster of kClusterBlocks blocks. Who may
// overwrite what: a block stores into another's X of layer l + 1 or its partial products only
// after a cluster barrier that every block passes after its reads of the same buffer (the step's
// end barrier for X; the next backward layer's barrier for the partial buffer of one parity).
__global__ void __launch_bounds__(kThreads, 1)
    cluster_training_kernel(const __grid_constant__ Model m, const __grid_constant__ ModelLayout s,
                            int steps, float learning_rate) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ __align__(16) uint8_t smem[];
  cg::cluster_group cluster = cg::this_cluster();
  const int me = static_cast<int>(cluster.block_rank());
  const int L = s.layers;
  const auto halves = [&](int offset) { return reinterpret_cast<__half*>(smem + offset); };
  const auto floats = [&](int offset) { return reinterpret_cast<float*>(smem + offset); };
  // Zeros first: the products run over the pads, and a stale NaN times 0 stays NaN.
  for (int i = threadIdx.x; i < s.bytes / 16; i += kThreads) {
    reinterpret_cast<uint4*>(smem)[i] = make_uint4(0, 0, 0, 0);
  }
  __syncthreads();
  move_parameters(m, s, smem, me, true);
  const int first = *m.step_index;  // block 0 writes it after the last barrier
  cluster.sync();  // every block has zeroed its memory before any block stores into it

  for (int step = first; step < first + steps; ++step) {
    const int rows = min(m.batch, m.train_count - step * m.batch);
    const int* const batch_order = m.order + size_t(step) * m.batch;
    load_batch_async(m, step, halves(s.input[0]));
    cp_async::cp_async_wait<0>();
    __syncthreads();

    for (int l = 0; l + 1 < L; ++l) {
      const int in = s.in[l], own = s.own_rows[l], next = s.out[l] + kPad;
      const float* bias = floats(s.bias[l]);
      __half* const y = halves(s.input[l + 1]);
      block_product<true, true>(
          halves(s.input[l]), in + kPad, halves(s.weight16[l]), in + kPad, kOnChipRows,
          round_up(own, kMmaN), in, [&](int r, int c, float v0, float v1) {
            if (c >= own) return;  // own is even, so is c: c + 1 < own too
            const __half2 v =
                __floats2half2_rn(fmaxf(v0 + bias[c], 0.0f), fmaxf(v1 + bias[c + 1], 0.0f));
            __half2* const at = reinterpret_cast<__half2*>(y + r * next + me * own + c);
            for (int b = 0; b < kClusterBlocks; ++b) *cluster.map_shared_rank(at, b) = v;
          });
      cluster.sync();  // every block's columns have landed in every block
    }

    // The output layer, in every block alike: logits, loss and dZ.
    const int top = L - 1, hidden_in = s.in[top];
    const __half* const x_top = halves(s.input[top]);
    float* const logits = floats(s.logits);
    output_logits(x_top, halves(s.weight16[top]), floats(s.bias[top]), hidden_in, logits);
    __half* const grad = halves(s.grad);
    const LossSums loss = softmax_cross_entropy_block<kThreads>(
        logits, [&](int r) { return int(m.train_labels[batch_order[r]]); }, rows, rows, grad);
    if (me == 0 && threadIdx.x == 0) m.step_losses[step] = loss.loss / rows;
    __half* const dz_top = halves(s.dz[top]);
    for (int i = threadIdx.x; i < kOnChipRows * kClasses; i += kThreads) {
      const int r = i / kClasses;
      dz_top[r * kDzStride + i % kClasses] = r < rows ? grad[i] : __float2half(0.0f);
    }
    __syncthreads();
    {  // dZ of the layer below, own columns: (dZ W) masked by ReLU' of its output; the SGD
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
      layer_sgd(dz_top, x_top, hidden_in, kClasses, rows, floats(s.weight32[top]),
                halves(s.weight16[top]), floats(s.bias[top]), learning_rate);
    }

    for (int l = top - 1; l >= 0; --l) {
      const int in = s.in[l], own = s.own_rows[l], below_own = l > 0 ? s.own_rows[l - 1] : 0;
      const __half* const dz = halves(s.dz[l]);
      const __half* const x = halves(s.input[l]);
      __half* const w16 = halves(s.weight16[l]);
      float* const partial = floats(s.partial[l % 2]);
      const int slot = kOnChipRows * s.partial_cols;
      if (l > 0) {  // dZ_own W_own: a share of every column of dX, each to its owner's slot
        block_product<true, false>(dz, kDzStride, w16, in + kPad, kOnChipRows, in, kClassesPadded,
                                   [&](int r, int c, float v0, float v1) {
                                     float2* const to = reinterpret_cast<float2*>(
                                         partial + me * slot + r * s.partial_cols + c % below_own);
                                     *cluster.map_shared_rank(to, c / below_own) =
                                         make_float2(v0, v1);
                                   });
      }
      float* const w32 =
          l == 0 ? m.layer[0].buffers.weights + size_t(me) * own * in : floats(s.weight32[l]);
      layer_sgd(dz, x, in, own, rows, w32, w16, floats(s.bias[l]), learning_rate);
      if (l == 0) break;
      cluster.sync();  // every block's partial products have landed in their owners
      add_partials(partial, s.partial_cols, x, in, me, below_own, halves(s.dz[l - 1]));
    }
    cluster.sync();  // the step's end: every block is done reading this step's X of layer 1
  }
  move_parameters(m, s, smem, me, false);
  if (me == 0 && threadIdx.x == 0) *m.step_index = first + steps;
#else
  __trap();  // built without sm_90a: see 08_wgmma/wgmma.cuh
#endif
}

}  // namespace mnist::cluster_model
