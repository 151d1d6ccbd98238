#include "idx.hpp"

#include <cstdio>
#include <fstream>
#include <iterator>

namespace mnist {
namespace {

constexpr uint8_t kUnsignedByteType = 0x08;

uint32_t big_endian_u32(const uint8_t* p) {
  return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | uint32_t{p[3]};
}

[[noreturn]] void fail(const std::string& path, const std::string& problem) {
  throw DataError(path + ": " + problem);
}

}  // namespace

IdxArray read_idx(const std::string& path, int expected_rank) {
  std::ifstream file(path, std::ios::binary);
  if (!file) fail(path, "cannot open (run data/fetch.sh first?)");
  const std::vector<uint8_t> bytes{std::istreambuf_iterator<char>(file), {}};
  if (file.bad()) fail(path, "read error");

  const size_t header_bytes = 4 + 4 * static_cast<size_t>(expected_rank);
  if (bytes.size() < header_bytes) {
    fail(path, "truncated header: " + std::to_string(bytes.size()) + " bytes");
  }
  const uint32_t magic = big_endian_u32(bytes.data());
  const uint32_t expected_magic = uint32_t{kUnsignedByteType} << 8 | uint32_t(expected_rank);
  if (magic != expected_magic) {
    char message[96];
    std::snprintf(message, sizeof message, "bad magic 0x%08x, expected 0x%08x (%d-d ubyte)", magic,
                  expected_magic, expected_rank);
    fail(path, message);
  }

  IdxArray array;
  uint64_t count = 1;
  for (int d = 0; d < expected_rank; ++d) {
    const uint32_t extent = big_endian_u32(bytes.data() + 4 + 4 * d);
    if (extent == 0) fail(path, "dimension " + std::to_string(d) + " is zero");
    array.dims.push_back(extent);
    count *= extent;
  }
  const uint64_t expected_size = header_bytes + count;
  if (bytes.size() != expected_size) {
    fail(path, "size " + std::to_string(bytes.size()) + " bytes, header promises " +
                   std::to_string(expected_size) +
                   (bytes.size() < expected_size ? " (truncated)" : " (trailing bytes)"));
  }
  array.values.assign(bytes.begin() + header_bytes, bytes.end());
  return array;
}

}  // namespace mnist
