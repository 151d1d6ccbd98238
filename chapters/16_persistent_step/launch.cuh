// The rule of schedule.cuh and the cooperative launch of any kernel(Model, steps, learning_rate)
// on 32 x 32 tiles: this chapter's (steps.cuh) and later ones that change only what a phase does.
#pragma once

#include <algorithm>
#include <climits>
#include <stdexcept>
#include <string>

#include "02_smem_tiling/smem_tile.cuh"
#include "16_persistent_step/schedule.cuh"
#include "cuda_check.cuh"
#include "occupancy.cuh"
#include "step_interface.cuh"

namespace mnist::persistent_step {

// Why the persistent step does not take a model of `sizes` at `batch`, or empty (schedule.cuh).
inline std::string steps_refusal(const LayerSizes& sizes, int batch) {
  const auto refuse = [](const std::string& what, int most, int has) {
    return "the persistent step takes " + what + " up to " + std::to_string(most) + ", not " +
           std::to_string(has);
  };
  const std::string elsewhere = " (chapter 14's kernels train it a step at a time)";
  const int layers = static_cast<int>(sizes.size()) - 1;
  int widest = 0;  // of the hidden layers
  for (size_t i = 1; i + 1 < sizes.size(); ++i) widest = std::max(widest, sizes[i]);
  if (layers > kMaxLayers) return refuse("layers", kMaxLayers, layers);
  if (widest > kMaxWidth) return refuse("hidden widths", kMaxWidth, widest) + elsewhere;
  if (batch > kMaxStepBatch) return refuse("batches", kMaxStepBatch, batch);
  const int tiles = tiles_of(batch, widest);
  if (tiles > kMaxActivationTiles) {
    return refuse("32 x 32 tiles of batch x widest hidden layer", kMaxActivationTiles, tiles) +
           ": batch " + std::to_string(batch) + " x hidden " + std::to_string(widest) + elsewhere;
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
  return m;
}

using TrainingKernel = void (*)(Model, int, float);

// One cooperative launch of kKernel for `steps` steps: the runtime starts it only if every block
// is resident at once, as the grid barrier needs; one block per SM where that fits, at most
// `most_blocks`.
template <TrainingKernel kKernel, int kSmem>
void launch_steps(const StepBuffers& buffers, int steps, float learning_rate, cudaStream_t stream,
                  int most_blocks = INT_MAX) {
  const std::string why = steps_refusal(sizes_of(buffers), buffers.batch);
  if (!why.empty()) throw std::invalid_argument(why);  // and Model's arrays would not hold it
  static const int resident = resident_blocks(kKernel, kThreads, kSmem);  // one GPU throughout
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
  const dim3 grid(std::min({resident, multiprocessors(), most_blocks}));
  cudaLaunchConfig_t config = {grid, dim3(kThreads), size_t(kSmem), stream, &attribute, 1};
  CUDA_CHECK(cudaLaunchKernelEx(&config, kKernel, m, steps, learning_rate));
}

}  // namespace mnist::persistent_step
