// Chapter 16's persistent training kernel with chapter 17's tiles (tile.cuh), and the loss and the
// biases moved to where they cost least: the loss inside the output layer's phase, the biases
// loaded into shared memory a group of columns at a time, and each backward phase's tiles ordered
// so that the blocks with one tile fewer take the longer ones. The barrier, the schedule, the rule
// and the launch are chapter 16's.
#pragma once

#include "16_persistent_step/grid_barrier.cuh"
#include "16_persistent_step/launch.cuh"
#include "16_persistent_step/schedule.cuh"
#include "17_step_tile/tile.cuh"
#include "mlp_device.cuh"
#include "step_interface.cuh"

namespace mnist::step_tile {

// The block tiles of one product, dealt out to the blocks in turn.
template <Op kOpA, Op kOpB, EpilogueKind kKind>
__device__ void multiply(const StepProduct& x, uint8_t* smem) {
  for (int tile = blockIdx.x; tile < tiles_of<LayerTile>(x.p); tile += gridDim.x) {
    multiply_step_tile<kOpA, kOpB, kKind>(x, tile, smem);
  }
}

// The loss sums of the output layer's row tiles: the scratch after the barrier's word.
__device__ inline float* loss_partials(const Model& m) {
  return reinterpret_cast<float*>(m.barrier + 1);
}

// The output layer's tiles, each followed by the loss of its rows: a tile holds whole rows of
// logits (kClasses <= kTileN), so the block that has just written them takes their softmax
// cross-entropy and dZ at once, and leaves their loss sum in loss_partials(m)[tile] for block 0 to
// add up after the barrier, in tile order (the same bits in every run). The loss needs no phase.
__device__ inline void output_layer_and_loss(const Model& m, const StepProduct& x, int rows,
                                             const int* batch_order, uint8_t* smem) {
  static_assert(kClasses <= kTileN, "a tile of the output layer holds whole rows of logits");
  const uint8_t* const labels = m.train_labels;
  __half* const grad = m.layer[m.layers - 1].buffers.grad;
  for (int tile = blockIdx.x; tile < tiles_of<LayerTile>(x.p); tile += gridDim.x) {
    multiply_step_tile<kForward.a, kForward.b, EpilogueKind::kBias>(x, tile, smem);
    const int row0 = tile * kTileM;  // a tile per row of tiles
    const LossSums sums = softmax_cross_entropy_block<kThreads>(
        m.logits + row0 * kClasses, [=](int r) { return int(labels[batch_order[row0 + r]]); },
        min(kTileM, rows - row0), rows, grad + row0 * kClasses);
    if (threadIdx.x == 0) loss_partials(m)[tile] = sums.loss;
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
__device__ inline void weight_tile(const StepProduct& x, int tile, bool wide, uint8_t* smem) {
  constexpr Op kA = kBackwardWeight.a, kB = kBackwardWeight.b;
  if (wide) {
    multiply_step_tile<kA, kB, EpilogueKind::kSgd, WeightTile>(x, tile, smem);
  } else {
    multiply_step_tile<kA, kB, EpilogueKind::kSgd, LayerTile>(x, tile, smem);
  }
}

// Backward phase j (backward_phase_of in schedule.cuh): the tiles of its products as one list, so
// that the blocks share them out, then the biases of the layers it updates. The weight gradients
// take the 64 x 64 tile where the phase has enough of those to give every block one, else the
// 32 x 32 tile, which shares them among more blocks.
__device__ inline void backward_phase(const Model& m, int j, int rows, const int* batch_order,
                                      float learning_rate, uint8_t* smem) {
  const BackwardPhase phase = backward_phase_of(m.layers, j);
  StepProduct dx, dw[2];
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
      multiply_step_tile<kBackwardData.a, kBackwardData.b, EpilogueKind::kReluGrad>(
          dx, unit - dx_first, smem);
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
      const StepProduct x = forward_product(m, l, rows, batch_order);
      if (l < m.layers - 1) {
        multiply<kForward.a, kForward.b, EpilogueKind::kBiasRelu>(x, smem);
      } else {
        output_layer_and_loss(m, x, rows, batch_order, smem);
      }
      grid_barrier(m.barrier);  // the layer's output (and dZ), whole, before the next phase
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) {  // the step's loss, its tiles' sums in order
      float loss = 0.0f;
      for (int tile = 0; tile * kTileM < rows; ++tile) loss += loss_partials(m)[tile];
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

// Chapter 16's cooperative launch, its grid at most the tiles of the largest phase.
inline void train_steps(const StepBuffers& buffers, int steps, float learning_rate,
                        cudaStream_t stream) {
  launch_steps<persistent_training_kernel, kSmemBytes>(buffers, steps, learning_rate, stream,
                                                       most_tiles(model_of(buffers)));
}

}  // namespace mnist::step_tile
