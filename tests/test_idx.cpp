// The IDX reader and the dataset loader, on files this test writes: valid ones, and each way a
// file can be wrong (the error must name the file and the problem).
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "check.hpp"
#include "dataset.hpp"
#include "idx.hpp"

namespace fs = std::filesystem;
using namespace mnist;

namespace {

std::vector<uint8_t> idx_bytes(uint8_t type, const std::vector<uint32_t>& dims,
                               const std::vector<uint8_t>& values) {
  std::vector<uint8_t> bytes = {0, 0, type, static_cast<uint8_t>(dims.size())};
  for (uint32_t d : dims) {
    for (int shift = 24; shift >= 0; shift -= 8) bytes.push_back(static_cast<uint8_t>(d >> shift));
  }
  bytes.insert(bytes.end(), values.begin(), values.end());
  return bytes;
}

void write(const fs::path& path, const std::vector<uint8_t>& bytes) {
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
}

// The message of the DataError that `read` throws, or "" when it throws none.
template <class Read>
std::string error_of(Read read) {
  try {
    read();
  } catch (const DataError& error) {
    return error.what();
  }
  return "";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::vector<uint8_t> pixels(int images, uint8_t seed) {
  std::vector<uint8_t> values(static_cast<size_t>(images) * kPixels);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<uint8_t>(i * 37 + seed);
  return values;
}

void write_dataset(const fs::path& dir, int train, int test) {
  fs::create_directories(dir);
  write(dir / "train-images-idx3-ubyte", idx_bytes(8, {uint32_t(train), 28, 28}, pixels(train, 1)));
  write(dir / "t10k-images-idx3-ubyte", idx_bytes(8, {uint32_t(test), 28, 28}, pixels(test, 2)));
  std::vector<uint8_t> train_labels(train), test_labels(test);
  for (int i = 0; i < train; ++i) train_labels[i] = static_cast<uint8_t>(i % 10);
  for (int i = 0; i < test; ++i) test_labels[i] = static_cast<uint8_t>((i * 3) % 10);
  write(dir / "train-labels-idx1-ubyte", idx_bytes(8, {uint32_t(train)}, train_labels));
  write(dir / "t10k-labels-idx1-ubyte", idx_bytes(8, {uint32_t(test)}, test_labels));
}

void test_reader(const fs::path& dir) {
  const fs::path good = dir / "good";
  write(good, idx_bytes(8, {2, 3}, {1, 2, 3, 4, 5, 6}));
  const IdxArray array = read_idx(good.string(), 2);
  CHECK((array.dims == std::vector<uint32_t>{2, 3}));
  CHECK((array.values == std::vector<uint8_t>{1, 2, 3, 4, 5, 6}));

  const fs::path missing = dir / "missing";
  CHECK(contains(error_of([&] { read_idx(missing.string(), 1); }), "missing: cannot open"));

  std::string error = error_of([&] { read_idx(good.string(), 3); });
  CHECK_MSG(contains(error, "good: bad magic 0x00000802, expected 0x00000803"), error);

  const fs::path wrong_type = dir / "wrong_type";  // 0x0D: float elements
  write(wrong_type, idx_bytes(0x0D, {2}, {0, 0, 0, 0, 0, 0, 0, 0}));
  CHECK(contains(error_of([&] { read_idx(wrong_type.string(), 1); }), "bad magic"));

  const fs::path short_header = dir / "short_header";
  write(short_header, {0, 0, 8, 3, 0, 0});
  CHECK(contains(error_of([&] { read_idx(short_header.string(), 3); }), "truncated header"));

  const fs::path truncated = dir / "truncated";
  write(truncated, idx_bytes(8, {4}, {1, 2, 3}));
  error = error_of([&] { read_idx(truncated.string(), 1); });
  CHECK_MSG(contains(error, "size 11 bytes, header promises 12 (truncated)"), error);

  const fs::path trailing = dir / "trailing";
  write(trailing, idx_bytes(8, {2}, {1, 2, 3}));
  CHECK(contains(error_of([&] { read_idx(trailing.string(), 1); }), "(trailing bytes)"));

  const fs::path zero = dir / "zero";
  write(zero, idx_bytes(8, {0, 28, 28}, {}));
  CHECK(contains(error_of([&] { read_idx(zero.string(), 3); }), "dimension 0 is zero"));
}

void test_dataset(const fs::path& dir) {
  const fs::path good = dir / "set";
  write_dataset(good, 7, 3);
  const Dataset data = load_dataset(good.string());
  CHECK(data.train.count == 7 && data.test.count == 3);
  CHECK(data.train.images.size() == 7u * kPixels && data.test.images.size() == 3u * kPixels);
  CHECK(data.train.labels[3] == 3 && data.test.labels[2] == 6);
  double sum = 0, sum_squares = 0;
  for (float x : data.train.images) {
    sum += x;
    sum_squares += double(x) * x;
  }
  const double n = static_cast<double>(data.train.images.size());
  CHECK_MSG(std::fabs(sum / n) < 1e-4, "train pixels standardised to mean 0");
  CHECK_MSG(std::fabs(sum_squares / n - 1) < 1e-3, "train pixels standardised to variance 1");

  const fs::path bad_label = dir / "bad_label";
  write_dataset(bad_label, 4, 2);
  write(bad_label / "t10k-labels-idx1-ubyte", idx_bytes(8, {2}, {3, 11}));
  std::string error = error_of([&] { load_dataset(bad_label.string()); });
  CHECK_MSG(contains(error, "t10k-labels-idx1-ubyte: label 11 is not a digit"), error);

  const fs::path count_mismatch = dir / "count_mismatch";
  write_dataset(count_mismatch, 4, 2);
  write(count_mismatch / "train-labels-idx1-ubyte", idx_bytes(8, {5}, {0, 1, 2, 3, 4}));
  error = error_of([&] { load_dataset(count_mismatch.string()); });
  CHECK_MSG(contains(error, "5 labels for 4 images"), error);

  const fs::path wrong_side = dir / "wrong_side";
  write_dataset(wrong_side, 4, 2);
  write(wrong_side / "train-images-idx3-ubyte",
        idx_bytes(8, {4, 32, 32}, std::vector<uint8_t>(4 * 32 * 32, 9)));
  error = error_of([&] { load_dataset(wrong_side.string()); });
  CHECK_MSG(contains(error, "images are 32x32, expected 28x28"), error);

  const fs::path empty_dir = dir / "empty";
  fs::create_directories(empty_dir);
  error = error_of([&] { load_dataset(empty_dir.string()); });
  CHECK_MSG(contains(error, "train-images-idx3-ubyte: cannot open"), error);
}

}  // namespace

int main() {
  const fs::path dir = fs::temp_directory_path() / ("mnist_idx_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  test_reader(dir);
  test_dataset(dir);
  fs::remove_all(dir);
  return testing::finish("idx");
}
