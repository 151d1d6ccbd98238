#include "trainer.cuh"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>

#include "cuda_check.cuh"
#include "gemm_interface.cuh"
#include "mlp_kernels.cuh"

namespace mnist {
namespace {

// The batch, where it has a row at least. The row buffers of a forward pass hold the larger of a
// batch and an evaluation chunk (kEvalChunk): max_rows_.
int checked_batch(int batch) {
  if (batch < 1) throw std::invalid_argument("Trainer: batch must be positive");
  return batch;
}

std::vector<__half> to_half_host(const std::vector<float>& x) {
  std::vector<__half> out(x.size());
  std::transform(x.begin(), x.end(), out.begin(), [](float v) { return __float2half_rn(v); });
  return out;
}

template <class T>
void upload(T* device, const std::vector<T>& host, cudaStream_t stream) {
  CUDA_CHECK(cudaMemcpyAsync(device, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice,
                             stream));
}

}  // namespace

StepLaunch step_launch_for(const LayerSizes& sizes, int batch,
                           std::optional<StepLaunch> requested) {
  const std::string why = chapter_steps_refusal(sizes, batch);
  if (requested == StepLaunch::kPersistent && !why.empty()) {
    throw std::invalid_argument(std::string("--launch ") + step_launch_name(*requested) + ": " +
                                why);
  }
  if (!chapter_unsupported_here().empty()) throw std::runtime_error(chapter_unsupported_here());
  if (requested) return *requested;
  if (why.empty()) return StepLaunch::kPersistent;
  return chapter_replays_step_as_graph() ? StepLaunch::kGraph : StepLaunch::kHost;
}

const char* step_launch_name(StepLaunch launch) {
  switch (launch) {
    case StepLaunch::kHost:
      return "host";
    case StepLaunch::kGraph:
      return "graph";
    case StepLaunch::kPersistent:
      return "persistent";
  }
  return "?";
}

size_t Trainer::scratch_words() const {
  return static_cast<size_t>(chapter_step_scratch_words_per_row()) * step_.batch;
}

void Trainer::carve(DeviceArena& arena) {
  const size_t train_pixels = static_cast<size_t>(step_.train_count) * kPixels;
  const size_t test_pixels = static_cast<size_t>(test_count_) * kPixels;
  step_.train_images = arena.take<__half>(train_pixels);
  test_images_ = arena.take<__half>(test_pixels);
  step_.train_labels = arena.take<uint8_t>(step_.train_count);
  test_labels_ = arena.take<uint8_t>(test_count_);
  step_.order = arena.take<int>(step_.train_count);
  step_.step_index = arena.take<int>(1);
  batch_x_ = arena.take<__half>(static_cast<size_t>(max_rows_) * kPixels);
  batch_labels_ = arena.take<uint8_t>(max_rows_);
  size_t largest_product = 0;
  for (Layer& layer : step_.layers) {
    const size_t params = static_cast<size_t>(layer.in) * layer.out;
    const size_t outputs = static_cast<size_t>(max_rows_) * layer.out;
    layer.weights = arena.take<float>(params);
    layer.bias = arena.take<float>(layer.out);
    layer.weight_operand = arena.take<__half>(params);
    layer.output = &layer == &step_.layers.back() ? nullptr : arena.take<__half>(outputs);
    layer.grad = arena.take<__half>(static_cast<size_t>(step_.batch) * layer.out);
    largest_product = std::max({largest_product, params, outputs});
  }
  step_.logits = arena.take<float>(static_cast<size_t>(max_rows_) * kClasses);
  // A chapter that fuses the epilogues never writes a product: Z, dX and dW exist only in its
  // registers.
  product_ = chapter_fuses_epilogue() ? nullptr : arena.take<float>(largest_product);
  gemm_workspace_ = arena.take<float>(kGemmWorkspaceFloats);
  bias_updates_ = arena.take<BiasUpdate>(step_.layers.size());
  step_.step_losses = arena.take<float>(steps_per_epoch_);
  step_.scratch = arena.take<uint32_t>(scratch_words());
  step_.model_scratch = arena.take<uint8_t>(model_scratch_bytes_);
  eval_loss_sum_ = arena.take<double>(1);
  eval_correct_ = arena.take<int>(1);
}

Trainer::Trainer(const ModelParams& init, const Dataset& data, int batch, StepLaunch launch)
    : sizes_(init.sizes),
      test_count_(data.test.count),
      max_rows_(std::max(checked_batch(batch), kEvalChunk)),
      steps_per_epoch_((data.train.count + batch - 1) / batch),
      launch_(launch),
      model_scratch_bytes_(launch == StepLaunch::kPersistent
                               ? chapter_model_scratch_bytes(init.sizes, checked_batch(batch))
                               : 0) {
  step_.batch = batch;
  step_.train_count = data.train.count;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  for (int l = 0; l < init.layers(); ++l) {
    Layer layer;
    layer.in = sizes_[l];
    layer.out = sizes_[l + 1];
    step_.layers.push_back(layer);
  }
  arena_ = std::make_unique<DeviceArena>([this](DeviceArena& arena) { carve(arena); });

  upload(step_.train_images, to_half_host(data.train.images), stream_);
  upload(test_images_, to_half_host(data.test.images), stream_);
  upload(step_.train_labels, data.train.labels, stream_);
  upload(test_labels_, data.test.labels, stream_);
  std::vector<BiasUpdate> bias_updates;
  for (int l = 0; l < init.layers(); ++l) {
    const Layer& layer = step_.layers[l];
    upload(layer.weights, init.weights[l], stream_);
    upload(layer.bias, init.biases[l], stream_);
    to_half(layer.weights, init.weights[l].size(), layer.weight_operand, stream_);
    bias_updates.push_back({layer.grad, layer.bias, layer.out});
    bias_count_ += layer.out;
  }
  upload(bias_updates_, bias_updates, stream_);
  CUDA_CHECK(cudaMemsetAsync(step_.scratch, 0, scratch_words() * sizeof(uint32_t), stream_));
  CUDA_CHECK(cudaMemsetAsync(step_.model_scratch, 0, model_scratch_bytes_, stream_));
  CUDA_CHECK(cudaStreamSynchronize(stream_));  // the host vectors above are temporaries
  if (launch_ == StepLaunch::kPersistent) chapter_prepare_steps(step_, stream_);
}

Trainer::~Trainer() {
  for (StepGraph* graph : {&full_graph_, &last_graph_}) {
    if (graph->exec) cudaGraphExecDestroy(graph->exec);
  }
  if (stream_) cudaStreamDestroy(stream_);
}

void Trainer::set_order(const std::vector<int>& order) {
  if (static_cast<int>(order.size()) != step_.train_count) {
    throw std::invalid_argument("Trainer: order must visit every training sample once");
  }
  upload(step_.order, order, stream_);
  CUDA_CHECK(cudaMemsetAsync(step_.step_index, 0, sizeof(int), stream_));
  next_step_ = 0;
  CUDA_CHECK(cudaStreamSynchronize(stream_));  // `order` may go away after we return
}

void Trainer::multiply(GemmProblem problem) {
  if (!problem.c) problem.c = product_;
  problem.workspace = gemm_workspace_;
  problem.workspace_floats = kGemmWorkspaceFloats;
  gemm(problem, stream_);
}

// The product of each layer, with its epilogue; for the operand layouts see gemm_types.hpp.
void Trainer::forward(const __half* x, int rows) {
  const __half* input = x;
  for (Layer& layer : step_.layers) {
    GemmProblem p{rows, layer.out, layer.in, input, kForward.a, layer.weight_operand, kForward.b};
    p.epilogue.bias = layer.bias;
    if (layer.output) {
      p.epilogue.kind = EpilogueKind::kBiasRelu;
      p.epilogue.out = layer.output;
      input = layer.output;
    } else {
      p.epilogue.kind = EpilogueKind::kBias;
      p.c = step_.logits;
    }
    multiply(p);
  }
}

int Trainer::rows_of_step(int step) const {
  return std::min(step_.batch, step_.train_count - step * step_.batch);
}

void Trainer::launch_step(int rows, float learning_rate) {
  gather_batch(step_.train_images, step_.train_labels, step_.order, step_.step_index, step_.batch,
               rows, kPixels, batch_x_, batch_labels_, stream_);
  forward(batch_x_, rows);

  LossOutputs loss;
  loss.grad = step_.layers.back().grad;
  loss.step_losses = step_.step_losses;
  loss.step = step_.step_index;
  softmax_cross_entropy(step_.logits, batch_labels_, rows, loss, stream_);

  // Top layer down. The backward-data product reads this layer's fp16 weights, so it runs before
  // the backward-weight product, whose epilogue updates them.
  for (int l = static_cast<int>(step_.layers.size()) - 1; l >= 0; --l) {
    Layer& layer = step_.layers[l];
    const __half* input = l == 0 ? batch_x_ : step_.layers[l - 1].output;
    if (l > 0) {
      GemmProblem dx{rows,           layer.in,        layer.out,
                     layer.grad,     kBackwardData.a, layer.weight_operand,
                     kBackwardData.b};
      dx.epilogue.kind = EpilogueKind::kReluGrad;
      dx.epilogue.activation = input;
      dx.epilogue.out = step_.layers[l - 1].grad;
      multiply(dx);
    }
    GemmProblem dw{layer.out, layer.in,         rows, layer.grad, kBackwardWeight.a,
                   input,     kBackwardWeight.b};
    dw.epilogue.kind = EpilogueKind::kSgd;
    dw.epilogue.master = layer.weights;
    dw.epilogue.out = layer.weight_operand;
    dw.epilogue.learning_rate = learning_rate;
    multiply(dw);
  }
  bias_sgd(bias_updates_, static_cast<int>(step_.layers.size()), bias_count_, rows, learning_rate,
           stream_);
}

template <class Enqueue>
cudaGraph_t Trainer::record(Enqueue&& enqueue) {
  // Relaxed: the first GEMM of a kind sets up its kernel (cudaFuncSetAttribute, occupancy
  // queries) during the recording, which the stricter modes refuse.
  CUDA_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeRelaxed));
  try {
    enqueue();
  } catch (...) {
    cudaGraph_t abandoned = nullptr;
    cudaStreamEndCapture(stream_, &abandoned);
    if (abandoned) cudaGraphDestroy(abandoned);
    throw;
  }
  cudaGraph_t graph = nullptr;
  CUDA_CHECK(cudaStreamEndCapture(stream_, &graph));
  return graph;
}

void Trainer::replay(StepGraph& graph, int rows, float learning_rate) {
  if (!graph.exec || graph.rows != rows || graph.learning_rate != learning_rate) {
    if (graph.exec) CUDA_CHECK(cudaGraphExecDestroy(graph.exec));
    cudaGraph_t recorded = record([&] { launch_step(rows, learning_rate); });
    const cudaError_t status = cudaGraphInstantiate(&graph.exec, recorded, 0);
    CUDA_CHECK(cudaGraphDestroy(recorded));
    CUDA_CHECK(status);
    graph.rows = rows;
    graph.learning_rate = learning_rate;
  }
  CUDA_CHECK(cudaGraphLaunch(graph.exec, stream_));
}

void Trainer::train(int steps, float learning_rate) {
  if (steps < 0 || next_step_ + steps > steps_per_epoch_) {
    throw std::invalid_argument("Trainer::train: " + std::to_string(steps) +
                                " steps go past the end of the epoch");
  }
  if (launch_ == StepLaunch::kPersistent) {
    step_.next_step = next_step_;
    if (steps > 0) chapter_train_steps(step_, steps, learning_rate, stream_);
  } else {
    for (int s = next_step_; s < next_step_ + steps; ++s) {
      const int rows = rows_of_step(s);
      if (launch_ == StepLaunch::kHost) {
        launch_step(rows, learning_rate);
      } else {
        replay(rows == step_.batch ? full_graph_ : last_graph_, rows, learning_rate);
      }
    }
  }
  next_step_ += steps;
}

int Trainer::kernels_per_step() {
  cudaGraph_t graph = record([&] {
    if (launch_ == StepLaunch::kPersistent) {
      chapter_train_steps(step_, 1, 0.0f, stream_);
    } else {
      launch_step(step_.batch, 0.0f);
    }
  });
  size_t nodes = 0;
  const cudaError_t status = cudaGraphGetNodes(graph, nullptr, &nodes);
  CUDA_CHECK(cudaGraphDestroy(graph));
  CUDA_CHECK(status);
  return static_cast<int>(nodes);
}

double Trainer::step_bytes_floor() const {
  // The FP8 step (chapter 20 on) reads and writes its hidden layers' weights as e4m3 copies, one
  // as stored and one transposed (none for layer 0, which has no backward-data product).
  const bool fp8 = launch_ == StepLaunch::kPersistent && chapter_steps_use_fp8();
  double bytes = 0;
  for (size_t l = 0; l < step_.layers.size(); ++l) {
    const double params = static_cast<double>(step_.layers[l].in) * step_.layers[l].out;
    const double copies = l == 0 ? 1 : 2;  // read by the forward (and backward-data) products
    const double copy_bytes = fp8 && l + 1 < step_.layers.size() ? 1 : sizeof(__half);
    const double written = fp8 && l + 1 < step_.layers.size() ? copies : 1;
    bytes += params * (copies * copy_bytes + 2 * sizeof(float) + written * copy_bytes);
  }
  return bytes;
}

std::vector<float> Trainer::losses(int count) {
  if (count < 0 || count > steps_per_epoch_) {
    throw std::invalid_argument("Trainer: bad loss count");
  }
  std::vector<float> host(count);
  CUDA_CHECK(cudaMemcpyAsync(host.data(), step_.step_losses, count * sizeof(float),
                             cudaMemcpyDeviceToHost, stream_));
  CUDA_CHECK(cudaStreamSynchronize(stream_));
  return host;
}

ModelParams Trainer::parameters() {
  ModelParams params;
  params.sizes = sizes_;
  for (const Layer& layer : step_.layers) {
    params.weights.emplace_back(static_cast<size_t>(layer.in) * layer.out);
    params.biases.emplace_back(layer.out);
    CUDA_CHECK(cudaMemcpyAsync(params.weights.back().data(), layer.weights,
                               params.weights.back().size() * sizeof(float), cudaMemcpyDeviceToHost,
                               stream_));
    CUDA_CHECK(cudaMemcpyAsync(params.biases.back().data(), layer.bias, layer.out * sizeof(float),
                               cudaMemcpyDeviceToHost, stream_));
  }
  CUDA_CHECK(cudaStreamSynchronize(stream_));
  return params;
}

Evaluation Trainer::evaluate() {
  if (launch_ == StepLaunch::kPersistent) chapter_before_evaluation(step_, stream_);
  CUDA_CHECK(cudaMemsetAsync(eval_loss_sum_, 0, sizeof(double), stream_));
  CUDA_CHECK(cudaMemsetAsync(eval_correct_, 0, sizeof(int), stream_));
  LossOutputs sums;
  sums.loss_sum = eval_loss_sum_;
  sums.correct = eval_correct_;
  for (int start = 0; start < test_count_; start += kEvalChunk) {
    const int rows = std::min(kEvalChunk, test_count_ - start);
    forward(test_images_ + static_cast<size_t>(start) * kPixels, rows);
    softmax_cross_entropy(step_.logits, test_labels_ + start, rows, sums, stream_);
  }
  double loss_sum = 0;
  int correct = 0;
  CUDA_CHECK(
      cudaMemcpyAsync(&loss_sum, eval_loss_sum_, sizeof loss_sum, cudaMemcpyDeviceToHost, stream_));
  CUDA_CHECK(
      cudaMemcpyAsync(&correct, eval_correct_, sizeof correct, cudaMemcpyDeviceToHost, stream_));
  CUDA_CHECK(cudaStreamSynchronize(stream_));
  return {loss_sum / test_count_, static_cast<double>(correct) / test_count_};
}

}  // namespace mnist
