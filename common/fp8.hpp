// The two 8-bit floating-point formats of Hopper's tensor cores (OCP 8-bit Floating Point
// Specification, "OFP8"), encoded and decoded bit by bit: a reference for the host and, compiled by
// nvcc, for device code.
//
//   E4M3:  s eeee mmm   bias 7,  no infinities, one NaN per sign (s.1111.111); max 448,
//                       min normal 2^-6, min subnormal 2^-9. For values: weights, activations.
//   E5M2:  s eeeee mm   bias 15, IEEE-like (s.11111.00 infinity, s.11111.01-11 NaN); max 57344,
//                       min normal 2^-14, min subnormal 2^-16. For range: gradients.
//
// Exponent field 0 holds the subnormals, m * 2^(1 - bias - mantissa bits).
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define MNIST_FP8_HOST_DEVICE __host__ __device__
#else
#define MNIST_FP8_HOST_DEVICE
#endif

namespace mnist {

constexpr float kE4m3Max = 448.0f;
constexpr float kE4m3MinNormal = 0x1p-6f;
constexpr float kE4m3MinSubnormal = 0x1p-9f;
constexpr float kE5m2Max = 57344.0f;
constexpr float kE5m2MinNormal = 0x1p-14f;
constexpr float kE5m2MinSubnormal = 0x1p-16f;

// The bit layout of each format; codes are of the magnitude (sign bit clear).
struct E4m3 {
  static constexpr int kMantissaBits = 3;
  static constexpr int kExponentBias = 7;
  static constexpr uint32_t kMaxCode = 0x7E;  // 0.1111.110 = 1.75 * 2^8 = kE4m3Max
  static constexpr uint32_t kNanCode = 0x7F;  // 0.1111.111, the code above kMaxCode
  static constexpr bool kHasInfinity = false;
};
struct E5m2 {
  static constexpr int kMantissaBits = 2;
  static constexpr int kExponentBias = 15;
  static constexpr uint32_t kMaxCode = 0x7B;  // 0.11110.11 = 1.75 * 2^15 = kE5m2Max
  static constexpr uint32_t kInfCode = 0x7C;  // 0.11111.00, the code above kMaxCode
  static constexpr uint32_t kNanCode = 0x7E;  // 0.11111.10, the quiet NaN
  static constexpr bool kHasInfinity = true;
};

constexpr uint32_t kFp8SignBit = 0x80;
constexpr int kFloatMantissaBits = 23;
constexpr int kFloatExponentBias = 127;
constexpr uint32_t kFloatInfinityBits = 0x7F800000u;  // magnitudes above it are NaN

MNIST_FP8_HOST_DEVICE inline uint32_t float_bits(float x) {
  uint32_t bits;
  memcpy(&bits, &x, sizeof bits);
  return bits;
}

MNIST_FP8_HOST_DEVICE inline float bits_float(uint32_t bits) {
  float x;
  memcpy(&x, &bits, sizeof x);
  return x;
}

// 2^e for e a normal float exponent (-126..127), exactly.
MNIST_FP8_HOST_DEVICE inline float power_of_two(int e) {
  return bits_float(uint32_t(e + kFloatExponentBias) << kFloatMantissaBits);
}

// x to the nearest code, ties to the even code; a magnitude beyond the largest finite value,
// infinity included, gives that value with x's sign, and NaN the NaN code: what PTX's
// cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32 does (PTX ISA, "Data Movement and Conversion Instructions:
// cvt", .satfinite), and NVIDIA's __nv_cvt_float_to_fp8(x, __NV_SATFINITE, ...) with it.
template <class Format>
MNIST_FP8_HOST_DEVICE inline uint8_t encode_fp8(float x) {
  constexpr int kM = Format::kMantissaBits;
  constexpr int kMinExponent =
      1 - Format::kExponentBias;  // of the normals, and the subnormals' scale
  const uint32_t bits = float_bits(x);
  const uint32_t sign = (bits >> 24) & kFp8SignBit;
  const uint32_t magnitude = bits & 0x7FFFFFFFu;
  if (magnitude > kFloatInfinityBits) return uint8_t(sign | Format::kNanCode);
  // x = significand * 2^(exponent - 23), significand with its hidden bit (float subnormals,
  // below 2^-126, lie far under half the smallest fp8 subnormal and round to zero below).
  const int exponent = int(magnitude >> kFloatMantissaBits) - kFloatExponentBias;
  const uint32_t significand = (magnitude & 0x7FFFFFu) | 0x800000u;
  // Count x in units of the fp8 spacing at its exponent, 2^(e - kM), where the subnormals share
  // the normals' smallest exponent: the float's low `shift` bits are rounded off.
  const int e = exponent > kMinExponent ? exponent : kMinExponent;
  const int shift = kFloatMantissaBits - kM + (e - exponent);
  if (shift > kFloatMantissaBits + 2) return uint8_t(sign);  // below half the smallest subnormal
  uint32_t units = significand >> shift;
  const uint32_t rest = significand & ((1u << shift) - 1);
  const uint32_t half = 1u << (shift - 1);
  if (rest > half || (rest == half && (units & 1))) ++units;
  // Units below 2^kM are a subnormal's mantissa; from 2^kM the hidden bit adds one to the
  // exponent field, and a rounding carry to 2^(kM + 1) moves on to the next exponent by itself.
  uint32_t code = (uint32_t(e - kMinExponent) << kM) + units;
  if (code > Format::kMaxCode) code = Format::kMaxCode;  // satfinite
  return uint8_t(sign | code);
}

// The value of a code, exactly (every fp8 value is a normal float).
template <class Format>
MNIST_FP8_HOST_DEVICE inline float decode_fp8(uint8_t code) {
  constexpr int kM = Format::kMantissaBits;
  const uint32_t magnitude = code & ~kFp8SignBit;
  const float sign = (code & kFp8SignBit) ? -1.0f : 1.0f;
  if constexpr (Format::kHasInfinity) {
    if (magnitude == Format::kInfCode) return sign * bits_float(kFloatInfinityBits);
  }
  if (magnitude > Format::kMaxCode) return bits_float(0x7FC00000u);  // NaN
  const int field = int(magnitude >> kM);
  const uint32_t mantissa = magnitude & ((1u << kM) - 1);
  const uint32_t units = field == 0 ? mantissa : mantissa | (1u << kM);
  const int e = (field == 0 ? 1 : field) - Format::kExponentBias;
  return sign * float(units) * power_of_two(e - kM);
}

// Delayed scaling: a tensor's scale comes from the largest amax of its last kFp8History
// quantisations (common/reference_trainer's Fp8Scaling, common/fp8_scaling.cuh).
constexpr int kFp8History = 16;

// Per-tensor scaling: the scale s that maps amax (>= 0) to about format_max, so that amax * s
// uses the format's range; the tensor is stored as encode(x * s) and read back as decode / s.
// s is a power of two, the largest with amax * s <= format_max: multiplying by it changes only
// exponents, so scaling and unscaling add no rounding of their own (short of float underflow),
// at the cost of up to one binade of the range left unused. amax == 0, a tensor of zeros, needs
// no scaling: 1. format_max is kE4m3Max or kE5m2Max: with their 3 significant bits the quotient
// below is never rounded up to the power of two above it (the test tries every amax in [1, 2)).
MNIST_FP8_HOST_DEVICE inline float fp8_scale(float amax, float format_max) {
  if (amax == 0.0f) return 1.0f;
  const uint32_t quotient = float_bits(format_max / amax);
  if (quotient >= kFloatInfinityBits) return power_of_two(127);  // amax too small for a float s
  return bits_float(quotient & 0xFF800000u);  // mantissa dropped: the power of two below
}

}  // namespace mnist
