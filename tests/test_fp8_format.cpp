// The fp8 encodings of common/fp8.hpp against a brute-force reference (the nearest
// of all 256 decoded codes) on every finite fp16 value and on a million random floats, on edge
// cases written out, and, where <cuda_fp8.h> is on the include path (the CUDA build), against
// NVIDIA's own conversions.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "fp8.hpp"
#include "check.hpp"
#include "rng.hpp"

#if __has_include(<cuda_fp8.h>)
#include <cuda_fp8.h>
#define MNIST_HAVE_CUDA_FP8 1
#endif

using namespace mnist;

namespace {

constexpr int kRandomFloats = 1000000;
constexpr uint64_t kSeed = 20;

std::string hex(unsigned value) {
  char buffer[16];
  std::snprintf(buffer, sizeof buffer, "0x%02X", value);
  return buffer;
}

std::string text(float value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.9g", value);
  return buffer;
}

// The value of an IEEE binary16 bit pattern.
float half_value(uint16_t bits) {
  const int field = (bits >> 10) & 0x1F;
  const int mantissa = bits & 0x3FF;
  const float sign = (bits & 0x8000) ? -1.0f : 1.0f;
  if (field == 0x1F) return mantissa ? NAN : sign * INFINITY;
  if (field == 0) return sign * std::ldexp(float(mantissa), -24);
  return sign * std::ldexp(float(mantissa | 0x400), field - 25);
}

// Every finite fp16 value, +-0 included.
std::vector<float> finite_halves() {
  std::vector<float> values;
  for (uint32_t bits = 0; bits <= 0xFFFF; ++bits) {
    const float v = half_value(uint16_t(bits));
    if (std::isfinite(v)) values.push_back(v);
  }
  return values;
}

// Random floats from 2^-28 (under both formats' smallest subnormal / 2) to 2^19 (over both
// maxima), with a random count of significant bits, so that ties and near-ties come often.
std::vector<float> random_floats() {
  SplitMix64 rng(kSeed);
  std::vector<float> values(kRandomFloats);
  for (float& v : values) {
    const int bits = int(rng.below(24));
    const float significand = 1.0f + std::ldexp(float(rng.below(1u << bits)), -bits);
    const int exponent = int(rng.below(48)) - 28;
    v = (rng.below(2) ? -1.0f : 1.0f) * std::ldexp(significand, exponent);
  }
  return values;
}

template <class Format>
std::vector<float> decoded_codes() {
  std::vector<float> values(256);
  for (int code = 0; code < 256; ++code) values[code] = decode_fp8<Format>(uint8_t(code));
  return values;
}

// The nearest finite code by scanning them all, ties to the even code (the even mantissa), and
// saturation since no code beyond the largest finite is a candidate; infinities saturate as PTX's
// .satfinite says. The distances are exact in double for the codes next to x, the only ones that
// can tie.
template <class Format>
uint8_t nearest_code(float x, const std::vector<float>& decoded) {
  const uint32_t sign = std::signbit(x) ? kFp8SignBit : 0;
  if (std::isnan(x)) return uint8_t(sign | Format::kNanCode);
  if (std::isinf(x)) return uint8_t(sign | Format::kMaxCode);
  const double magnitude = std::fabs(double(x));
  uint32_t best = 0;
  double best_distance = magnitude;
  for (uint32_t code = 1; code <= Format::kMaxCode; ++code) {
    const double distance = std::fabs(double(decoded[code]) - magnitude);
    if (distance < best_distance || (distance == best_distance && code % 2 == 0))
      best = code, best_distance = distance;
  }
  return uint8_t(sign | best);
}

// (a) Each code decodes to a value that encodes back to it; NaN stays NaN, and infinity (E5M2)
// saturates to the largest finite value of its sign.
template <class Format>
void check_round_trips(const char* name) {
  for (int code = 0; code < 256; ++code) {
    const float v = decode_fp8<Format>(uint8_t(code));
    const uint8_t again = encode_fp8<Format>(v);
    const uint32_t want = std::isinf(v) ? (code & kFp8SignBit) | Format::kMaxCode : code;
    const std::string where = std::string(name) + " code " + hex(code);
    if (std::isnan(v))
      CHECK_MSG(std::isnan(decode_fp8<Format>(again)), where);
    else
      CHECK_MSG(again == want, where + " -> " + hex(again));
  }
}

// (b) The encoding against the brute-force reference; returns the count compared.
template <class Format>
int check_against_nearest(const char* name, const std::vector<float>& values) {
  const std::vector<float> decoded = decoded_codes<Format>();
  int failed = 0;
  for (float x : values) {
    const uint8_t got = encode_fp8<Format>(x);
    const uint8_t want = nearest_code<Format>(x, decoded);
    if (got != want && ++failed <= 5)
      CHECK_MSG(got == want, std::string(name) + " of " + text(x) + ": " + hex(got) +
                                 ", the nearest is " + hex(want));
  }
  CHECK_MSG(failed == 0, std::string(name) + ": " + std::to_string(failed) + " values differ");
  return int(values.size());
}

// (c) The edge cases, by hand.
template <class Format>
void check_edges(const char* name, float max, float min_normal, float min_subnormal) {
  constexpr uint32_t kMax = Format::kMaxCode;
  constexpr uint32_t kNegative = kFp8SignBit;
  const int normal_code = 1 << Format::kMantissaBits;  // min normal: exponent field 1, mantissa 0
  const float spacing_at_max = max / (2 * normal_code - 1);  // max = (2^(M+1) - 1) units
  const std::string n = std::string(name) + ": ";
  auto encodes = [&](float x, uint32_t want, const char* what) {
    const uint8_t got = encode_fp8<Format>(x);
    CHECK_MSG(got == want, n + what + " -> " + hex(got) + ", not " + hex(want));
  };
  CHECK_MSG(decode_fp8<Format>(kMax) == max, n + "the largest finite code");
  CHECK_MSG(decode_fp8<Format>(uint8_t(normal_code)) == min_normal, n + "the smallest normal");
  CHECK_MSG(decode_fp8<Format>(1) == min_subnormal, n + "the smallest subnormal");
  CHECK_MSG(std::isnan(decode_fp8<Format>(0xFF)) && std::isnan(decode_fp8<Format>(0x7F)),
            n + "0x7F and 0xFF are NaN");
  encodes(0.0f, 0, "+0");
  encodes(-0.0f, kNegative, "-0");
  encodes(max, kMax, "max");
  encodes(-max, kNegative | kMax, "-max");
  encodes(std::nextafter(max, INFINITY), kMax, "just above max");
  encodes(max + spacing_at_max / 2, kMax, "halfway from max to the next would-be value");
  encodes(std::nextafter(max + spacing_at_max / 2, INFINITY), kMax, "just above that halfway");
  encodes(max + spacing_at_max, kMax, "the next would-be value");
  encodes(-2 * max, kNegative | kMax, "-2 max");
  encodes(1e30f, kMax, "1e30");
  encodes(INFINITY, kMax, "+inf");  // PTX ISA, cvt: .satfinite takes infinities to MAX_NORM
  encodes(-INFINITY, kNegative | kMax, "-inf");
  encodes(NAN, Format::kNanCode, "NaN");
  encodes(-NAN, kNegative | Format::kNanCode, "-NaN");
  encodes(min_subnormal / 2, 0, "min subnormal / 2 (tie to even: 0)");
  encodes(-min_subnormal / 2, kNegative, "-min subnormal / 2");
  encodes(std::nextafter(min_subnormal / 2, 1.0f), 1, "just above min subnormal / 2");
  encodes(std::nextafter(min_subnormal / 2, 0.0f), 0, "just below min subnormal / 2");
  encodes(min_subnormal, 1, "min subnormal");
  encodes(1.5f * min_subnormal, 2, "1.5 subnormals (tie to even: 2)");
  encodes(2.5f * min_subnormal, 2, "2.5 subnormals (tie to even: 2)");
  encodes(std::nextafter(2.5f * min_subnormal, 1.0f), 3, "just above 2.5 subnormals");
  encodes(min_normal - min_subnormal / 2, normal_code,
          "halfway from the largest subnormal to min normal (tie to even: min normal)");
  encodes(min_normal, normal_code, "min normal");
  const float one = 1.0f, step = 1.0f / normal_code;  // the spacing of the codes in [1, 2)
  const uint8_t one_code = encode_fp8<Format>(one);
  CHECK_MSG(decode_fp8<Format>(one_code) == one, n + "1");
  encodes(one + step / 2, one_code, "1 + half a step (tie to even: 1)");
  encodes(one + 3 * step / 2, one_code + 2u, "1 + 1.5 steps (tie to even: 1 + 2 steps)");
  encodes(-(one + 3 * step / 2), kNegative | (one_code + 2u), "-(1 + 1.5 steps)");
  encodes(2 - step / 2, encode_fp8<Format>(2.0f), "2 - half a step (tie to even: 2)");
}

// The per-tensor scale: the largest power of two s with amax * s <= max, on every amax in [1, 2)
// and for every float exponent e on 1.5 * 2^e, or 2^e where that is a float subnormal.
void check_scale(const char* name, float max) {
  const std::string n = std::string(name) + " scale: ";
  CHECK_MSG(fp8_scale(0.0f, max) == 1.0f, n + "amax 0");
  CHECK_MSG(fp8_scale(max, max) == 1.0f, n + "amax = max");
  CHECK_MSG(fp8_scale(1e-45f, max) == 0x1p127f, n + "the smallest float: the largest power of two");
  int failed = 0;
  auto check = [&](float amax) {
    const float s = fp8_scale(amax, max);
    int exponent;
    const bool power_of_two = std::frexp(s, &exponent) == 0.5f;
    const bool largest = s == 0x1p127f || 2 * amax * s > max;  // else 2 s would fit too
    const bool ok = power_of_two && amax * s <= max && largest;
    if (!ok && ++failed <= 5) CHECK_MSG(ok, n + "amax " + text(amax) + ", scale " + text(s));
  };
  for (uint32_t bits = float_bits(1.0f); bits < float_bits(2.0f); ++bits) check(bits_float(bits));
  for (int e = -149; e <= 127; ++e) check(std::ldexp(e < -126 ? 1.0f : 1.5f, e));
  CHECK_MSG(failed == 0, n + std::to_string(failed) + " amax values");
}

#ifdef MNIST_HAVE_CUDA_FP8
// (d) NVIDIA's __nv_cvt_float_to_fp8 with __NV_SATFINITE on every value. Returns the count
// compared.
template <class Format>
int check_encodes_as_nvidia(const char* name, __nv_fp8_interpretation_t kind,
                            const std::vector<float>& values) {
  int failed = 0;
  for (float x : values) {
    const uint8_t got = encode_fp8<Format>(x);
    const uint8_t want = __nv_cvt_float_to_fp8(x, __NV_SATFINITE, kind);
    if (got != want && ++failed <= 5)
      CHECK_MSG(got == want,
                std::string(name) + " of " + text(x) + ": " + hex(got) + ", NVIDIA's " + hex(want));
  }
  CHECK_MSG(failed == 0,
            std::string(name) + ": " + std::to_string(failed) + " encodings differ from NVIDIA's");
  return int(values.size());
}

// ... and __nv_cvt_fp8_to_halfraw on every code, __nv_cvt_float_to_fp8 on +-inf and +-NaN (NaN
// codes compared as NaN, not bit for bit). Returns the count compared.
template <class Format>
int check_codes_as_nvidia(const char* name, __nv_fp8_interpretation_t kind) {
  const std::string n = std::string(name) + ": ";
  for (int code = 0; code < 256; ++code) {
    const float got = decode_fp8<Format>(uint8_t(code));
    const float want = half_value(__nv_cvt_fp8_to_halfraw(uint8_t(code), kind).x);
    CHECK_MSG(std::isnan(want) ? std::isnan(got) : got == want,
              n + "decode of " + hex(code) + ": " + text(got) + ", NVIDIA's " + text(want));
  }
  const float specials[] = {INFINITY, -INFINITY, NAN, -NAN};
  for (float x : specials) {
    const uint8_t got = encode_fp8<Format>(x);
    const uint8_t want = __nv_cvt_float_to_fp8(x, __NV_SATFINITE, kind);
    const bool same =
        std::isnan(x) ? std::isnan(decode_fp8<Format>(got)) && std::isnan(decode_fp8<Format>(want))
                      : got == want;
    CHECK_MSG(same, n + text(x) + ": " + hex(got) + ", NVIDIA's " + hex(want));
  }
  return 256 + 4;
}
#endif

}  // namespace

int main() {
  const std::vector<float> halves = finite_halves();
  const std::vector<float> randoms = random_floats();
  check_round_trips<E4m3>("E4M3");
  check_round_trips<E5m2>("E5M2");
  int compared = 0;
  for (const std::vector<float>* values : {&halves, &randoms}) {
    compared += check_against_nearest<E4m3>("E4M3", *values);
    compared += check_against_nearest<E5m2>("E5M2", *values);
  }
  std::printf(
      "fp8_format: %d encodings against the nearest code (%zu finite fp16 values and %zu "
      "random floats, each format)\n",
      compared, halves.size(), randoms.size());
  check_edges<E4m3>("E4M3", kE4m3Max, kE4m3MinNormal, kE4m3MinSubnormal);
  check_edges<E5m2>("E5M2", kE5m2Max, kE5m2MinNormal, kE5m2MinSubnormal);
  check_scale("E4M3", kE4m3Max);
  check_scale("E5M2", kE5m2Max);
#ifdef MNIST_HAVE_CUDA_FP8
  int nvidia = check_codes_as_nvidia<E4m3>("E4M3", __NV_E4M3) +
               check_codes_as_nvidia<E5m2>("E5M2", __NV_E5M2);
  for (const std::vector<float>* values : {&halves, &randoms}) {
    nvidia += check_encodes_as_nvidia<E4m3>("E4M3", __NV_E4M3, *values);
    nvidia += check_encodes_as_nvidia<E5m2>("E5M2", __NV_E5M2, *values);
  }
  std::printf("fp8_format: %d conversions against NVIDIA's <cuda_fp8.h>\n", nvidia);
#else
  std::printf("fp8_format: no <cuda_fp8.h> on the include path: NVIDIA comparison skipped\n");
#endif
  return testing::finish("fp8_format");
}
