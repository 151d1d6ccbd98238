// The trainer program end to end, as a reader runs it: chapters/train_NN_name for kEpochs epochs
// on a small model and the first kTrainImages training images (and kTestImages test images),
// written as IDX files of their own. Its step CSV against the CPU reference trainer step by step,
// every epoch in its own shuffled order (epoch_order(count, seed, epoch)); its epochs CSV's test
// loss and accuracy against the reference's evaluation after each epoch. As a control, a reference
// that visits the first epoch's order again in the second must be told apart.
//   test_program_NN_name TRAINER DATA_DIR
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "check.hpp"
#include "dataset.hpp"
#include "gemm_interface.cuh"
#include "gpu_info.hpp"
#include "idx.hpp"
#include "model.hpp"
#include "options.hpp"
#include "reference_trainer.hpp"
#include "rng.hpp"
#include "step_interface.cuh"
#include "trainer.cuh"

using namespace mnist;

namespace {

constexpr int kTrainImages = 300, kTestImages = 100, kEpochs = 2, kBatch = 64;  // 4 x 64 + 44
const char* const kLayers = "784-64-10";
const char* const kLearningRate = "0.05";
const char* const kSeed = "42";
// Largest |program loss - reference loss| of a step: test_training's kStepLossTolerance (the two
// are fp32 or better computations of the same rows, 1e-6 apart in a CPU emulation of the GPU); the
// CSV's 6 significant digits add at most 5e-6 at these losses. Measured on the H100
// (docs/results/mutants/baselines.txt): 1.0e-5 (chapter 01), 4.5e-6 (chapter 06); the
// control 0.145 away.
constexpr double kStepLossTolerance = 1e-3;
// Largest |program test loss - reference test loss|: the same arithmetic over 100 rows, which
// average their gaps; the CSV's digits again.
constexpr double kTestLossTolerance = 1e-4;
// Where the steps multiply fp8 copies (chapters 20-24): a value that rounds to the other e4m3 code
// moves the steps after it, so the gap grows with the steps. Measured on the H200: 2e-6 at step
// 1, 1.9e-3 at step 10, test losses 3.0e-4 and 2.2e-4 apart, the same images right; the control
// 0.14 away. The accuracy may differ by an image.
constexpr double kFp8StepLossTolerance = 1e-2;
constexpr double kFp8TestLossTolerance = 1e-3;
constexpr long kFp8TestImagesApart = 1;

// The first `count` items of an IDX file, as an IDX file of their own.
void write_first(const std::string& from, const std::string& to, int rank, int count) {
  const IdxArray array = read_idx(from, rank);
  size_t item_bytes = 1;
  for (int d = 1; d < rank; ++d) item_bytes *= array.dims[d];
  std::ofstream out(to, std::ios::binary);
  const unsigned char magic[4] = {0, 0, 0x08, static_cast<unsigned char>(rank)};
  out.write(reinterpret_cast<const char*>(magic), sizeof magic);
  for (int d = 0; d < rank; ++d) {
    const uint32_t dim = d == 0 ? uint32_t(count) : array.dims[d];
    const unsigned char big_endian[4] = {static_cast<unsigned char>(dim >> 24),
                                         static_cast<unsigned char>(dim >> 16),
                                         static_cast<unsigned char>(dim >> 8),
                                         static_cast<unsigned char>(dim)};
    out.write(reinterpret_cast<const char*>(big_endian), sizeof big_endian);
  }
  out.write(reinterpret_cast<const char*>(array.values.data()), count * item_bytes);
  if (!out) throw std::runtime_error("cannot write " + to);
}

void write_subset(const std::string& from, const std::string& to) {
  for (const auto& [prefix, count] : {std::pair{"train", kTrainImages}, {"t10k", kTestImages}}) {
    const std::string images = std::string("/") + prefix + "-images-idx3-ubyte";
    const std::string labels = std::string("/") + prefix + "-labels-idx1-ubyte";
    write_first(from + images, to + images, 3, count);
    write_first(from + labels, to + labels, 1, count);
  }
}

// The fields of each line after the header; a field in double quotes may hold commas.
std::vector<std::vector<std::string>> read_csv(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("the program wrote no " + path);
  std::vector<std::vector<std::string>> rows;
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) {
    std::vector<std::string> fields(1);
    bool quoted = false;
    for (const char c : line) {
      if (c == '"') {
        quoted = !quoted;
      } else if (c == ',' && !quoted) {
        fields.emplace_back();
      } else {
        fields.back() += c;
      }
    }
    rows.push_back(fields);
  }
  return rows;
}

std::string quoted(const std::string& text) {
  return "'" + text + "'";
}

// A folder of its own under /tmp, removed with everything in it at the end of the scope.
struct ScratchFolder {
  std::string path;
  ScratchFolder() {
    char name[] = "/tmp/test_program_XXXXXX";
    if (!mkdtemp(name)) throw std::runtime_error("cannot make a scratch folder in /tmp");
    path = name;
  }
  ~ScratchFolder() { std::filesystem::remove_all(path); }
  ScratchFolder(const ScratchFolder&) = delete;
  ScratchFolder& operator=(const ScratchFolder&) = delete;
};

}  // namespace

int main(int argc, char** argv) {
  const std::string name = std::string("program ") + chapter_name();
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s TRAINER DATA_DIR\n", argv[0]);
    return 2;
  }
  if (!gpu_available()) return testing::skip(name.c_str(), "no CUDA device");
  try {
    if (!chapter_unsupported_here().empty()) {
      return testing::skip(name.c_str(), chapter_unsupported_here());
    }
    const ScratchFolder folder;
    const std::string& scratch = folder.path;
    const std::string subset = scratch + "/data";
    std::filesystem::create_directories(subset);
    write_subset(argv[2], subset);

    const std::string command =
        quoted(argv[1]) + " --data-dir " + quoted(subset) + " --layers " + kLayers + " --batch " +
        std::to_string(kBatch) + " --epochs " + std::to_string(kEpochs) + " --lr " +
        kLearningRate + " --seed " + kSeed + " --out-dir " + quoted(scratch + "/runs") + " >" +
        quoted(scratch + "/output.txt") + " 2>&1";
    std::printf("%s\n", command.c_str());
    const int status = std::system(command.c_str());
    std::ifstream output(scratch + "/output.txt");
    std::stringstream printed;
    printed << output.rdbuf();
    std::printf("%s", printed.str().c_str());
    if (!CHECK_MSG(status == 0, "the program ran to the end")) return testing::finish(name.c_str());
    const std::string prefix = scratch + "/runs/" + chapter_name();
    const auto steps = read_csv(prefix + "_steps.csv");
    const auto epochs = read_csv(prefix + "_epochs.csv");
    const Dataset data = load_dataset(subset);  // normalised by its own training images, as there

    const uint64_t seed = std::stoull(kSeed);
    const ModelParams init = init_params(parse_layer_sizes(kLayers), seed);
    // The program's default launch; where it multiplies fp8 copies (chapters 20-24), the reference
    // quantises as it does, after the same warm-up step on the first rows.
    const bool fp8 =
        chapter_steps_use_fp8() && step_launch_for(init.sizes, kBatch) == StepLaunch::kPersistent;
    const Arithmetic arithmetic = fp8 ? Arithmetic::kMirrorFp8 : Arithmetic::kMirrorGpu;
    const double step_tolerance = fp8 ? kFp8StepLossTolerance : kStepLossTolerance;
    const double test_tolerance = fp8 ? kFp8TestLossTolerance : kTestLossTolerance;
    const long images_apart = fp8 ? kFp8TestImagesApart : 0;
    ReferenceTrainer reference(init, arithmetic), control(init, arithmetic);
    if (fp8) {
      std::vector<int> first(kBatch);
      for (int r = 0; r < kBatch; ++r) first[r] = r;
      reference.train_step(data.train, first.data(), kBatch, 0.0);
      control.train_step(data.train, first.data(), kBatch, 0.0);
    }
    const int steps_per_epoch = (kTrainImages + kBatch - 1) / kBatch;
    const double learning_rate = std::stof(kLearningRate);  // as the program parses it
    CHECK_MSG(steps.size() == size_t(kEpochs) * steps_per_epoch && epochs.size() == size_t(kEpochs),
              "a line of the step CSV per step, and of the epochs CSV per epoch");
    double gap = 0, control_gap = 0;
    for (int epoch = 0; epoch < kEpochs && steps.size() == size_t(kEpochs) * steps_per_epoch;
         ++epoch) {
      const std::vector<int> order = epoch_order(kTrainImages, seed, epoch);
      const std::vector<int> first_order = epoch_order(kTrainImages, seed, 0);
      for (int s = 0; s < steps_per_epoch; ++s) {
        const int step = epoch * steps_per_epoch + s;
        const std::vector<std::string>& row = steps[step];
        const int rows = std::min(kBatch, kTrainImages - s * kBatch);
        const double want =
            reference.train_step(data.train, &order[s * kBatch], rows, learning_rate);
        const double other =
            control.train_step(data.train, &first_order[s * kBatch], rows, learning_rate);
        const double loss = std::stod(row.at(3));
        std::printf("epoch %s step %s: loss %.6f, reference %.6f, first epoch's order %.6f\n",
                    row.at(1).c_str(), row.at(2).c_str(), loss, want, other);
        CHECK_MSG(row.at(0) == chapter_name() && std::stoi(row.at(1)) == epoch + 1 &&
                      std::stoi(row.at(2)) == step + 1,
                  "the step CSV names the chapter, the epoch and the step, counted from 1");
        gap = std::max(gap, std::isnan(loss) ? INFINITY : std::fabs(loss - want));
        control_gap = std::max(control_gap, std::fabs(loss - other));
      }
      const Evaluation test = reference.evaluate(data.test);
      const double test_loss = std::stod(epochs[epoch].at(8));
      const double accuracy = std::stod(epochs[epoch].at(9));
      std::printf("epoch %d: test loss %.6f, reference %.6f; correct %ld, reference %ld\n",
                  epoch + 1, test_loss, test.mean_loss, std::lround(accuracy * kTestImages),
                  std::lround(test.accuracy * kTestImages));
      CHECK_MSG(std::fabs(test_loss - test.mean_loss) <= test_tolerance,
                "the epochs CSV's test loss is the reference's");
      CHECK_MSG(std::labs(std::lround(accuracy * kTestImages) -
                          std::lround(test.accuracy * kTestImages)) <= images_apart,
                "and its test accuracy");
    }
    std::printf("largest step loss gap %.2e (tolerance %.1e); to the control %.2e\n", gap,
                step_tolerance, control_gap);
    CHECK_MSG(gap <= step_tolerance, "every step of every epoch trains as the reference does");
    CHECK_MSG(control_gap > step_tolerance,
              "the tolerance tells the first epoch's order visited again apart");
  } catch (const std::exception& error) {
    CHECK_MSG(false, error.what());
  }
  return testing::finish(name.c_str());
}
