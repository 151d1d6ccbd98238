// The persistent training kernel: every step of a train() call, each step's forward pass, loss,
// backward pass and SGD, in one launch (step_interface.cuh is how the trainer reaches it). The
// scheme is in gemm.cuh's opening comment; the block tile in tile.cuh, the barrier and its memory
// order in grid_barrier.cuh.
#pragma once

#include <algorithm>
#include <stdexcept>
#include <string>

#include "02_smem_tiling/smem_tile.cuh"
#include "10_persistent_step/grid_barrier.cuh"
#include "10_persistent_step/tile.cuh"
#include "cuda_check.cuh"
#include "mlp_device.cuh"
#include "occupancy.cuh"
#include "step_interface.cuh"

namespace mnist::persistent_step {

// The rule: the models and batches the persistent step takes; the trainer runs every other one a
// step at a time on chapter 09's kernels. Widths up to 1024 at batches up to 256 are where a step
// is mostly launches and their gaps (the numbers that motivate the chapter,
// docs/10_persistent_step.md); the measured crossover is still to be taken on a GPU, and these
// limits moved to it.
constexpr int kMaxLayers = 8;    // the kernel's parameter holds this many
constexpr int kMaxWidth = 1024;  // widest layer
constexpr int kMaxBatch = 256;

// A layer as the kernel reads it: the trainer's buffers and whether their rows allow 16-byte
// copies.
struct Layer {
  LayerBuffers buffers;
  bool in_vectorized;   // rows of `in` halves: its input X and its weights
  bool out_vectorized;  // rows of `out` halves: its gradient dZ
};

// The trainer's StepBuffers as one kernel parameter: the layers in an array of fixed size.
struct Model {
  int layers;
  Layer layer[kMaxLayers];
  const __half* train_images;
  const uint8_t* train_labels;
  const int* order;
  int* step_index;
  int batch, train_count;
  float* logits;
  float* step_losses;
  GridBarrier* barrier;
};

// Backward phase j (0 to layers - 1) runs the backward-data product of layer data_layer(j), where
// that is 1 or more, and the SGD of layer sgd_layer(j), where that is a layer: the data product
// reads a layer's fp16 weights, which its SGD overwrites, so the SGD comes a phase later. Layer 0
// has no data product; its dZ is complete after phase layers - 2, and its SGD joins layer 1's in
// the last phase.
__host__ __device__ inline int data_layer(int layers, int j) {
  return layers - 1 - j;
}
__host__ __device__ inline int sgd_layer(int layers, int j) {
  return layers - j;
}

// The forward product of layer l: X W^T + bias, through ReLU below the output layer, whose result
// is the logits. The first layer's X is the batch, gathered from the images.
__device__ inline Product forward_product(const Model& m, int l, int rows, const int* batch_order) {
  const LayerBuffers& y = m.layer[l].buffers;
  Product x;
  x.p.m = rows;
  x.p.n = y.out;
  x.p.k = y.in;
  x.p.a = l == 0 ? m.train_images : m.layer[l - 1].buffers.output;
  x.p.op_a = kForward.a;
  x.p.b = y.weight_operand;
  x.p.op_b = kForward.b;
  x.p.epilogue.bias = y.bias;
  x.p.epilogue.out = y.output;
  x.p.c = m.logits;
  x.a_vectorized = x.b_vectorized = m.layer[l].in_vectorized;
  x.a_gathered = l == 0 ? batch_order : nullptr;
  return x;
}

// The backward-data product of layer l >= 1: dZ W, masked by ReLU' of its input, which is dZ of
// layer l - 1.
__device__ inline Product data_product(const Model& m, int l, int rows) {
  const LayerBuffers& y = m.layer[l].buffers;
  Product x;
  x.p.m = rows;
  x.p.n = y.in;
  x.p.k = y.out;
  x.p.a = y.grad;
  x.p.op_a = kBackwardData.a;
  x.p.b = y.weight_operand;
  x.p.op_b = kBackwardData.b;
  x.p.epilogue.activation = m.layer[l - 1].buffers.output;
  x.p.epilogue.out = m.layer[l - 1].buffers.grad;
  x.a_vectorized = m.layer[l].out_vectorized;
  x.b_vectorized = m.layer[l].in_vectorized;
  return x;
}

// The backward-weight product of layer l, dZ^T X, through the SGD epilogue.
__device__ inline Product weight_product(const Model& m, int l, int rows, const int* batch_order,
                                         float learning_rate) {
  const LayerBuffers& y = m.layer[l].buffers;
  Product x;
  x.p.m = y.out;
  x.p.n = y.in;
  x.p.k = rows;
  x.p.a = y.grad;
  x.p.op_a = kBackwardWeight.a;
  x.p.b = l == 0 ? m.train_images : m.layer[l - 1].buffers.output;
  x.p.op_b = kBackwardWeight.b;
  x.p.epilogue.master = y.weights;
  x.p.epilogue.out = y.weight_operand;
  x.p.epilogue.learning_rate = learning_rate;
  x.a_vectorized = m.layer[l].out_vectorized;
  x.b_vectorized = m.layer[l].in_vectorized;
  x.b_gathered = l == 0 ? batch_order : nullptr;
  return x;
}

// The block tiles of one product, dealt out to the blocks in turn.
template <Op kOpA, Op kOpB, EpilogueKind kKind>
__device__ void multiply(const Product& x, uint8_t* smem) {
  for (int tile = blockIdx.x; tile < tiles_of(x.p); tile += gridDim.x) {
    multiply_tile<kOpA, kOpB, kKind>(x, tile, smem);
  }
}

// bias -= learning_rate * (column sums of dZ) for layer l, a column per thread of the grid.
__device__ inline void bias_sgd(const Model& m, int l, int rows, float learning_rate) {
  const LayerBuffers& y = m.layer[l].buffers;
  for (int col = blockIdx.x * kThreads + threadIdx.x; col < y.out; col += gridDim.x * kThreads) {
    bias_sgd_column(y.grad, y.bias, y.out, col, rows, learning_rate);
  }
}

// Backward phase j (see data_layer): its products' tiles as one list, so that the blocks share
// them out, then the biases of the layers it updates.
__device__ inline void backward_phase(const Model& m, int j, int rows, const int* batch_order,
                                      float learning_rate, uint8_t* smem) {
  const int data = data_layer(m.layers, j), sgd = sgd_layer(m.layers, j);
  Product dx, dw, dw0;
  int dx_tiles = 0, dw_tiles = 0, dw0_tiles = 0;
  if (data >= 1) {
    dx = data_product(m, data, rows);
    dx_tiles = tiles_of(dx.p);
  }
  if (sgd < m.layers) {
    dw = weight_product(m, sgd, rows, batch_order, learning_rate);
    dw_tiles = tiles_of(dw.p);
  }
  if (data == 0) {
    dw0 = weight_product(m, 0, rows, batch_order, learning_rate);
    dw0_tiles = tiles_of(dw0.p);
  }
  for (int unit = blockIdx.x; unit < dx_tiles + dw_tiles + dw0_tiles; unit += gridDim.x) {
    if (unit < dx_tiles) {
      multiply_tile<kBackwardData.a, kBackwardData.b, EpilogueKind::kReluGrad>(dx, unit, smem);
    } else if (unit < dx_tiles + dw_tiles) {
      multiply_tile<kBackwardWeight.a, kBackwardWeight.b, EpilogueKind::kSgd>(dw, unit - dx_tiles,
                                                                              smem);
    } else {
      multiply_tile<kBackwardWeight.a, kBackwardWeight.b, EpilogueKind::kSgd>(
          dw0, unit - dx_tiles - dw_tiles, smem);
    }
  }
  if (sgd < m.layers) bias_sgd(m, sgd, rows, learning_rate);
  if (data == 0) bias_sgd(m, 0, rows, learning_rate);
}

// Steps *step_index, ..., *step_index + steps - 1 of the epoch. Per step, each phase ends at a grid
// barrier, since the next reads what every block wrote in it:
//   forward, layer 0 .. L-1   Y = ReLU(X W^T + b); the last gives the logits
//   loss                      block 0: softmax cross-entropy, dZ of the output layer, the loss
//   backward, phase 0 .. L-1  dX of layer L-1-j and SGD of layer L-j (backward_phase)
// 2 L + 1 barriers a step, where the step-by-step trainer launches 3 L + 2 kernels or more.
__global__ void __launch_bounds__(kThreads)
    persistent_training_kernel(const __grid_constant__ Model m, int steps, float learning_rate) {
  extern __shared__ __align__(16) uint8_t smem[];
  // Every block reads the index before its first arrival at a barrier; block 0 writes it after its
  // last, so no block can read the new value.
  const int first = *m.step_index;
  for (int s = first; s < first + steps; ++s) {
    const int rows = min(m.batch, m.train_count - s * m.batch);
    const int* const batch_order = m.order + size_t(s) * m.batch;
    for (int l = 0; l < m.layers; ++l) {
      const Product x = forward_product(m, l, rows, batch_order);
      if (l + 1 < m.layers) {
        multiply<kForward.a, kForward.b, EpilogueKind::kBiasRelu>(x, smem);
      } else {
        multiply<kForward.a, kForward.b, EpilogueKind::kBias>(x, smem);
      }
      grid_barrier(m.barrier);
    }
    if (blockIdx.x == 0) {
      const uint8_t* const labels = m.train_labels;
      const LossSums sums = softmax_cross_entropy_block<kThreads>(
          m.logits, [=](int r) { return int(labels[batch_order[r]]); }, rows,
          m.layer[m.layers - 1].buffers.grad);
      if (threadIdx.x == 0) m.step_losses[s] = sums.loss / rows;
    }
    grid_barrier(m.barrier);
    for (int j = 0; j < m.layers; ++j) {
      backward_phase(m, j, rows, batch_order, learning_rate, smem);
      grid_barrier(m.barrier);
    }
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) *m.step_index = first + steps;
}

// Why the persistent step does not take a model of `sizes` at `batch`, or empty: the rule above.
inline std::string steps_refusal(const LayerSizes& sizes, int batch) {
  const std::string mine = "chapter 10_persistent_step's persistent step takes ";
  const int layers = static_cast<int>(sizes.size()) - 1;
  int widest = 0;  // of the hidden layers
  for (size_t i = 1; i + 1 < sizes.size(); ++i) widest = std::max(widest, sizes[i]);
  if (layers > kMaxLayers) {
    return mine + "at most " + std::to_string(kMaxLayers) + " layers; the model has " +
           std::to_string(layers);
  }
  if (widest > kMaxWidth) {
    return mine + "hidden widths up to " + std::to_string(kMaxWidth) + "; the model has " +
           std::to_string(widest) + " (chapter 09's kernels train it a step at a time)";
  }
  if (batch > kMaxBatch) {
    return mine + "batches up to " + std::to_string(kMaxBatch) + ", not " + std::to_string(batch);
  }
  return "";
}

inline LayerSizes sizes_of(const StepBuffers& b) {
  LayerSizes sizes = {b.layers.front().in};
  for (const LayerBuffers& y : b.layers) sizes.push_back(y.out);
  return sizes;
}

inline Model model_of(const StepBuffers& b) {
  Model m{};
  m.layers = static_cast<int>(b.layers.size());
  for (int l = 0; l < m.layers; ++l) {
    const LayerBuffers& y = b.layers[l];
    const __half* input = l == 0 ? b.train_images : b.layers[l - 1].output;
    m.layer[l] = {
        y,
        smem_tiling::vectorizable(input, y.in) && smem_tiling::vectorizable(y.weight_operand, y.in),
        smem_tiling::vectorizable(y.grad, y.out)};
  }
  m.train_images = b.train_images;
  m.train_labels = b.train_labels;
  m.order = b.order;
  m.step_index = b.step_index;
  m.batch = b.batch;
  m.train_count = b.train_count;
  m.logits = b.logits;
  m.step_losses = b.step_losses;
  m.barrier = reinterpret_cast<GridBarrier*>(b.sync);
  return m;
}

// The most block tiles any phase of a full step has: more blocks than that would only wait at the
// barriers.
inline int most_tiles(const Model& m) {
  const auto tiles = [](int rows, int cols) {
    return (rows + kTileM - 1) / kTileM * ((cols + kTileN - 1) / kTileN);
  };
  int most = 1;
  for (int l = 0; l < m.layers; ++l) most = std::max(most, tiles(m.batch, m.layer[l].buffers.out));
  for (int j = 0; j < m.layers; ++j) {
    const int data = data_layer(m.layers, j), sgd = sgd_layer(m.layers, j);
    const auto weights = [&](int l) {
      return tiles(m.layer[l].buffers.out, m.layer[l].buffers.in);
    };
    most = std::max(most, (data >= 1 ? tiles(m.batch, m.layer[data].buffers.in) : 0) +
                              (sgd < m.layers ? weights(sgd) : 0) + (data == 0 ? weights(0) : 0));
  }
  return most;
}

// One cooperative launch of the kernel for `steps` steps: the runtime starts it only if every
// block is resident at once, which the grid barrier needs (grid_barrier.cuh), and the grid is at
// most what the occupancy calculator says fits.
inline void train_steps(const StepBuffers& buffers, int steps, float learning_rate,
                        cudaStream_t stream) {
  const std::string why = steps_refusal(sizes_of(buffers), buffers.batch);
  if (!why.empty()) throw std::invalid_argument(why);  // and Model's arrays would not hold it
  static const int resident =
      resident_blocks(persistent_training_kernel, kThreads, kSmemBytes);  // one GPU throughout
  static const bool cooperative = [] {
    int device = 0, supported = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&supported, cudaDevAttrCooperativeLaunch, device));
    return supported != 0;
  }();
  if (!cooperative || resident < 1) {
    throw std::runtime_error(
        "chapter 10_persistent_step's persistent step needs a cooperative launch, which this GPU "
        "does not offer: run with --launch graph");
  }
  const Model m = model_of(buffers);
  cudaLaunchAttribute attribute = {};
  attribute.id = cudaLaunchAttributeCooperative;
  attribute.val.cooperative = 1;
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(std::min(resident, most_tiles(m)));
  config.blockDim = dim3(kThreads);
  config.dynamicSmemBytes = kSmemBytes;
  config.stream = stream;
  config.attrs = &attribute;
  config.numAttrs = 1;
  CUDA_CHECK(cudaLaunchKernelEx(&config, persistent_training_kernel, m, steps, learning_rate));
}

}  // namespace mnist::persistent_step
