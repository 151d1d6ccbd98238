#include "options.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

#include "dataset.hpp"

namespace mnist {
namespace {

constexpr int kDefaultHidden = 1024;
constexpr int kDefaultEpochs = 5;
constexpr int kDefaultBatch = 32;
constexpr float kDefaultLearningRate = 0.05f;
constexpr uint64_t kDefaultSeed = 42;
constexpr int kMaxBatchOption = 1 << 16;
constexpr int kMaxEpochs = 1000;
constexpr int kMaxWidth = 1 << 16;
constexpr int kMaxSteps = std::numeric_limits<int>::max();

void print_usage(const char* program, const std::string& default_data_dir) {
  std::printf(
      "usage: %s [options]\n"
      "Trains a 784-h-h-h-10 ReLU MLP on MNIST with SGD (fp16 GEMM operands, fp32 weights).\n"
      "  --data-dir DIR   the four IDX files (default %s; data/fetch.sh fashion for "
      "Fashion-MNIST)\n"
      "  --hidden H       width of the three hidden layers (default %d)\n"
      "  --layers L       all widths instead, e.g. 784-512-256-10 (overrides --hidden)\n"
      "  --epochs N       passes over the 60000 training images (default %d)\n"
      "  --batch B        samples per SGD step, at most the training images (default %d)\n"
      "  --lr X           learning rate (default %g)\n"
      "  --seed S         seeds the weights and the batch order (default %llu)\n"
      "  --max-steps N    train (and time) only the first N steps of each epoch (default: all)\n"
      "  --no-eval        skip the test-set evaluation after each epoch (for timing runs)\n"
      "  --launch L       host: launch every kernel of every step from the host; graph: record\n"
      "                   a step once as a CUDA graph, replay it; persistent: all the steps of\n"
      "                   an epoch in one launch (chapter 16 on, for the models it takes)\n"
      "                   (default: persistent where the chapter takes the model, else graph\n"
      "                   from chapter 06 on, host before)\n"
      "  --out-dir DIR    writes <chapter>_steps.csv and <chapter>_epochs.csv there (default "
      "runs)\n"
      "  --help           this text\n",
      program, default_data_dir.c_str(), kDefaultHidden, kDefaultEpochs, kDefaultBatch,
      kDefaultLearningRate, static_cast<unsigned long long>(kDefaultSeed));
}

// The whole of `text` as an integer in [low, high], or false.
bool parse_integer(const std::string& text, long long low, long long high, long long& value) {
  size_t used = 0;
  try {
    value = std::stoll(text, &used);
  } catch (const std::exception&) {
    return false;
  }
  return !text.empty() && used == text.size() && value >= low && value <= high;
}

float parse_positive_float(const std::string& flag, const std::string& text) {
  size_t used = 0;
  float value = 0;
  try {
    value = std::stof(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (text.empty() || used != text.size() || !std::isfinite(value) || value <= 0) {
    throw std::invalid_argument(flag + " expects a positive number, got '" + text + "'");
  }
  return value;
}

}  // namespace

long long parse_integer(const std::string& flag, const std::string& text, long long low,
                        long long high) {
  long long value = 0;
  if (!parse_integer(text, low, high, value)) {
    throw std::invalid_argument(flag + " expects an integer in [" + std::to_string(low) + ", " +
                                std::to_string(high) + "], got '" + text + "'");
  }
  return value;
}

LayerSizes parse_layer_sizes(const std::string& text) {
  LayerSizes sizes;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find('-', start), text.size());
    const std::string field = text.substr(start, end - start);
    long long width = 0;
    if (!parse_integer(field, 1, kMaxWidth, width)) {
      throw std::invalid_argument("bad layer width '" + field + "' in '" + text +
                                  "' (expected e.g. 784-1024-1024-1024-10)");
    }
    sizes.push_back(static_cast<int>(width));
    start = end + 1;
  }
  if (sizes.size() < 2 || sizes.front() != kPixels || sizes.back() != kClasses) {
    throw std::invalid_argument("layers '" + text + "' must start at " + std::to_string(kPixels) +
                                " and end at " + std::to_string(kClasses));
  }
  return sizes;
}

bool parse_train_options(int argc, char** argv, const std::string& default_data_dir,
                         TrainOptions& options) {
  options = TrainOptions{};
  options.data_dir = default_data_dir;
  options.epochs = kDefaultEpochs;
  options.batch = kDefaultBatch;
  options.learning_rate = kDefaultLearningRate;
  options.seed = kDefaultSeed;
  options.out_dir = "runs";
  int hidden = kDefaultHidden;
  std::string layers;

  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      print_usage(argv[0], default_data_dir);
      return false;
    }
    if (flag == "--no-eval") {
      options.evaluate = false;
      continue;
    }
    if (i + 1 >= argc) throw std::invalid_argument("unknown option or missing value: " + flag);
    const std::string value = argv[++i];
    if (flag == "--data-dir") {
      options.data_dir = value;
    } else if (flag == "--hidden") {
      hidden = static_cast<int>(parse_integer(flag, value, 1, kMaxWidth));
    } else if (flag == "--layers") {
      layers = value;
    } else if (flag == "--epochs") {
      options.epochs = static_cast<int>(parse_integer(flag, value, 1, kMaxEpochs));
    } else if (flag == "--batch") {
      options.batch = static_cast<int>(parse_integer(flag, value, 1, kMaxBatchOption));
    } else if (flag == "--lr") {
      options.learning_rate = parse_positive_float(flag, value);
    } else if (flag == "--seed") {
      options.seed = static_cast<uint64_t>(parse_integer(flag, value, 0, INT64_MAX));
    } else if (flag == "--max-steps") {
      options.max_steps = static_cast<int>(parse_integer(flag, value, 1, kMaxSteps));
    } else if (flag == "--launch") {
      if (value != "host" && value != "graph" && value != "persistent") {
        throw std::invalid_argument("--launch expects host, graph or persistent, got '" + value +
                                    "'");
      }
      options.launch = value;
    } else if (flag == "--out-dir") {
      options.out_dir = value;
    } else {
      throw std::invalid_argument("unknown option " + flag + " (see --help)");
    }
  }
  const std::string h = std::to_string(hidden);
  options.layers =
      parse_layer_sizes(layers.empty() ? "784-" + h + "-" + h + "-" + h + "-10" : layers);
  return true;
}

void check_batch_fits(int batch, int train_count) {
  if (batch > train_count) {
    throw std::invalid_argument("--batch " + std::to_string(batch) + " is larger than the " +
                                std::to_string(train_count) + " training images");
  }
}

}  // namespace mnist
