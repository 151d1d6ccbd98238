// The counting wrappers behind device_memory_calls.hpp. The linker sends each call of a wrapped
// function X to __wrap_X and makes __real_X the original, for the names tests/meson.build lists in
// device_memory_wraps: a name listed there without a wrapper here fails to link, and a wrapper
// here not listed there is never called (test_training's control catches that).
#include <cuda_runtime.h>

#include <atomic>

#include "device_memory_calls.hpp"

namespace {

std::atomic<long> calls{0};

}  // namespace

long mnist::testing::device_memory_calls() {
  return calls.load();
}

extern "C" {

cudaError_t __real_cudaMalloc(void** pointer, size_t bytes);
cudaError_t __real_cudaMallocManaged(void** pointer, size_t bytes, unsigned int flags);
cudaError_t __real_cudaMallocAsync(void** pointer, size_t bytes, cudaStream_t stream);
cudaError_t __real_cudaFree(void* pointer);
cudaError_t __real_cudaFreeAsync(void* pointer, cudaStream_t stream);

cudaError_t __wrap_cudaMalloc(void** pointer, size_t bytes) {
  ++calls;
  return __real_cudaMalloc(pointer, bytes);
}

cudaError_t __wrap_cudaMallocManaged(void** pointer, size_t bytes, unsigned int flags) {
  ++calls;
  return __real_cudaMallocManaged(pointer, bytes, flags);
}

cudaError_t __wrap_cudaMallocAsync(void** pointer, size_t bytes, cudaStream_t stream) {
  ++calls;
  return __real_cudaMallocAsync(pointer, bytes, stream);
}

cudaError_t __wrap_cudaFree(void* pointer) {
  ++calls;
  return __real_cudaFree(pointer);
}

cudaError_t __wrap_cudaFreeAsync(void* pointer, cudaStream_t stream) {
  ++calls;
  return __real_cudaFreeAsync(pointer, stream);
}

}  // extern "C"
