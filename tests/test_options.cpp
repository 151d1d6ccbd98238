// The trainer's command line: defaults, every option, and one clear error for each bad value.
#include <stdexcept>
#include <string>
#include <vector>

#include "check.hpp"
#include "options.hpp"

using namespace mnist;

namespace {

// Parses `args`; returns the error message, or "" when they were accepted.
std::string parse(std::vector<std::string> args, TrainOptions& options) {
  std::vector<char*> argv = {const_cast<char*>("train")};
  for (std::string& arg : args) argv.push_back(arg.data());
  try {
    parse_train_options(static_cast<int>(argv.size()), argv.data(), "default/dir", options);
  } catch (const std::invalid_argument& error) {
    return error.what();
  }
  return "";
}

bool rejected(std::vector<std::string> args, const std::string& expected_part) {
  TrainOptions options;
  const std::string error = parse(std::move(args), options);
  return CHECK_MSG(error.find(expected_part) != std::string::npos, "got: '" + error + "'");
}

// check_batch_fits's message, or "" when the batch fits.
std::string batch_error(int batch, int train_count) {
  try {
    check_batch_fits(batch, train_count);
  } catch (const std::invalid_argument& error) {
    return error.what();
  }
  return "";
}

}  // namespace

int main() {
  TrainOptions options;
  CHECK(parse({}, options).empty());
  CHECK((options.layers == LayerSizes{784, 1024, 1024, 1024, 10}));
  CHECK(options.data_dir == "default/dir" && options.batch == 32 && options.epochs == 5);

  CHECK(parse({"--hidden", "128", "--batch", "256", "--epochs", "2", "--lr", "0.1", "--seed", "7",
               "--data-dir", "d", "--out-dir", "o"},
              options)
            .empty());
  CHECK((options.layers == LayerSizes{784, 128, 128, 128, 10}));
  CHECK(options.batch == 256 && options.epochs == 2 && options.learning_rate == 0.1f);
  CHECK(options.seed == 7 && options.data_dir == "d" && options.out_dir == "o");
  CHECK(parse({"--layers", "784-300-10"}, options).empty());
  CHECK((options.layers == LayerSizes{784, 300, 10}));

  rejected({"--batch", "0"}, "--batch expects an integer in [1, 65536], got '0'");
  rejected({"--batch", "12x"}, "--batch expects an integer");
  rejected({"--epochs", "-3"}, "--epochs expects an integer");
  rejected({"--lr", "0"}, "--lr expects a positive number, got '0'");
  rejected({"--lr", "nan"}, "--lr expects a positive number");
  rejected({"--hidden", "99999999999"}, "--hidden expects an integer");
  rejected({"--layers", "784-0-10"}, "bad layer width '0'");
  rejected({"--layers", "784--10"}, "bad layer width ''");
  rejected({"--layers", "100-10"}, "must start at 784 and end at 10");
  rejected({"--layers", "784-20"}, "must start at 784 and end at 10");
  rejected({"--frobnicate", "1"}, "unknown option --frobnicate");
  rejected({"--epochs"}, "missing value: --epochs");
  CHECK(parse({}, options).empty() && options.max_steps == 0 && options.evaluate);
  CHECK(parse({"--no-eval", "--epochs", "2"}, options).empty() && !options.evaluate &&
        options.epochs == 2);
  CHECK(parse({"--max-steps", "100"}, options).empty() && options.max_steps == 100);
  CHECK(parse({}, options).empty() && options.launch.empty());
  CHECK(parse({"--launch", "graph"}, options).empty() && options.launch == "graph");
  CHECK(parse({"--launch", "host"}, options).empty() && options.launch == "host");
  CHECK(parse({"--launch", "persistent"}, options).empty() && options.launch == "persistent");
  rejected({"--launch", "Graph"}, "--launch expects host, graph or persistent, got 'Graph'");
  rejected({"--launch"}, "missing value: --launch");
  rejected({"--max-steps", "0"}, "--max-steps expects an integer in [1, 2147483647], got '0'");
  rejected({"--max-steps", "-5"}, "--max-steps expects an integer");
  rejected({"--max-steps", "10x"}, "--max-steps expects an integer");
  rejected({"--max-steps", "2147483648"}, "--max-steps expects an integer");
  rejected({"--max-steps"}, "missing value: --max-steps");
  // The split's size is known only once the data is loaded: check_batch_fits, after parsing.
  CHECK(parse({"--batch", "65536"}, options).empty() && options.batch == 65536);
  CHECK(batch_error(60000, 60000).empty());
  CHECK(batch_error(1, 3).empty());
  CHECK_MSG(batch_error(60001, 60000) == "--batch 60001 is larger than the 60000 training images",
            batch_error(60001, 60000));
  CHECK_MSG(batch_error(65536, 60000) == "--batch 65536 is larger than the 60000 training images",
            batch_error(65536, 60000));
  return testing::finish("options");
}
