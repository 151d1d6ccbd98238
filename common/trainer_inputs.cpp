// What a trainer run starts from, written as .npy files that numpy.load reads: bench/pytorch_mlp.py
// trains PyTorch from them, so both sides start from the same weights, see the same normalised
// images and visit the batches in the same order, with nothing of rng.hpp, model.cpp or
// dataset.cpp ported to Python. A host program rather than a trainer option: the trainers are
// built only with nvcc and need a GPU to run, while the test that checks PyTorch's reading of these
// files (pytorch_mlp_self_test) runs in CI, which has neither; and the trainer stays as it is.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "dataset.hpp"
#include "half.hpp"
#include "model.hpp"
#include "options.hpp"
#include "rng.hpp"

namespace mnist {
namespace {

void print_usage(const char* program) {
  std::printf(
      "usage: %s [--train-split] [--checksums] [trainer options]\n"
      "Writes into --out-dir what a chapter trainer given the same options starts from:\n"
      "  wL.npy, bL.npy    layer L's initial weights (float32, out x in) and bias (float32)\n"
      "  order.npy         int32, epochs x train images: the samples of epoch e in visiting order\n"
      "  train_images.npy  --train-split: float32, train images x 784, normalised as the trainer\n"
      "                    has them before it rounds them to fp16\n"
      "  train_labels.npy  --train-split: uint8, one per train image\n"
      "--checksums prints a checksum of each parameter and of each epoch's batches as the trainer\n"
      "gathers them (sample ids, fp16 images, labels), for bench/pytorch_mlp.py --self-test.\n"
      "Of the trainer's options (train_NN_name --help) it uses --data-dir, --hidden, --layers,\n"
      "--epochs, --seed and --out-dir, and ignores the others.\n",
      program);
}

// This machine's byte order in numpy's notation; numpy.load converts where it differs.
char byte_order() {
  const uint16_t one = 1;
  unsigned char first = 0;
  std::memcpy(&first, &one, 1);
  return first == 1 ? '<' : '>';
}

std::string npy_type(float) {
  return byte_order() + std::string("f4");
}
std::string npy_type(int32_t) {
  return byte_order() + std::string("i4");
}
std::string npy_type(uint8_t) {
  return "|u1";
}

// numpy's .npy format 1.0: magic, version, header length, a Python dict literal padded with
// spaces to a multiple of 64 bytes in all, then the elements in C order.
template <typename T>
void write_npy(const std::string& path, const std::vector<T>& values, std::vector<size_t> shape) {
  std::string dims;
  for (size_t d : shape) dims += std::to_string(d) + ", ";
  std::string header =
      "{'descr': '" + npy_type(T{}) + "', 'fortran_order': False, 'shape': (" + dims + "), }";
  constexpr size_t kPreamble = 10;  // magic (6 bytes), version (2), header length (2)
  header.append((64 - (kPreamble + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  const char preamble[kPreamble] = {'\x93',
                                    'N',
                                    'U',
                                    'M',
                                    'P',
                                    'Y',
                                    1,
                                    0,
                                    static_cast<char>(header.size() & 0xff),
                                    static_cast<char>(header.size() >> 8)};
  std::ofstream file(path, std::ios::binary);
  file.write(preamble, kPreamble);
  file << header;
  file.write(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
  if (!file) throw std::runtime_error("cannot write " + path);
}

uint64_t float_bits(float x) {
  uint32_t bits = 0;
  std::memcpy(&bits, &x, sizeof bits);
  return bits;
}

// The sum over i of (i + 1) x bits of element i, modulo 2^64: a changed, moved or missing element
// changes it (a transposed matrix, an epoch's order taken from the next epoch), and numpy sums
// it the same way (checksum_line() in bench/pytorch_mlp.py).
template <typename Bits>
void print_checksum(const std::string& name, const std::string& shape, size_t count, Bits bits) {
  uint64_t sum = 0;
  for (size_t i = 0; i < count; ++i) sum += (i + 1) * bits(i);
  std::printf("%s %s %016llx\n", name.c_str(), shape.c_str(), static_cast<unsigned long long>(sum));
}

int run(int argc, char** argv) {
  bool train_split = false, checksums = false;
  std::vector<char*> trainer_args = {argv[0]};
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      print_usage(argv[0]);
      return 0;
    }
    if (flag == "--train-split") {
      train_split = true;
    } else if (flag == "--checksums") {
      checksums = true;
    } else {
      trainer_args.push_back(argv[i]);
    }
  }
  TrainOptions options;
  parse_train_options(static_cast<int>(trainer_args.size()), trainer_args.data(), MNIST_DATA_DIR,
                      options);
  const Dataset data = load_dataset(options.data_dir);
  std::filesystem::create_directories(options.out_dir);
  const std::string dir = options.out_dir + "/";
  const size_t count = data.train.count;
  const std::string pixels = std::to_string(kPixels);

  const ModelParams params = init_params(options.layers, options.seed);
  for (int l = 0; l < params.layers(); ++l) {
    const size_t in = params.sizes[l], out = params.sizes[l + 1];
    const std::vector<float>& w = params.weights[l];
    const std::vector<float>& b = params.biases[l];
    write_npy(dir + "w" + std::to_string(l) + ".npy", w, {out, in});
    write_npy(dir + "b" + std::to_string(l) + ".npy", b, {out});
    if (checksums) {
      print_checksum("w" + std::to_string(l), std::to_string(out) + "x" + std::to_string(in),
                     w.size(), [&](size_t i) { return float_bits(w[i]); });
      print_checksum("b" + std::to_string(l), std::to_string(out), b.size(),
                     [&](size_t i) { return float_bits(b[i]); });
    }
  }

  std::vector<int32_t> orders;
  for (int epoch = 0; epoch < options.epochs; ++epoch) {
    const std::vector<int> order = epoch_order(data.train.count, options.seed, epoch);
    orders.insert(orders.end(), order.begin(), order.end());
    if (!checksums) continue;
    const std::string e = " e" + std::to_string(epoch);
    print_checksum("order" + e, std::to_string(count), count,
                   [&](size_t i) { return static_cast<uint64_t>(order[i]); });
    // The batches as the trainer uploads and gathers them: images rounded to fp16.
    print_checksum(
        "images" + e, std::to_string(count) + "x" + pixels, count * kPixels, [&](size_t i) {
          const size_t row = order[i / kPixels];
          return float_bits(round_to_half(data.train.images[row * kPixels + i % kPixels]));
        });
    print_checksum("labels" + e, std::to_string(count), count,
                   [&](size_t i) { return uint64_t{data.train.labels[order[i]]}; });
  }
  write_npy(dir + "order.npy", orders, {static_cast<size_t>(options.epochs), count});

  if (train_split) {
    write_npy(dir + "train_images.npy", data.train.images, {count, static_cast<size_t>(kPixels)});
    write_npy(dir + "train_labels.npy", data.train.labels, {count});
  }
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
