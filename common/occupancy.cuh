// Dynamic shared memory beyond 48 KB, and how many blocks of a kernel the whole GPU runs at once:
// what a split-K heuristic and a persistent grid are sized by; the configuration of a launch in
// clusters.
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

// The current GPU's SMs.
inline int multiprocessors() {
  int device = 0, sms = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return sms;
}

// Opts `kernel` in to `smem_bytes` and returns the SMs times the blocks of `threads` threads that
// fit on one SM. Launchers keep the answer in a static: the trainer uses one GPU throughout.
template <class Kernel>
int resident_blocks(Kernel kernel, int threads, int smem_bytes) {
  allow_shared_memory(kernel, smem_bytes);
  int per_sm = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem_bytes));
  return multiprocessors() * per_sm;
}

// A launch in thread block clusters of `cluster_blocks` blocks along x (chapter 11's GEMM, the
// on-chip steps of chapters 18-19): the configuration cudaLaunchKernelEx and
// cudaOccupancyMaxActiveClusters take.
// Not copyable: the configuration points at its own attribute.
struct ClusterLaunch {
  cudaLaunchAttribute attribute = {};
  cudaLaunchConfig_t config = {};
  ClusterLaunch(int cluster_blocks, int blocks, int threads, int smem_bytes, cudaStream_t stream) {
    attribute.id = cudaLaunchAttributeClusterDimension;
    attribute.val.clusterDim.x = cluster_blocks;
    attribute.val.clusterDim.y = attribute.val.clusterDim.z = 1;
    config.gridDim = dim3(blocks);
    config.blockDim = dim3(threads);
    config.dynamicSmemBytes = smem_bytes;
    config.stream = stream;
    config.attrs = &attribute;
    config.numAttrs = 1;
  }
  ClusterLaunch(const ClusterLaunch&) = delete;
  ClusterLaunch& operator=(const ClusterLaunch&) = delete;
};

}  // namespace mnist
