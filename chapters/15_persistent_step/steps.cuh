// The persistent training kernel and its launch: every step of a train() call, each step's forward
// pass, loss, backward pass and SGD, in one cooperative launch. The scheme is in gemm.cuh; the
// block tile in tile.cuh, the barrier in grid_barrier.cuh.
#pragma once

#include <algorithm>
#include <stdexcept>
#include <string>

#include "02_smem_tiling/smem_tile.cuh"
#include "15_persistent_step/grid_barrier.cuh"
#include "15_persistent_step/schedule.cuh"
#include "15_persistent_step/tile.cuh"
#include "cuda_check.cuh"
#include "mlp_device.cuh"
#include "occupancy.cuh"
#include "step_interface.cuh"

namespace mnist::persistent_step {

// The block tiles of one product, dealt out to the blocks in turn.
template <Op kOpA, Op kOpB, EpilogueKind kKind>
__device__ void multiply(const Product& x, uint8_t* smem) {
  for (int tile = blockIdx.x; tile < tiles_of<LayerTile>(x.p); tile += gridDim.x) {
    multiply_tile<kOpA, kOpB, kKind>(x, tile, smem);
  }
}

// The output layer's tiles, each followed by the loss of its rows: a tile holds whole rows of
// logits (kClasses <= kTileN), so the block that has just written them takes their softmax
// cross-entropy and dZ at once, and leaves their loss sum in loss_partials[tile] for block 0 to add
// up after the barrier, in tile order (the same bits in every run). The loss needs no phase.
__device__ inline void output_layer_and_loss(const Model& m, const Product& x, int rows,
                                             const int* batch_order, uint8_t* smem) {
  static_assert(kClasses <= kTileN, "a tile of the output layer holds whole rows of logits");
  const uint8_t* const labels = m.train_labels;
  __half* const grad = m.layer[m.layers - 1].buffers.grad;
  for (int tile = blockIdx.x; tile < tiles_of<LayerTile>(x.p); tile += gridDim.x) {
    multiply_tile<kForward.a, kForward.b, EpilogueKind::kBias>(x, tile, smem);
    const int row0 = tile * kTileM;  // a tile per row of tiles
    const LossSums sums = softmax_cross_entropy_block<kThreads>(
        m.logits + row0 * kClasses, [=](int r) { return int(labels[batch_order[row0 + r]]); },
        min(kTileM, rows - row0), rows, grad + row0 * kClasses);
    if (threadIdx.x == 0) m.loss_partials[tile] = sums.loss;
  }
}

// bias -= learning_rate * (column sums of dZ) for the layers a backward phase updates, each column
// summed row after row as every chapter's bias kernel does (bias_sgd_column, mlp_device.cuh), so
// the bits are the same. A block takes kBiasColumns columns of one layer, every row: its threads
// load them all at once into shared memory (one round trip to L2, not one per 16 rows), then a
// thread per column sums. The groups go to the blocks from the last down, the tiles from the
// first up, so that where a phase has fewer tiles than blocks the two run side by side.
constexpr int kBiasColumns = 8;
constexpr int kBiasLoads = kMaxStepBatch * kBiasColumns / kThreads;  // a thread's, at most
static_assert(kMaxStepBatch * kBiasColumns % kThreads == 0 &&
                  kMaxStepBatch * kBiasColumns * sizeof(__half) <= kSmemBytes,
              "a group's loads split evenly among the threads, and it fits in the ring's memory");

// Columns [col0, col0 + kBiasColumns) of layer y, through `staged`: the ring's shared memory,
// free between the phase's tiles (each ends at a block barrier) and the grid barrier.
__device__ inline void bias_sgd_group(const LayerBuffers& y, int col0, int rows,
                                      float learning_rate, __half* staged) {
  const int cols = min(kBiasColumns, y.out - col0);
  __half v[kBiasLoads];
#pragma unroll
  for (int i = 0; i < kBiasLoads; ++i) {  // every load issued before the first is used
    const int e = threadIdx.x + i * kThreads, r = e / kBiasColumns, c = e % kBiasColumns;
    v[i] = r < rows && c < cols ? y.grad[size_t(r) * y.out + col0 + c] : __half(0.0f);
  }
#pragma unroll
  for (int i = 0; i < kBiasLoads; ++i) staged[threadIdx.x + i * kThreads] = v[i];
  __syncthreads();  // the group, whole, before any column's sum
  if (threadIdx.x < cols) {
    bias_sgd_column(staged, y.bias + col0, kBiasColumns, threadIdx.x, rows, learning_rate);
  }
  __syncthreads();  // every sum read its column before the next group overwrites `staged`
}

__device__ inline void bias_sgd(const Model& m, const BackwardPhase& phase, int rows,
                                float learning_rate, uint8_t* smem) {
  __half* const staged = reinterpret_cast<__half*>(smem);
  int first = 0;  // the layer's first group in the count over both layers
#pragma unroll
  for (int i = 0; i < 2; ++i) {  // unrolled, as the phase's products are
    if (i < phase.sgd_count) {
      const LayerBuffers& y = m.layer[phase.sgd_layers[i]].buffers;
      const int groups = (y.out + kBiasColumns - 1) / kBiasColumns;
      for (int g = int(gridDim.x) - 1 - int(blockIdx.x) - first; g < groups; g += int(gridDim.x)) {
        if (g >= 0) bias_sgd_group(y, g * kBiasColumns, rows, learning_rate, staged);
      }
      first += groups;
    }
  }
}

// A tile of a weight gradient, through the SGD epilogue, on the 64 x 64 or the 32 x 32 tile.
__device__ inline void weight_tile(const Product& x, int tile, bool wide, uint8_t* smem) {
  constexpr Op kA = kBackwardWeight.a, kB = kBackwardWeight.b;
  if (wide) {
    multiply_tile<kA, kB, EpilogueKind::kSgd, WeightTile>(x, tile, smem);
  } else {
    multiply_tile<kA, kB, EpilogueKind::kSgd, LayerTile>(x, tile, smem);
  }
}

// Backward phase j (backward_phase_of in schedule.cuh): the tiles of its products as one list, so
// that the blocks share them out, then the biases of the layers it updates. The weight gradients
// take the 64 x 64 tile where the phase has enough of those to give every block one, else the
// 32 x 32 tile, which shares them among more blocks.
__device__ inline void backward_phase(const Model& m, int j, int rows, const int* batch_order,
                                      float learning_rate, uint8_t* smem) {
  const BackwardPhase phase = backward_phase_of(m.layers, j);
  Product dx, dw[2];
  int dx_tiles = 0, dw_tiles[2] = {0, 0}, wide_tiles = 0;
  if (phase.data_layer >= 1) {
    dx = data_product(m, phase.data_layer, rows);
    dx_tiles = tiles_of<LayerTile>(dx.p);
  }
#pragma unroll
  for (int i = 0; i < 2; ++i) {  // unrolled: dw and dw_tiles stay in registers
    if (i < phase.sgd_count) {
      dw[i] = weight_product(m, phase.sgd_layers[i], rows, batch_order, learning_rate);
      wide_tiles += tiles_of<WeightTile>(dw[i].p);
    }
  }
  const bool wide = wide_tiles >= int(gridDim.x);
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    if (i < phase.sgd_count) {
      dw_tiles[i] = wide ? tiles_of<WeightTile>(dw[i].p) : tiles_of<LayerTile>(dw[i].p);
    }
  }
  // Block b takes units b, b + blocks, ...: with more units than blocks, the first units % blocks
  // blocks take one more. A data tile's K is a layer's width, a weight tile's the batch, so the
  // data tiles go to the blocks with one unit fewer: list positions [dx_first, dx_first +
  // dx_tiles), the weight tiles before and after them. With a unit or none a block, they go first.
  const int units = dx_tiles + dw_tiles[0] + dw_tiles[1];
  const int dx_first =
      units > int(gridDim.x) ? min(units % int(gridDim.x), dw_tiles[0] + dw_tiles[1]) : 0;
  for (int unit = blockIdx.x; unit < units; unit += gridDim.x) {
    if (unit >= dx_first && unit < dx_first + dx_tiles) {
      multiply_tile<kBackwardData.a, kBackwardData.b, EpilogueKind::kReluGrad>(dx, unit - dx_first,
                                                                               smem);
      continue;
    }
    const int w = unit < dx_first ? unit : unit - dx_tiles;  // the weight tiles' own count
    if (w < dw_tiles[0]) {
      weight_tile(dw[0], w, wide, smem);
    } else {
      weight_tile(dw[1], w - dw_tiles[0], wide, smem);
    }
  }
  bias_sgd(m, phase, rows, learning_rate, smem);
}

// Steps *step_index, ..., *step_index + steps - 1 of the epoch. Per step, each phase ends at a grid
// barrier, since the next reads what every block wrote in it:
//   forward, layer 0 .. L-2   Y = ReLU(X W^T + b)
//   forward, layer L-1        the logits, and tile by tile their rows' loss and dZ
//   backward, phase 0 .. L-1  dX of layer L-1-j, SGD of layer L-j (and of layer 0 in the last)
__global__ void __launch_bounds__(kThreads)
    persistent_training_kernel(const __grid_constant__ Model m, int steps, float learning_rate) {
  extern __shared__ __align__(16) uint8_t smem[];
  // Read by every block before its first barrier, written by block 0 after its last.
  const int first = *m.step_index;
  for (int s = first; s < first + steps; ++s) {
    const int rows = min(m.batch, m.train_count - s * m.batch);
    const int* const batch_order = m.order + size_t(s) * m.batch;
    for (int l = 0; l < m.layers; ++l) {
      const Product x = forward_product(m, l, rows, batch_order);
      if (l < m.layers - 1) {
        multiply<kForward.a, kForward.b, EpilogueKind::kBiasRelu>(x, smem);
      } else {
        output_layer_and_loss(m, x, rows, batch_order, smem);
      }
      grid_barrier(m.barrier);  // the layer's output (and dZ), whole, before the next phase
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) {  // the step's loss, its tiles' sums in order
      float loss = 0.0f;
      for (int tile = 0; tile * kTileM < rows; ++tile) loss += m.loss_partials[tile];
      m.step_losses[s] = loss / rows;
    }
    for (int j = 0; j < m.layers; ++j) {
      backward_phase(m, j, rows, batch_order, learning_rate, smem);
      grid_barrier(m.barrier);  // dZ and the updated weights, before the next phase or step
    }
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) *m.step_index = first + steps;
}

// The trainer's scratch for the kernel (StepData::scratch): the grid barrier's word, then a loss
// sum per row tile of the output layer; 2 words a batch row hold both at any batch.
constexpr int kScratchWordsPerRow = 2;

// Why the persistent step does not take a model of `sizes` at `batch`, or empty (schedule.cuh).
inline std::string steps_refusal(const LayerSizes& sizes, int batch) {
  const std::string mine = "the persistent step takes ";
  const int layers = static_cast<int>(sizes.size()) - 1;
  int widest = 0;  // of the hidden layers
  for (size_t i = 1; i + 1 < sizes.size(); ++i) widest = std::max(widest, sizes[i]);
  if (layers > kMaxLayers) {
    return mine + "at most " + std::to_string(kMaxLayers) + " layers; the model has " +
           std::to_string(layers);
  }
  if (widest > kMaxWidth) {
    return mine + "hidden widths up to " + std::to_string(kMaxWidth) + "; the model has " +
           std::to_string(widest) + " (chapter 14's kernels train it a step at a time)";
  }
  if (batch > kMaxStepBatch) {
    return mine + "batches up to " + std::to_string(kMaxStepBatch) + ", not " +
           std::to_string(batch);
  }
  const int tiles = tiles_of<LayerTile>(batch, widest);
  if (tiles > kMaxActivationTiles) {
    return mine + "a batch and widest hidden layer of at most " +
           std::to_string(kMaxActivationTiles) + " tiles of 32 x 32; batch " +
           std::to_string(batch) + " x hidden " + std::to_string(widest) + " makes " +
           std::to_string(tiles) + " (chapter 14's kernels train it a step at a time)";
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
  static_cast<StepData&>(m) = b;
  m.layers = static_cast<int>(b.layers.size());
  for (int l = 0; l < m.layers; ++l) {
    const LayerBuffers& y = b.layers[l];
    const __half* input = l == 0 ? b.train_images : b.layers[l - 1].output;
    m.layer[l] = {
        y,
        smem_tiling::vectorizable(input, y.in) && smem_tiling::vectorizable(y.weight_operand, y.in),
        smem_tiling::vectorizable(y.grad, y.out)};
  }
  m.barrier = static_cast<unsigned*>(b.scratch);
  m.loss_partials = reinterpret_cast<float*>(m.barrier + 1);
  return m;
}

// The most 32 x 32 tiles any phase of a full step has: more blocks would only wait at the
// barriers.
inline int most_tiles(const Model& m) {
  const auto tiles = [](int rows, int cols) { return tiles_of<LayerTile>(rows, cols); };
  int most = 1;
  for (int l = 0; l < m.layers; ++l) most = std::max(most, tiles(m.batch, m.layer[l].buffers.out));
  for (int j = 0; j < m.layers; ++j) {
    const BackwardPhase phase = backward_phase_of(m.layers, j);
    int units = phase.data_layer >= 1 ? tiles(m.batch, m.layer[phase.data_layer].buffers.in) : 0;
    for (int i = 0; i < phase.sgd_count; ++i) {
      const LayerBuffers& y = m.layer[phase.sgd_layers[i]].buffers;
      units += tiles(y.out, y.in);
    }
    most = std::max(most, units);
  }
  return most;
}

// One cooperative launch of the kernel for `steps` steps: the runtime starts it only if every
// block is resident at once, which the grid barrier needs, and the grid is at most what the
// occupancy calculator says fits.
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
        "the persistent step needs a cooperative launch, which this GPU does not offer: run with "
        "--launch graph");
  }
  const Model m = model_of(buffers);
  cudaLaunchAttribute attribute = {};
  attribute.id = cudaLaunchAttributeCooperative;
  attribute.val.cooperative = 1;
  cudaLaunchConfig_t config = {dim3(std::min(resident, most_tiles(m))), dim3(kThreads),
                               size_t(kSmemBytes), stream, &attribute, 1};
  CUDA_CHECK(cudaLaunchKernelEx(&config, persistent_training_kernel, m, steps, learning_rate));
}

}  // namespace mnist::persistent_step
