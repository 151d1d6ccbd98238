// Dynamic shared memory beyond 48 KB, and how many blocks of a kernel the whole GPU runs at once:
// what a split-K heuristic and a persistent grid are sized by.
#pragma once

#include <cuda_runtime.h>

#include "cuda_check.cuh"

namespace mnist {

// Opts `kernel` in to `smem_bytes` of dynamic shared memory: a kernel may use more than 48 KB only
// after asking. Returns true, so that a launcher asks once, from a static's initialiser:
//   static const bool opted_in = allow_shared_memory(kernel, bytes);
template <class Kernel>
bool allow_shared_memory(Kernel kernel, int smem_bytes) {
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes));
  return true;
}

// Opts `kernel` in to `smem_bytes` and returns the SMs times the blocks of `threads` threads that
// fit on one SM. Launchers keep the answer in a static: the trainer uses one GPU throughout.
template <class Kernel>
int resident_blocks(Kernel kernel, int threads, int smem_bytes) {
  allow_shared_memory(kernel, smem_bytes);
  int device = 0, sms = 0, per_sm = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem_bytes));
  return sms * per_sm;
}

}  // namespace mnist
