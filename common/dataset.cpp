#include "dataset.hpp"

#include <cmath>

#include "idx.hpp"

namespace mnist {
namespace {

struct RawSplit {
  std::vector<uint8_t> pixels;
  std::vector<uint8_t> labels;
  int count;
};

RawSplit read_split(const std::string& dir, const std::string& prefix) {
  const std::string images_path = dir + "/" + prefix + "-images-idx3-ubyte";
  const std::string labels_path = dir + "/" + prefix + "-labels-idx1-ubyte";
  IdxArray images = read_idx(images_path, 3);
  IdxArray labels = read_idx(labels_path, 1);
  if (images.dims[1] != kImageSide || images.dims[2] != kImageSide) {
    throw DataError(images_path + ": images are " + std::to_string(images.dims[1]) + "x" +
                    std::to_string(images.dims[2]) + ", expected 28x28");
  }
  if (images.dims[0] != labels.dims[0]) {
    throw DataError(labels_path + ": " + std::to_string(labels.dims[0]) + " labels for " +
                    std::to_string(images.dims[0]) + " images");
  }
  for (uint8_t label : labels.values) {
    if (label >= kClasses) {
      throw DataError(labels_path + ": label " + std::to_string(label) + " is not a digit 0-9");
    }
  }
  return {std::move(images.values), std::move(labels.values), static_cast<int>(images.dims[0])};
}

Split normalise(RawSplit raw, float mean, float std_dev) {
  Split split;
  split.count = raw.count;
  split.labels = std::move(raw.labels);
  split.images.resize(raw.pixels.size());
  for (size_t i = 0; i < raw.pixels.size(); ++i) {
    split.images[i] = (raw.pixels[i] / 255.0f - mean) / std_dev;
  }
  return split;
}

}  // namespace

Dataset load_dataset(const std::string& dir) {
  RawSplit train = read_split(dir, "train");
  RawSplit test = read_split(dir, "t10k");

  double sum = 0, sum_squares = 0;
  for (uint8_t p : train.pixels) {
    const double x = p / 255.0;
    sum += x;
    sum_squares += x * x;
  }
  const double n = static_cast<double>(train.pixels.size());
  const double mean = sum / n;
  const double std_dev = std::sqrt(sum_squares / n - mean * mean);
  if (!(std_dev > 0)) throw DataError(dir + ": train images are constant");

  Dataset data;
  data.pixel_mean = static_cast<float>(mean);
  data.pixel_std = static_cast<float>(std_dev);
  data.train = normalise(std::move(train), data.pixel_mean, data.pixel_std);
  data.test = normalise(std::move(test), data.pixel_mean, data.pixel_std);
  return data;
}

}  // namespace mnist
