// Delayed scaling on the device, as common/reference_trainer's Fp8Scaling on the host: per tensor,
// the epilogues that quantise it raise an amax slot, and after each quantisation of every tensor
// advance_scaling moves the slot into a history of the last kFp8History amaxes and sets the scale
// the next quantisation uses: fp8_scale of the history's largest amax, 1 while it is empty.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "cuda_check.cuh"
#include "fp8.hpp"

namespace mnist {

struct ScalingState {
  unsigned amax_bits;          // this quantisation's amax, as the bits of a non-negative float
  int count;                   // amaxes in the history, up to kFp8History
  float history[kFp8History];  // the newest at count - 1
  float scale;                 // for the next quantisation
  float unscale;               // 1 / the scale of the copy in memory: a product's factor
};

#if defined(__CUDA_ARCH__)
// What every warp that quantised part of a tensor does (lane 0 writes): all write the same value,
// which only later kernels read (a weight copy's in the next step, after advance_scaling moved
// `scale` on). Every warp, not thread 0: in the GEMMs' epilogues thread 0 is the producer's.
__device__ __forceinline__ void note_quantised(ScalingState* s, float scale) {
  if (threadIdx.x % 32 == 0) s->unscale = 1.0f / scale;
}
#endif

// One thread per tensor.
__global__ void advance_scaling_kernel(ScalingState* states, int tensors) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= tensors) return;
  ScalingState& s = states[t];
  if (s.count == kFp8History) {
    for (int i = 1; i < kFp8History; ++i) s.history[i - 1] = s.history[i];
    --s.count;
  }
  s.history[s.count++] = __uint_as_float(s.amax_bits);
  s.amax_bits = 0;
  float largest = 0.0f;
  for (int i = 0; i < s.count; ++i) largest = fmaxf(largest, s.history[i]);
  s.scale = fp8_scale(largest, kE4m3Max);
}

// A state before any quantisation: no history, scale 1 (cudaMemset cannot write the 1).
__global__ void reset_scaling_kernel(ScalingState* states, int tensors) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < tensors) states[t] = {0u, 0, {}, 1.0f, 1.0f};
}

inline void advance_scaling(ScalingState* states, int tensors, cudaStream_t stream) {
  advance_scaling_kernel<<<(tensors + 127) / 128, 128, 0, stream>>>(states, tensors);
  CUDA_CHECK(cudaGetLastError());
}

inline void reset_scaling(ScalingState* states, int tensors, cudaStream_t stream) {
  reset_scaling_kernel<<<(tensors + 127) / 128, 128, 0, stream>>>(states, tensors);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace mnist
