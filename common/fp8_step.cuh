// The FP8 chapters' training step (StepTraining, step_interface.cuh), as trainer.cu is the fp16
// chapters': the hidden layers multiply e4m3 operands through the chapter's launch_fp8_gemm
// (fp8_interface.cuh). Every product of a hidden layer reads fp8 copies that the kernel before it
// wrote, quantised at the tensor's delayed scale (fp8_scaling.cuh), with the tensor's amax:
//
//   gather_inputs     images (fp16)            -> X_0, X_0^T                  scale of X_0
//   forward l         X_l . W_l^T              -> X_{l+1}, X_{l+1}^T          kQuantise
//   forward, last     X_h . W_h^T              -> fp16 ReLU(Z + b)            kBiasRelu
//   output layer      fp16, the chapter's gemm(): logits, loss, its SGD
//   output_backward   dZ_out . W_out, ReLU'    -> dZ_h, dZ_h^T                scale of dZ_h
//   backward data l   dZ_l . (W_l^T)^T, ReLU'  -> dZ_{l-1}, dZ_{l-1}^T        kQuantise
//   weight update l   dZ_l^T . (X_l^T)^T       -> masters, W_l, W_l^T         kUpdate
//   biases, then every tensor's amax into its history (advance_scaling)
//
// A chapter whose kernel stores C but does not quantise it (Fp8Epilogues::kSeparate) has each
// kQuantise and kUpdate product store fp32 C into a scratch tensor that finish_fp8_kernel then
// reads (launch_fp8_separately).
//
// The transposed copies exist because FP8 wgmma reads only K-major operands. The batch's last
// rows past a short step's end stay zero in every gradient, so the weight gradients multiply over
// the whole batch (K a multiple of 16) and the rows past the end add nothing.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "cuda_check.cuh"
#include "dataset.hpp"
#include "fp8_interface.cuh"
#include "fp8_quantise.cuh"
#include "fp8_scaling.cuh"
#include "gemm_interface.cuh"
#include "mlp_kernels.cuh"
#include "model.hpp"
#include "step_interface.cuh"

namespace mnist {

// A chapter's FP8 product: fp8_interface.cuh.
using Fp8Launch = void (*)(const Fp8Problem& problem, const Fp8Epilogue& epilogue,
                           cudaStream_t stream);

// Whether the chapter's kernel writes the quantised copies itself (kFused) or leaves them to
// finish_fp8_kernel (kSeparate).
enum class Fp8Epilogues { kSeparate, kFused };

// A hidden layer's fp8 copies (e4m3 codes).
struct Fp8Layer {
  uint8_t* w;     // out x in, the forward's operand
  uint8_t* w_t;   // in x out, backward data's; null for layer 0, which has none
  uint8_t* x;     // batch x in, the layer's input
  uint8_t* x_t;   // in x batch
  uint8_t* dz;    // batch x out, the gradient at its output
  uint8_t* dz_t;  // out x batch
};

// StepData::model_scratch, laid out for a model: the hidden layers' copies, three scaling states a
// hidden layer (the weights' first, so that prepare() can advance them alone), the batch's labels,
// the output layer's BiasUpdate, the workspace of its fp16 products (gemm_interface.cuh: split
// K for the logits, K = the last hidden width, as the trainer gives every chapter's products) and,
// kSeparate, C.
struct Fp8Model {
  std::vector<Fp8Layer> layers;
  ScalingState* scaling = nullptr;
  uint8_t* labels = nullptr;
  BiasUpdate* output_bias = nullptr;
  float* workspace = nullptr;  // kGemmWorkspaceFloats
  float* c = nullptr;          // kSeparate: as large as the step's largest hidden product
  size_t bytes = 0;
  int hidden() const { return int(layers.size()); }
  ScalingState* weights(int l) const { return scaling + l; }
  ScalingState* input(int l) const { return scaling + hidden() + l; }
  ScalingState* gradient(int l) const { return scaling + 2 * hidden() + l; }
};

// From `base` (null: only the bytes). Every buffer starts on 128 bytes, as TMA wants.
inline Fp8Model fp8_model(const LayerSizes& sizes, int batch, Fp8Epilogues epilogues, void* base) {
  Fp8Model m;
  uint8_t* const start = static_cast<uint8_t*>(base);
  const auto take = [&](size_t bytes) {
    uint8_t* p = start ? start + m.bytes : nullptr;
    m.bytes += (bytes + 127) / 128 * 128;
    return p;
  };
  const int hidden = int(sizes.size()) - 2;
  size_t largest = 0;
  for (int l = 0; l < hidden; ++l) {
    const size_t in = sizes[l], out = sizes[l + 1];
    largest = std::max({largest, out * in, batch * out, batch * in});
    Fp8Layer f;
    f.w = take(out * in);
    f.w_t = l > 0 ? take(in * out) : nullptr;
    f.x = take(batch * in);
    f.x_t = take(in * batch);
    f.dz = take(batch * out);
    f.dz_t = take(out * batch);
    m.layers.push_back(f);
  }
  m.scaling = reinterpret_cast<ScalingState*>(take(3 * hidden * sizeof(ScalingState)));
  m.labels = take(batch);
  m.output_bias = reinterpret_cast<BiasUpdate*>(take(sizeof(BiasUpdate)));
  m.workspace = reinterpret_cast<float*>(take(kGemmWorkspaceFloats * sizeof(float)));
  if (epilogues == Fp8Epilogues::kSeparate) {
    m.c = reinterpret_cast<float*>(take(largest * sizeof(float)));
  }
  return m;
}

template <Fp8Epilogues kEpilogues>
size_t fp8_model_bytes(const LayerSizes& sizes, int batch) {
  return fp8_model(sizes, batch, kEpilogues, nullptr).bytes;
}

// Empty where the FP8 step trains the model at `batch` (a chapter's kernels may refuse more).
inline std::string fp8_steps_refusal(const LayerSizes& sizes, int batch) {
  if (sizes.size() < 3) return "the FP8 step needs a hidden layer";
  if (batch % 16 != 0) {
    return "the FP8 step needs a batch that is a multiple of 16 (K of the weight gradients)";
  }
  for (size_t l = 1; l + 1 < sizes.size(); ++l) {
    if (sizes[l] % 16 != 0) {
      return "the FP8 step needs hidden widths that are multiples of 16 (" +
             std::to_string(sizes[l]) + " is not)";
    }
  }
  return "";
}

constexpr int kQuantiseTile = 64;  // quantise_tile's
constexpr int kQuantiseThreads = 256;

inline dim3 quantise_grid(int rows, int width) {
  return dim3((width + kQuantiseTile - 1) / kQuantiseTile,
              (rows + kQuantiseTile - 1) / kQuantiseTile);
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890

// X_0 from the step's images (order null: the first rows of the training set), and the labels.
// A block a row, a thread a pixel pair.
static __global__ void gather_inputs_kernel(const __half* images, const uint8_t* labels,
                                            const int* order, const int* step, int batch,
                                            uint8_t* x, uint8_t* x_t, ScalingState* scaling,
                                            uint8_t* batch_labels) {
  const int r = blockIdx.x;
  const size_t source = order ? size_t(order[*step * batch + r]) : size_t(r);
  const __half2* image = reinterpret_cast<const __half2*>(images + source * kPixels);
  if (threadIdx.x == 0) batch_labels[r] = labels[source];
  const float scale = scaling->scale;
  float amax = 0.0f;
  for (int p = threadIdx.x; p < kPixels / 2; p += blockDim.x) {
    const float2 v = __half22float2(image[p]);
    amax = fmaxf(amax, fmaxf(fabsf(v.x), fabsf(v.y)));
    store_codes(quantise_pair(v.x, v.y, scale), true, x + size_t(r) * kPixels + 2 * p, true,
                x_t + size_t(2 * p) * batch + r, batch);
  }
  record_amax(&scaling->amax_bits, amax);
  note_quantised(scaling, scale);
}

// The block's tile of a tensor's fp8 copies, kQuantiseTile square (blockIdx.x: columns, y: rows):
// x (rows x width) and x_t (width rows t_pitch apart; null: none), values(row, j, two) the values
// of the pair j, j + 1 of row `row` (the second 0 unless `two`: j + 1 < width), their amax into
// *scaling. A thread a pair, its two codes stored in x's row and staged; the staged columns then
// leave as rows of x_t, 4 bytes a thread (stored from the registers, they would be single bytes
// t_pitch apart).
template <class Values>
__device__ void quantise_tile(int rows, int width, const Values& values, uint8_t* x, uint8_t* x_t,
                              int t_pitch, ScalingState* scaling) {
  __shared__ __align__(4) uint8_t staged[kQuantiseTile][kQuantiseTile + 4];  // + 4: rows in
                                                                             // different banks
  const int r0 = blockIdx.y * kQuantiseTile, j0 = blockIdx.x * kQuantiseTile;
  const float scale = scaling->scale;
  float amax = 0.0f;
  for (int e = threadIdx.x; e < kQuantiseTile * kQuantiseTile / 2; e += blockDim.x) {
    const int r = e / (kQuantiseTile / 2), c = e % (kQuantiseTile / 2) * 2, row = r0 + r,
              j = j0 + c;
    if (row >= rows || j >= width) continue;
    const bool two = j + 1 < width;
    const float2 v = values(row, j, two);
    amax = fmaxf(amax, fmaxf(fabsf(v.x), fabsf(v.y)));
    const uint16_t codes = quantise_pair(v.x, v.y, scale);
    store_codes(codes, two, x + size_t(row) * width + j, width % 2 == 0, nullptr, 0);
    staged[c][r] = uint8_t(codes);
    staged[c + 1][r] = uint8_t(codes >> 8);
  }
  record_amax(&scaling->amax_bits, amax);
  note_quantised(scaling, scale);
  if (!x_t) return;
  __syncthreads();
  for (int e = threadIdx.x; e < kQuantiseTile * kQuantiseTile / 4; e += blockDim.x) {
    const int c = e / (kQuantiseTile / 4), r = e % (kQuantiseTile / 4) * 4, j = j0 + c,
              row = r0 + r;
    if (j >= width || row >= rows) continue;
    uint8_t* to = x_t + size_t(j) * t_pitch + row;
    if (t_pitch % 4 == 0 && row + 4 <= rows) {
      *reinterpret_cast<uint32_t*>(to) = *reinterpret_cast<const uint32_t*>(&staged[c][r]);
    } else {
      for (int b = 0; b < 4 && row + b < rows; ++b) to[b] = staged[c][r + b];
    }
  }
}

// The last hidden layer's gradient: dZ = (dZ_out . W_out) where its fp16 output is > 0, zero in
// rows [rows, batch).
static __global__ void output_backward_kernel(const __half* grad, const __half* w,
                                              const __half* output, int rows, int batch, int width,
                                              uint8_t* dz, uint8_t* dz_t, ScalingState* scaling) {
  const auto gradient = [&](int row, int j, bool) {
    float g0 = 0.0f, g1 = 0.0f;
    if (row < rows) {
      for (int k = 0; k < kClasses; ++k) {
        const float d = __half2float(grad[row * kClasses + k]);
        g0 += d * __half2float(w[size_t(k) * width + j]);
        g1 += d * __half2float(w[size_t(k) * width + j + 1]);
      }
      if (!(__half2float(output[size_t(row) * width + j]) > 0.0f)) g0 = 0.0f;
      if (!(__half2float(output[size_t(row) * width + j + 1]) > 0.0f)) g1 = 0.0f;
    }
    return make_float2(g0, g1);
  };
  quantise_tile(batch, width, gradient, dz, dz_t, batch, scaling);
}

// What an Fp8Epilogue of kind kQuantise or kUpdate (fp8_interface.cuh) makes of C (m x n fp32),
// as the fused epilogues do: the same roundings, so the same codes.
static __global__ void finish_fp8_kernel(const float* c, int m, int n, const Fp8Epilogue e) {
  const auto value = [&](int row, int j, bool two) {
    const size_t at = size_t(row) * n + j;
    float v0 = c[at], v1 = two ? c[at + 1] : 0.0f;
    if (e.kind == Fp8EpilogueKind::kUpdate) {
      v0 = __fmaf_rn(-e.learning_rate, v0, e.master[at]);
      v1 = two ? __fmaf_rn(-e.learning_rate, v1, e.master[at + 1]) : 0.0f;
      e.master[at] = v0;
      if (two) e.master[at + 1] = v1;
    } else if (e.active) {
      v0 = e.active[at] - 1u < 0x7Fu ? v0 : 0.0f;  // a code > 0: sign clear, not zero
      v1 = two && e.active[at + 1] - 1u < 0x7Fu ? v1 : 0.0f;
    } else {
      v0 = fmaxf(__fadd_rn(v0, e.bias[j]), 0.0f);
      v1 = two ? fmaxf(__fadd_rn(v1, e.bias[j + 1]), 0.0f) : 0.0f;
    }
    return make_float2(v0, v1);
  };
  quantise_tile(m, n, value, e.x, e.x_t, e.t_pitch, e.scaling);
}

// bias -= learning_rate * (column sums of dZ), dZ read from its transposed copy at its scale: a
// warp a column, whose batch codes are one row of dZ^T, read by the lanes side by side.
static __global__ void fp8_bias_sgd_kernel(const uint8_t* dz_t, int batch, int width,
                                           const ScalingState* scaling, float* bias,
                                           float learning_rate) {
  const int j = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;
  if (j >= width) return;
  const uint16_t* row = reinterpret_cast<const uint16_t*>(dz_t + size_t(j) * batch);
  float sum = 0.0f;
  for (int r = lane; r < batch / 2; r += 32) {
    const float2 v = dequantise_pair(row[r]);
    sum += v.x + v.y;
  }
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xFFFFFFFFu, sum, offset);
  if (lane == 0) bias[j] -= learning_rate * (sum * scaling->unscale);
}

// The initial fp8 copies of a layer's weights, and their amax. A thread a pair.
static __global__ void quantise_weights_kernel(const float* master, int out, int in, uint8_t* w,
                                               uint8_t* w_t, ScalingState* scaling) {
  const size_t i = 2 * (size_t(blockIdx.x) * blockDim.x + threadIdx.x);
  const bool inside = i < size_t(out) * in;
  const float w0 = inside ? master[i] : 0.0f, w1 = inside ? master[i + 1] : 0.0f;
  const float scale = scaling->scale;
  if (inside) {
    const size_t row = i / in, col = i % in;
    store_codes(quantise_pair(w0, w1, scale), true, w + i, true,
                w_t ? w_t + col * out + row : nullptr, out);
  }
  record_amax(&scaling->amax_bits, fmaxf(fabsf(w0), fabsf(w1)));
  note_quantised(scaling, scale);
}

#else

static __global__ void gather_inputs_kernel(const __half*, const uint8_t*, const int*, const int*,
                                            int, uint8_t*, uint8_t*, ScalingState*, uint8_t*) {
  __trap();
}
static __global__ void output_backward_kernel(const __half*, const __half*, const __half*, int, int,
                                              int, uint8_t*, uint8_t*, ScalingState*) {
  __trap();
}
static __global__ void finish_fp8_kernel(const float*, int, int, const Fp8Epilogue) {
  __trap();
}
static __global__ void fp8_bias_sgd_kernel(const uint8_t*, int, int, const ScalingState*, float*,
                                           float) {
  __trap();
}
static __global__ void quantise_weights_kernel(const float*, int, int, uint8_t*, uint8_t*,
                                               ScalingState*) {
  __trap();
}

#endif

// A kQuantise or kUpdate product on a kernel that only stores C: C into `c` (m x n floats), then
// finish_fp8_kernel.
template <Fp8Launch kLaunch>
void launch_fp8_separately(const Fp8Problem& p, const Fp8Epilogue& epilogue, float* c,
                           cudaStream_t stream) {
  Fp8Epilogue store;
  store.c = c;
  kLaunch(p, store, stream);
  finish_fp8_kernel<<<quantise_grid(p.m, p.n), kQuantiseThreads, 0, stream>>>(c, p.m, p.n,
                                                                              epilogue);
  CUDA_CHECK(cudaGetLastError());
}

// One step over `rows` rows: the trainer's step *step_index, or, warm_up, the first rows of the
// training set, its loss not recorded and the step index left alone.
template <Fp8Launch kLaunch, Fp8Epilogues kEpilogues>
void enqueue_fp8_step(const StepBuffers& b, const Fp8Model& m, int rows, float learning_rate,
                      bool warm_up, cudaStream_t stream) {
  const int hidden = m.hidden(), batch = b.batch;
  const auto multiply = [&](const Fp8Problem& p, const Fp8Epilogue& epilogue) {
    if (kEpilogues == Fp8Epilogues::kSeparate && epilogue.kind != Fp8EpilogueKind::kBiasRelu) {
      launch_fp8_separately<kLaunch>(p, epilogue, m.c, stream);
    } else {
      kLaunch(p, epilogue, stream);
    }
  };
  const LayerBuffers& top = b.layers[hidden];
  const __half* const top_input = b.layers[hidden - 1].output;
  gather_inputs_kernel<<<rows, 128, 0, stream>>>(
      b.train_images, b.train_labels, warm_up ? nullptr : b.order, b.step_index, batch,
      m.layers[0].x, m.layers[0].x_t, m.input(0), m.labels);
  CUDA_CHECK(cudaGetLastError());
  for (int l = 0; l < hidden; ++l) {
    const LayerBuffers& y = b.layers[l];
    const Fp8Problem p{rows,
                       y.out,
                       y.in,
                       m.layers[l].x,
                       m.layers[l].w,
                       &m.input(l)->unscale,
                       &m.weights(l)->unscale};
    Fp8Epilogue next;
    next.bias = y.bias;
    if (l + 1 < hidden) {
      next.kind = Fp8EpilogueKind::kQuantise;
      next.x = m.layers[l + 1].x;
      next.x_t = m.layers[l + 1].x_t;
      next.t_pitch = batch;
      next.scaling = m.input(l + 1);
    } else {
      next.kind = Fp8EpilogueKind::kBiasRelu;
      next.out = y.output;
    }
    multiply(p, next);
  }
  GemmProblem logits{rows, top.out, top.in, top_input, kForward.a, top.weight_operand, kForward.b};
  logits.epilogue.kind = EpilogueKind::kBias;
  logits.epilogue.bias = top.bias;
  logits.c = b.logits;
  logits.workspace = m.workspace;
  logits.workspace_floats = kGemmWorkspaceFloats;
  gemm(logits, stream);
  LossOutputs loss;
  loss.grad = top.grad;
  loss.step_losses = warm_up ? nullptr : b.step_losses;
  loss.step = b.step_index;
  softmax_cross_entropy(b.logits, m.labels, rows, loss, stream);

  // The output layer's gradient into the last hidden layer, before its weights move.
  const Fp8Layer& last = m.layers[hidden - 1];
  output_backward_kernel<<<quantise_grid(batch, top.in), kQuantiseThreads, 0, stream>>>(
      top.grad, top.weight_operand, top_input, rows, batch, top.in, last.dz, last.dz_t,
      m.gradient(hidden - 1));
  CUDA_CHECK(cudaGetLastError());
  GemmProblem top_dw{top.out,   top.in,           rows, top.grad, kBackwardWeight.a,
                     top_input, kBackwardWeight.b};
  top_dw.epilogue.kind = EpilogueKind::kSgd;
  top_dw.epilogue.master = top.weights;
  top_dw.epilogue.out = top.weight_operand;
  top_dw.epilogue.learning_rate = learning_rate;
  top_dw.workspace = m.workspace;
  top_dw.workspace_floats = kGemmWorkspaceFloats;
  gemm(top_dw, stream);

  for (int l = hidden - 1; l >= 0; --l) {
    const LayerBuffers& y = b.layers[l];
    const Fp8Layer& f = m.layers[l];
    if (l > 0) {  // reads W_l^T before the update below rewrites it
      const Fp8Problem dx{
          batch, y.in, y.out, f.dz, f.w_t, &m.gradient(l)->unscale, &m.weights(l)->unscale};
      Fp8Epilogue below;
      below.kind = Fp8EpilogueKind::kQuantise;
      below.active = f.x;
      below.x = m.layers[l - 1].dz;
      below.x_t = m.layers[l - 1].dz_t;
      below.t_pitch = batch;
      below.scaling = m.gradient(l - 1);
      multiply(dx, below);
    }
    const Fp8Problem dw{
        y.out, y.in, batch, f.dz_t, f.x_t, &m.gradient(l)->unscale, &m.input(l)->unscale};
    Fp8Epilogue update;
    update.kind = Fp8EpilogueKind::kUpdate;
    update.master = y.weights;
    update.learning_rate = learning_rate;
    update.x = f.w;
    update.x_t = f.w_t;
    update.t_pitch = y.out;
    update.scaling = m.weights(l);
    multiply(dw, update);
    constexpr int kWarps = kQuantiseThreads / 32;
    fp8_bias_sgd_kernel<<<(y.out + kWarps - 1) / kWarps, kWarps * 32, 0, stream>>>(
        f.dz_t, batch, y.out, m.gradient(l), y.bias, learning_rate);
    CUDA_CHECK(cudaGetLastError());
  }
  bias_sgd(m.output_bias, 1, top.out, rows, learning_rate, stream);
  advance_scaling(m.scaling, 3 * hidden, stream);
}

inline Fp8Model fp8_model_of(const StepBuffers& b, Fp8Epilogues epilogues) {
  LayerSizes sizes;
  for (const LayerBuffers& layer : b.layers) sizes.push_back(layer.in);
  sizes.push_back(b.layers.back().out);
  return fp8_model(sizes, b.batch, epilogues, b.model_scratch);
}

template <Fp8Launch kLaunch, Fp8Epilogues kEpilogues>
void fp8_train_steps(const StepBuffers& b, int steps, float learning_rate, cudaStream_t stream) {
  const Fp8Model m = fp8_model_of(b, kEpilogues);
  for (int s = b.next_step; s < b.next_step + steps; ++s) {
    enqueue_fp8_step<kLaunch, kEpilogues>(b, m, std::min(b.batch, b.train_count - s * b.batch),
                                          learning_rate, false, stream);
  }
}

// Before the first step: the weights' first fp8 copies (scale 1, no history yet), then one step at
// learning rate 0 on the first batch of the training set, whose only effect is that every tensor
// has an amax history when the first step quantises it. CPU reference: the same warm-up.
template <Fp8Launch kLaunch, Fp8Epilogues kEpilogues>
void fp8_prepare(const StepBuffers& b, cudaStream_t stream) {
  const Fp8Model m = fp8_model_of(b, kEpilogues);
  const int hidden = m.hidden();
  reset_scaling(m.scaling, 3 * hidden, stream);
  for (int l = 0; l < hidden; ++l) {
    const LayerBuffers& y = b.layers[l];
    const size_t pairs = size_t(y.out) * y.in / 2;
    quantise_weights_kernel<<<unsigned((pairs + 255) / 256), 256, 0, stream>>>(
        y.weights, y.out, y.in, m.layers[l].w, m.layers[l].w_t, m.weights(l));
    CUDA_CHECK(cudaGetLastError());
  }
  advance_scaling(m.scaling, hidden, stream);  // the weights' states come first
  const LayerBuffers& top = b.layers[hidden];
  const BiasUpdate output_bias{top.grad, top.bias, top.out};
  CUDA_CHECK(cudaMemcpyAsync(m.output_bias, &output_bias, sizeof output_bias,
                             cudaMemcpyHostToDevice, stream));
  enqueue_fp8_step<kLaunch, kEpilogues>(b, m, std::min(b.batch, b.train_count), 0.0f, true, stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));  // output_bias is on this stack
}

// Evaluation multiplies fp16 weights: those of the hidden layers from their masters.
inline void fp8_before_evaluation(const StepBuffers& b, cudaStream_t stream) {
  for (size_t l = 0; l + 1 < b.layers.size(); ++l) {
    to_half(b.layers[l].weights, size_t(b.layers[l].in) * b.layers[l].out,
            b.layers[l].weight_operand, stream);
  }
}

// A chapter's kStepTraining: this step on its launch_fp8_gemm, for the models `refusal` takes.
template <Fp8Launch kLaunch, Fp8Epilogues kEpilogues,
          std::string (*kRefusal)(const LayerSizes&, int)>
constexpr StepTraining fp8_step_training() {
  return {kRefusal,
          fp8_train_steps<kLaunch, kEpilogues>,
          0,
          fp8_model_bytes<kEpilogues>,
          fp8_prepare<kLaunch, kEpilogues>,
          fp8_before_evaluation,
          true};
}

}  // namespace mnist
