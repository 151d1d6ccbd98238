#include "trainer.cuh"

#include <algorithm>
#include <stdexcept>

#include "cuda_check.cuh"
#include "gemm_interface.cuh"
#include "mlp_kernels.cuh"

namespace mnist {
namespace {

constexpr int kEvalChunk = 1000;  // test rows per forward pass during evaluation

int checked_batch(int max_batch) {
  if (max_batch < 1) throw std::invalid_argument("Trainer: batch must be positive");
  return max_batch;
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

void Trainer::carve(DeviceArena& arena) {
  const size_t train_pixels = static_cast<size_t>(train_count_) * kPixels;
  const size_t test_pixels = static_cast<size_t>(test_count_) * kPixels;
  const int widest = *std::max_element(sizes_.begin(), sizes_.end());
  train_images_ = arena.take<__half>(train_pixels);
  test_images_ = arena.take<__half>(test_pixels);
  train_labels_ = arena.take<uint8_t>(train_count_);
  test_labels_ = arena.take<uint8_t>(test_count_);
  order_ = arena.take<int>(train_count_);
  batch_x_ = arena.take<__half>(static_cast<size_t>(max_rows_) * kPixels);
  batch_labels_ = arena.take<uint8_t>(max_rows_);
  for (Layer& layer : layers_) {
    const size_t params = static_cast<size_t>(layer.in) * layer.out;
    const size_t outputs = static_cast<size_t>(max_rows_) * layer.out;
    layer.weights = arena.take<float>(params);
    layer.bias = arena.take<float>(layer.out);
    layer.weight_operand = arena.take<__half>(params);
    layer.weight_grad = arena.take<float>(params);
    layer.bias_grad = arena.take<float>(layer.out);
    layer.z = arena.take<float>(outputs);
    layer.output = &layer == &layers_.back() ? nullptr : arena.take<__half>(outputs);
  }
  input_grad_ = arena.take<float>(static_cast<size_t>(max_rows_) * widest);
  grad_a_ = arena.take<__half>(static_cast<size_t>(max_rows_) * widest);
  grad_b_ = arena.take<__half>(static_cast<size_t>(max_rows_) * widest);
  gemm_workspace_ = arena.take<float>(kGemmWorkspaceFloats);
  step_losses_ = arena.take<float>(loss_slots_);
  eval_loss_sum_ = arena.take<double>(1);
  eval_correct_ = arena.take<int>(1);
}

Trainer::Trainer(const ModelParams& init, const Dataset& data, int max_batch)
    : sizes_(init.sizes),
      train_count_(data.train.count),
      test_count_(data.test.count),
      max_rows_(std::max(checked_batch(max_batch), kEvalChunk)),
      loss_slots_((data.train.count + max_batch - 1) / max_batch) {
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  for (int l = 0; l < init.layers(); ++l) {
    Layer layer;
    layer.in = sizes_[l];
    layer.out = sizes_[l + 1];
    layers_.push_back(layer);
  }
  arena_ = std::make_unique<DeviceArena>([this](DeviceArena& arena) { carve(arena); });

  upload(train_images_, to_half_host(data.train.images), stream_);
  upload(test_images_, to_half_host(data.test.images), stream_);
  upload(train_labels_, data.train.labels, stream_);
  upload(test_labels_, data.test.labels, stream_);
  for (int l = 0; l < init.layers(); ++l) {
    upload(layers_[l].weights, init.weights[l], stream_);
    upload(layers_[l].bias, init.biases[l], stream_);
    to_half(layers_[l].weights, init.weights[l].size(), layers_[l].weight_operand, stream_);
  }
  CUDA_CHECK(cudaStreamSynchronize(stream_));  // the host vectors above are temporaries
}

Trainer::~Trainer() {
  if (stream_) cudaStreamDestroy(stream_);
}

void Trainer::set_order(const std::vector<int>& order) {
  if (static_cast<int>(order.size()) != train_count_) {
    throw std::invalid_argument("Trainer: order must visit every training sample once");
  }
  upload(order_, order, stream_);
  CUDA_CHECK(cudaStreamSynchronize(stream_));  // `order` may go away after we return
}

void Trainer::multiply(GemmProblem problem) {
  problem.workspace = gemm_workspace_;
  problem.workspace_floats = kGemmWorkspaceFloats;
  gemm(problem, stream_);
}

void Trainer::forward(const __half* x, int rows) {
  const __half* input = x;
  for (Layer& layer : layers_) {
    multiply(
        {rows, layer.out, layer.in, input, kForward.a, layer.weight_operand, kForward.b, layer.z});
    if (layer.output) {
      bias_relu_to_half(layer.z, layer.bias, rows, layer.out, layer.output, stream_);
      input = layer.output;
    }
  }
}

void Trainer::step(int first, int batch, float learning_rate, int slot) {
  if (batch < 1 || batch > max_rows_ || first < 0 || first + batch > train_count_ || slot < 0 ||
      slot >= loss_slots_) {
    throw std::invalid_argument("Trainer::step: batch or slot out of range");
  }
  gather_batch(train_images_, train_labels_, order_, first, batch, kPixels, batch_x_, batch_labels_,
               stream_);
  forward(batch_x_, batch);

  LossOutputs loss;
  loss.grad = grad_a_;
  loss.mean_loss = step_losses_ + slot;
  softmax_cross_entropy(layers_.back().z, layers_.back().bias, batch_labels_, batch, loss, stream_);

  __half* grad = grad_a_;       // dZ of the current layer, fp16
  __half* next_grad = grad_b_;  // dZ of the layer below
  for (int l = static_cast<int>(layers_.size()) - 1; l >= 0; --l) {
    Layer& layer = layers_[l];
    const __half* input = l == 0 ? batch_x_ : layers_[l - 1].output;
    multiply({layer.out, layer.in, batch, grad, kBackwardWeight.a, input, kBackwardWeight.b,
              layer.weight_grad});
    column_sums(grad, batch, layer.out, layer.bias_grad, stream_);
    if (l == 0) break;
    multiply({batch, layer.in, layer.out, grad, kBackwardData.a, layer.weight_operand,
              kBackwardData.b, input_grad_});
    relu_backward_to_half(input_grad_, input, static_cast<size_t>(batch) * layer.in, next_grad,
                          stream_);
    std::swap(grad, next_grad);
  }
  for (Layer& layer : layers_) {
    sgd_update(layer.weights, layer.weight_grad, static_cast<size_t>(layer.in) * layer.out,
               learning_rate, layer.weight_operand, stream_);
    sgd_update(layer.bias, layer.bias_grad, layer.out, learning_rate, nullptr, stream_);
  }
}

std::vector<float> Trainer::losses(int count) {
  if (count < 0 || count > loss_slots_) throw std::invalid_argument("Trainer: bad loss count");
  std::vector<float> host(count);
  CUDA_CHECK(cudaMemcpyAsync(host.data(), step_losses_, count * sizeof(float),
                             cudaMemcpyDeviceToHost, stream_));
  CUDA_CHECK(cudaStreamSynchronize(stream_));
  return host;
}

Evaluation Trainer::evaluate() {
  CUDA_CHECK(cudaMemsetAsync(eval_loss_sum_, 0, sizeof(double), stream_));
  CUDA_CHECK(cudaMemsetAsync(eval_correct_, 0, sizeof(int), stream_));
  LossOutputs sums;
  sums.loss_sum = eval_loss_sum_;
  sums.correct = eval_correct_;
  for (int start = 0; start < test_count_; start += kEvalChunk) {
    const int rows = std::min(kEvalChunk, test_count_ - start);
    forward(test_images_ + static_cast<size_t>(start) * kPixels, rows);
    softmax_cross_entropy(layers_.back().z, layers_.back().bias, test_labels_ + start, rows, sums,
                          stream_);
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

ModelParams Trainer::params() {
  ModelParams params;
  params.sizes = sizes_;
  for (const Layer& layer : layers_) {
    std::vector<float> weights(static_cast<size_t>(layer.in) * layer.out), bias(layer.out);
    CUDA_CHECK(cudaMemcpyAsync(weights.data(), layer.weights, weights.size() * sizeof(float),
                               cudaMemcpyDeviceToHost, stream_));
    CUDA_CHECK(cudaMemcpyAsync(bias.data(), layer.bias, bias.size() * sizeof(float),
                               cudaMemcpyDeviceToHost, stream_));
    CUDA_CHECK(cudaStreamSynchronize(stream_));
    params.weights.push_back(std::move(weights));
    params.biases.push_back(std::move(bias));
  }
  return params;
}

}  // namespace mnist
