#include "device_arena.cuh"

#include <stdexcept>

#include "cuda_check.cuh"

namespace mnist {
namespace {

constexpr size_t kAlignment = 256;  // what cudaMalloc guarantees; enough for any vector access

}  // namespace

void DeviceArena::reserve() {
  capacity_ = offset_;
  offset_ = 0;
  if (capacity_ == 0) return;
  CUDA_CHECK(cudaMalloc(&base_, capacity_));
}

void* DeviceArena::take_bytes(size_t bytes) {
  if (sealed_) throw std::logic_error("DeviceArena: allocation after setup");
  const size_t start = (offset_ + kAlignment - 1) / kAlignment * kAlignment;
  offset_ = start + bytes;
  if (base_ == nullptr) return nullptr;  // the measuring pass
  if (offset_ > capacity_)
    throw std::logic_error("DeviceArena: carve asked for more the second time");
  return base_ + start;
}

DeviceArena::~DeviceArena() {
  if (base_) cudaFree(base_);  // no throwing from a destructor; a failure here changes nothing
}

}  // namespace mnist
