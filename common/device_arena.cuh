// All device memory of a trainer comes from one cudaMalloc made before training starts, so the
// step loop never allocates. test_training counts every device allocation call of its process
// (tests/gpu/device_memory_calls.hpp) and checks that none happens while steps run.
#pragma once

#include <cstddef>

namespace mnist {

class DeviceArena {
 public:
  // Calls carve(*this) twice: first only adding up what it takes, then, after the single
  // cudaMalloc, handing out the pointers. `carve` must take the same buffers both times.
  template <class Carve>
  explicit DeviceArena(Carve carve) {
    carve(*this);
    reserve();
    carve(*this);
    sealed_ = true;
  }
  ~DeviceArena();
  DeviceArena(const DeviceArena&) = delete;
  DeviceArena& operator=(const DeviceArena&) = delete;

  template <class T>
  T* take(size_t count) {
    return static_cast<T*>(take_bytes(count * sizeof(T)));
  }

  size_t bytes() const { return capacity_; }

 private:
  void* take_bytes(size_t bytes);
  void reserve();

  char* base_ = nullptr;
  size_t capacity_ = 0;
  size_t offset_ = 0;
  bool sealed_ = false;
};

}  // namespace mnist
