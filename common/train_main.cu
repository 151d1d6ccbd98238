// The trainer program of every chapter: `build/train_NN_name --help`.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>

#include "cuda_check.cuh"
#include "gemm_interface.cuh"
#include "gpu_info.hpp"
#include "options.hpp"
#include "rng.hpp"
#include "trainer.cuh"

namespace mnist {
namespace {

std::ofstream open_csv(const std::string& path, const char* header) {
  std::ofstream file(path);
  if (!file) throw std::runtime_error("cannot write " + path);
  file << header << '\n';
  return file;
}

// --launch as parsed (host, graph or persistent), or none: the chapter's own choice.
std::optional<StepLaunch> requested_launch(const std::string& launch) {
  for (StepLaunch candidate : {StepLaunch::kHost, StepLaunch::kGraph, StepLaunch::kPersistent}) {
    if (launch == step_launch_name(candidate)) return candidate;
  }
  return std::nullopt;
}

int run(int argc, char** argv) {
  TrainOptions options;
  if (!parse_train_options(argc, argv, MNIST_DATA_DIR, options)) return 0;
  // The data before the GPU: bad data and a batch larger than the training split are reported
  // as such on any machine, with or without a GPU.
  const Dataset data = load_dataset(options.data_dir);
  check_batch_fits(options.batch, data.train.count);
  // Then a model that --launch persistent cannot take, on any machine too, and a GPU the chapter
  // cannot run on (chapters 07 on need an H100 with sm_90a code): one line, before any work.
  const StepLaunch launch =
      step_launch_for(options.layers, options.batch, requested_launch(options.launch));
  const GpuInfo gpu = query_gpu();
  Trainer trainer(init_params(options.layers, options.seed), data, options.batch, launch);

  const std::string layers = format_layer_sizes(options.layers);
  std::printf("chapter %s | %s\n", chapter_name(), describe(gpu).c_str());
  std::printf(
      "layers %s, batch %d, lr %g, seed %llu, %d train / %d test images, %.1f MiB on the GPU\n",
      layers.c_str(), options.batch, options.learning_rate,
      static_cast<unsigned long long>(options.seed), data.train.count, data.test.count,
      trainer.device_bytes() / 1048576.0);
  // What a step costs at the least: its launches, and its weight traffic at copy bandwidth.
  const int kernels = trainer.kernels_per_step();
  const double bandwidth = copy_bandwidth_gb_per_s();
  const double floor_ms = trainer.step_bytes_floor() / (bandwidth * 1e9) * 1e3;
  const bool fp8 = launch == StepLaunch::kPersistent && chapter_steps_use_fp8();
  const char* how = fp8 ? "the hidden layers' products in e4m3, each kernel launched from the host"
                    : launch == StepLaunch::kPersistent ? "all the epoch's steps in one launch"
                    : launch == StepLaunch::kGraph      ? "replayed as one CUDA graph"
                                                        : "each launched from the host";
  std::printf(
      "step: %d kernels, %s; DRAM floor %.4f ms (%.1f MB of weight traffic at %.0f GB/s copy "
      "bandwidth)\n",
      kernels, how, floor_ms, trainer.step_bytes_floor() / 1e6, bandwidth);

  std::filesystem::create_directories(options.out_dir);
  const std::string prefix = options.out_dir + "/" + chapter_name();
  std::ofstream steps_csv = open_csv(prefix + "_steps.csv", "chapter,epoch,step,loss");
  std::ofstream epochs_csv = open_csv(prefix + "_epochs.csv",
                                      "chapter,gpu,layers,batch,lr,seed,epoch,train_loss,test_loss,"
                                      "test_accuracy,train_ms,steps,ms_per_step,date,sm_clock_mhz,"
                                      "driver,cuda_runtime,launch,kernels_per_step,"
                                      "floor_ms_per_step");

  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  const int epoch_steps = trainer.steps_per_epoch();
  const int steps = options.max_steps > 0 ? std::min(options.max_steps, epoch_steps) : epoch_steps;
  if (steps < epoch_steps) {
    std::printf("training and timing the first %d of the %d steps of each epoch (--max-steps)\n",
                steps, epoch_steps);
  }
  std::printf("%5s %12s %12s %10s %10s %10s\n", "epoch", "train_loss", "test_loss", "test_acc",
              "ms", "ms/step");
  for (int epoch = 0; epoch < options.epochs; ++epoch) {
    trainer.set_order(epoch_order(data.train.count, options.seed, epoch));
    CUDA_CHECK(cudaEventRecord(start, trainer.stream()));
    trainer.train(steps, options.learning_rate);
    CUDA_CHECK(cudaEventRecord(stop, trainer.stream()));
    CUDA_CHECK(cudaEventSynchronize(stop));
    // The clock under load, before evaluation: the GPU may clock down when it runs hot or idles.
    const int sm_clock_mhz = query_gpu().sm_clock_mhz;
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    const double ms_per_step = static_cast<double>(ms) / steps;

    const std::vector<float> losses = trainer.losses(steps);
    double loss_sum = 0;
    for (int s = 0; s < steps; ++s) {
      if (!std::isfinite(losses[s])) {
        throw std::runtime_error("training loss is " + std::to_string(losses[s]) + " at epoch " +
                                 std::to_string(epoch + 1) + ", step " + std::to_string(s + 1) +
                                 " (diverged: try a smaller --lr)");
      }
      loss_sum += losses[s];
      steps_csv << chapter_name() << ',' << epoch + 1 << ',' << epoch * steps + s + 1 << ','
                << losses[s] << '\n';
    }
    // Not evaluated: NaN in the CSV, "nan" on the screen.
    const Evaluation test = options.evaluate ? trainer.evaluate() : Evaluation{NAN, NAN};
    std::printf("%5d %12.5f %12.5f %9.2f%% %10.1f %10.4f\n", epoch + 1, loss_sum / steps,
                test.mean_loss, 100 * test.accuracy, ms, ms_per_step);
    std::fflush(stdout);
    epochs_csv << chapter_name() << ",\"" << gpu.name << "\"," << layers << ',' << options.batch
               << ',' << options.learning_rate << ',' << options.seed << ',' << epoch + 1 << ','
               << loss_sum / steps << ',' << test.mean_loss << ',' << test.accuracy << ',' << ms
               << ',' << steps << ',' << ms_per_step << ',' << utc_date() << ',' << sm_clock_mhz
               << ',' << gpu.driver << ',' << gpu.runtime_version << ',' << step_launch_name(launch)
               << ',' << kernels << ',' << floor_ms << '\n';
  }
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  std::printf("wrote %s_steps.csv and %s_epochs.csv\n", prefix.c_str(), prefix.c_str());
  return 0;
}

}  // namespace
}  // namespace mnist

int main(int argc, char** argv) {
  try {
    return mnist::run(argc, argv);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "error: %s\n", error.what());
    return 1;
  }
}
