// IEEE binary16 rounding on the host, without CUDA headers, for the CPU reference: the GPU
// trainers round GEMM operands to fp16, and the reference can do exactly the same.
#pragma once

#include <algorithm>
#include <cmath>

namespace mnist {

// The nearest binary16 value (ties to even), returned as a float. Overflow gives +-inf.
inline float round_to_half(float x) {
  constexpr float kOverflowThreshold = 65520.0f;  // halfway between 65504 (max half) and 2^16
  constexpr int kMantissaBits = 10;
  constexpr int kSmallestSubnormalExponent = -24;
  if (std::isnan(x)) return x;
  const float magnitude = std::fabs(x);
  if (magnitude >= kOverflowThreshold) return std::copysign(INFINITY, x);
  int exponent;
  std::frexp(magnitude, &exponent);  // magnitude = f * 2^exponent, f in [0.5, 1)
  const int ulp_exponent = std::max(exponent - 1 - kMantissaBits, kSmallestSubnormalExponent);
  const float units = std::nearbyint(std::ldexp(magnitude, -ulp_exponent));  // ties to even
  return std::copysign(std::ldexp(units, ulp_exponent), x);
}

}  // namespace mnist
