// Every CUDA runtime call and every kernel launch goes through these, so that a failure becomes
// one line naming the call, the file and the line, instead of a wrong answer later.
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace mnist {

struct CudaError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

inline void check_cuda(cudaError_t status, const char* call, const char* file, int line) {
  if (status != cudaSuccess) {
    throw CudaError(std::string(file) + ":" + std::to_string(line) + ": " + call + " failed: " +
                    cudaGetErrorName(status) + " (" + cudaGetErrorString(status) + ")");
  }
}

}  // namespace mnist

#define CUDA_CHECK(call) ::mnist::check_cuda((call), #call, __FILE__, __LINE__)
// After a <<<...>>> launch: reports bad launch configurations at once. Faults inside the kernel
// surface at the next synchronising call, which is checked too.
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())
