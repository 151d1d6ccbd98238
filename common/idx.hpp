// Reader for the IDX format that MNIST and Fashion-MNIST ship in.
// Layout: a 4-byte magic (0, 0, type code, number of dimensions), one big-endian uint32 per
// dimension, then the elements. Only unsigned bytes (type code 0x08) occur in these datasets.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace mnist {

// Bad or missing data files; the message names the file and the problem.
struct DataError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct IdxArray {
  std::vector<uint32_t> dims;
  std::vector<uint8_t> values;
};

// Reads an unsigned-byte IDX file with exactly `expected_rank` dimensions and checks that the
// file holds exactly as many bytes as its header promises.
IdxArray read_idx(const std::string& path, int expected_rank);

}  // namespace mnist
