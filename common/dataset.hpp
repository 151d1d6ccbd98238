// MNIST-format datasets (MNIST, Fashion-MNIST) loaded into host memory as normalised floats.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mnist {

constexpr int kImageSide = 28;
constexpr int kPixels = kImageSide * kImageSide;
constexpr int kClasses = 10;

struct Split {
  int count = 0;
  std::vector<float> images;    // count × kPixels, row-major, normalised with the train statistics
  std::vector<uint8_t> labels;  // count values in [0, kClasses)
};

struct Dataset {
  Split train;
  Split test;
  float pixel_mean = 0;  // of the raw train pixels scaled to [0, 1]
  float pixel_std = 0;
};

// Reads the four IDX files from `dir` (train-images-idx3-ubyte, ...). Every pixel is scaled to
// [0, 1], then standardised with the mean and deviation of the train pixels, so the same code
// serves MNIST and Fashion-MNIST. Throws DataError naming the file on any inconsistency.
Dataset load_dataset(const std::string& dir);

}  // namespace mnist
