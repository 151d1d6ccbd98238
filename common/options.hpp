// Command line of the chapter trainers.
#pragma once

#include <cstdint>
#include <string>

#include "model.hpp"

namespace mnist {

struct TrainOptions {
  std::string data_dir;  // holds the four IDX files
  LayerSizes layers;
  int epochs = 0;
  int batch = 0;
  float learning_rate = 0;
  uint64_t seed = 0;
  // Steps trained (and timed) per epoch: the first max_steps of the epoch's batches, or all of
  // them when 0. Lets a slow chapter be timed on a large model in seconds.
  int max_steps = 0;
  bool evaluate = true;  // the test split after every epoch; off for timing runs (--no-eval)
  // "host", "graph", "persistent" (see StepLaunch in trainer.cuh), or empty: the chapter's choice
  // (step_launch_for).
  std::string launch;
  std::string out_dir;  // where the CSV files go
};

// The whole of `text` as an integer in [low, high]; otherwise throws std::invalid_argument
// "FLAG expects an integer in [low, high], got 'TEXT'".
long long parse_integer(const std::string& flag, const std::string& text, long long low,
                        long long high);

// "784-1024-10" -> {784, 1024, 10}: from kPixels to kClasses, every width in [1, 65536].
// Throws std::invalid_argument on anything else.
LayerSizes parse_layer_sizes(const std::string& text);

// Returns false after printing the usage for --help; throws std::invalid_argument with a
// one-line message for anything it cannot accept.
bool parse_train_options(int argc, char** argv, const std::string& default_data_dir,
                         TrainOptions& options);

// Throws std::invalid_argument when --batch asks for more samples than the training split holds:
// the trainer would otherwise run one short step per epoch instead of the batch asked for. Checked
// once the data is loaded, since the split's size comes from its files.
void check_batch_fits(int batch, int train_count);

}  // namespace mnist
