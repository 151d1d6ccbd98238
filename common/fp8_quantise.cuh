// Quantising to e4m3 on the device, for the epilogues that write a tensor's fp8 copy: two floats
// to their codes in one instruction, and the tensor's amax, the largest |x| its blocks quantised.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace mnist {

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890

// The e4m3 codes of a * scale (low byte) and b * scale (high byte): cvt.rn.satfinite rounds to
// the nearest code, ties to even, and saturates at +-448, as common/fp8.hpp's encode_fp8<E4m3>.
// cvt puts its first source in the high byte.
__device__ __forceinline__ uint16_t quantise_pair(float a, float b, float scale) {
  uint16_t codes;
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;\n" : "=h"(codes) : "f"(b * scale), "f"(a * scale));
  return codes;
}

// Raises *amax to the largest |x| of the warp's threads (all 32 call it). The bits of a
// non-negative float order as the float does, so an unsigned maximum does.
__device__ __forceinline__ void record_amax(unsigned* amax, float x) {
  const unsigned largest = __reduce_max_sync(0xFFFFFFFFu, __float_as_uint(fabsf(x)));
  if (threadIdx.x % 32 == 0) atomicMax(amax, largest);
}

// Two neighbours' codes (the first in the low byte) into a copy where they lie side by side, at
// `pair` (one 16-bit store where `aligned`, the address even), and into the copy where they lie
// `stride` bytes apart, from `strided` (null: no such copy); the second code only where `both`.
__device__ __forceinline__ void store_codes(uint16_t codes, bool both, uint8_t* pair, bool aligned,
                                            uint8_t* strided, size_t stride) {
  if (both && aligned) {
    *reinterpret_cast<uint16_t*>(pair) = codes;
  } else {
    pair[0] = uint8_t(codes);
    if (both) pair[1] = uint8_t(codes >> 8);
  }
  if (strided) {
    strided[0] = uint8_t(codes);
    if (both) strided[stride] = uint8_t(codes >> 8);
  }
}

// The values of two e4m3 codes (the first in the low byte), exactly.
__device__ __forceinline__ float2 dequantise_pair(uint16_t codes) {
  uint32_t halves;
  asm("cvt.rn.f16x2.e4m3x2 %0, %1;\n" : "=r"(halves) : "h"(codes));
  return __half22float2(*reinterpret_cast<const __half2*>(&halves));
}

#endif

}  // namespace mnist
