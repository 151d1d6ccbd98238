// GPU time between two CUDA events recorded on a stream: how every benchmark here times its work
// (gemm_bench.cu, sync_costs.cu).
#pragma once

#include <cuda_runtime.h>

#include "cuda_check.cuh"

namespace mnist {

struct Events {
  cudaEvent_t start = nullptr, stop = nullptr;
};

// The GPU time of whatever `work` enqueues on `stream`.
template <class Work>
double elapsed_ms(Work work, const Events& events, cudaStream_t stream) {
  CUDA_CHECK(cudaEventRecord(events.start, stream));
  work();
  CUDA_CHECK(cudaEventRecord(events.stop, stream));
  CUDA_CHECK(cudaEventSynchronize(events.stop));
  float ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&ms, events.start, events.stop));
  return ms;
}

}  // namespace mnist
