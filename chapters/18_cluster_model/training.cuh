// The cluster's training kernel: where a small model fits in the shared memory of one thread block
// cluster, the cluster trains it with its weights, activations and gradients on chip from the
// launch's first step to its last. A phase reads only its own block's shared memory and stores its
// results straight into the shared memory of the blocks that read them next (distributed shared
// memory); the cluster's barrier then says every block's stores have landed. Ownership: layout.cuh.
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

#include <cstdint>

#include "18_cluster_model/block_product.cuh"
#include "cuda_check.cuh"
#include "occupancy.cuh"

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
  float* const sums = floats(s.sums);
  __half* const batch = halves(s.batch);

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
    load_batch_async(m, step, batch);
    cp_async::cp_async_wait<0>();
    __syncthreads();

    // Forward through the hidden layers: own columns, stored into every block's X of the next.
    for (int l = 0; l + 1 < L; ++l) {
      const int in = s.in[l], own = s.own_rows[l], next = s.out[l] + kPad;
      const float* bias = floats(s.bias[l]);
      __half* const y = halves(s.input[l + 1]);
      block_product<true, true>(
          l == 0 ? batch : halves(s.input[l]), in + kPad, halves(s.weight16[l]), in + kPad,
          kOnChipRows, round_up(own, kMmaN), in, sums, [&](int r, int c, float v0, float v1) {
            if (c >= own) return;  // own is even, so is c: c + 1 < own too
            const __half2 v =
                __floats2half2_rn(fmaxf(v0 + bias[c], 0.0f), fmaxf(v1 + bias[c + 1], 0.0f));
            __half2* const at = reinterpret_cast<__half2*>(y + r * next + me * own + c);
            for (int block = 0; block < kClusterBlocks; ++block) {
              *cluster.map_shared_rank(at, block) = v;
            }
          });
      cluster.sync();  // every block's columns have landed in every block
    }

    // The output layer, in every block alike: logits, loss and dZ.
    const int top = L - 1, hidden_in = s.in[top];
    const __half* const x_top = halves(s.input[top]);
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
    // The gradient, rows kClasses apart, in `sums` (free between products); then into dZ's rows,
    // zeros past the batch's last (the products run over all kOnChipRows).
    __half* const grad = reinterpret_cast<__half*>(sums);
    const LossSums loss = softmax_cross_entropy_block<kThreads>(
        logits, [&](int r) { return int(m.train_labels[batch_order[r]]); }, rows, rows, grad);
    if (me == 0 && threadIdx.x == 0) m.step_losses[step] = loss.loss / rows;
    __half* const dz_top = halves(s.dz[top]);
    for (int i = threadIdx.x; i < kOnChipRows * kClasses; i += kThreads) {
      const int r = i / kClasses;
      dz_top[r * kDzStride + i % kClasses] = r < rows ? grad[i] : __float2half(0.0f);
    }
    __syncthreads();
    {
      // dZ of the layer below, own columns: (dZ W) masked by ReLU' of its output (all of dZ W is
      // 2 x 16 mma tiles of one K step: cheaper whole than picked).
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

    // Backward through the hidden layers, down to the first.
    for (int l = top - 1; l >= 0; --l) {
      const int in = s.in[l], own = s.own_rows[l], below_own = l > 0 ? s.own_rows[l - 1] : 0;
      const __half* const dz = halves(s.dz[l]);
      const __half* const x = l == 0 ? batch : halves(s.input[l]);
      __half* const w16 = halves(s.weight16[l]);
      float* const partial = floats(s.partial[l % 2]);
      const int slot = kOnChipRows * s.partial_cols;
      if (l > 0) {
        // dZ_own W_own: this block's share of every column of dX, each column to its owner's slot.
        block_product<true, false>(dz, kDzStride, w16, in + kPad, kOnChipRows, in, kClassesPadded,
                                   sums, [&](int r, int c, float v0, float v1) {
                                     float2* const to = reinterpret_cast<float2*>(
                                         partial + me * slot + r * s.partial_cols + c % below_own);
                                     *cluster.map_shared_rank(to, c / below_own) =
                                         make_float2(v0, v1);
                                   });
      }
      float* const w32 =
          l == 0 ? m.layer[0].buffers.weights + size_t(me) * own * in : floats(s.weight32[l]);
      block_product<false, false>(dz, kDzStride, x, in + kPad, kMmaM, in, kOnChipRows, sums,
                                  [&](int r, int c, float v0, float v1) {
                                    if (r < own)
                                      sgd_pair(w32, w16, in, r, c, v0, v1, learning_rate);
                                  });
      bias_sgd_shared(dz, floats(s.bias[l]), own, rows, learning_rate);
      if (l == 0) break;
      cluster.sync();  // every block's partial products have landed in their owners
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
    cluster.sync();  // the step's end: every block is done reading this step's X of layer 1
  }
  move_parameters(m, s, smem, me, false);
  if (me == 0 && threadIdx.x == 0) *m.step_index = first + steps;
#else
  __trap();  // built without sm_90a: see 08_wgmma/wgmma.cuh
#endif
}

// Whether this GPU runs a cluster of kClusterBlocks blocks of this kernel with the most shared
// memory it may take; asked once.
inline bool cluster_runs_here() {
  static const bool runs = [] {
    CUDA_CHECK(cudaFuncSetAttribute(cluster_training_kernel,
                                    cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
    CUDA_CHECK(cudaFuncSetAttribute(cluster_training_kernel,
                                    cudaFuncAttributeMaxDynamicSharedMemorySize, kOnChipSmemLimit));
    const ClusterLaunch launch(kClusterBlocks, kClusterBlocks, kThreads, kOnChipSmemLimit, nullptr);
    int clusters = 0;
    const cudaError_t status =
        cudaOccupancyMaxActiveClusters(&clusters, cluster_training_kernel, &launch.config);
    if (status != cudaSuccess) {
      (void)cudaGetLastError();  // a GPU without clusters answers with an error: not ours to keep
      return false;
    }
    return clusters >= 1;
  }();
  return runs;
}

// One launch of the cluster's kernel: one cluster, for `steps` steps.
inline void train_steps_in_cluster(const Model& m, const LayerSizes& sizes, int steps,
                                   float learning_rate, cudaStream_t stream) {
  const ModelLayout layout = model_layout(sizes.data(), m.layers);
  const ClusterLaunch launch(kClusterBlocks, kClusterBlocks, kThreads, layout.bytes, stream);
  CUDA_CHECK(
      cudaLaunchKernelEx(&launch.config, cluster_training_kernel, m, layout, steps, learning_rate));
}

}  // namespace mnist::cluster_model
