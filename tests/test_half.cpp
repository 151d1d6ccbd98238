// The host-side fp16 rounding of the CPU reference, on values whose binary16 rounding is known
// by hand. (tests/test_half_gpu.cu also compares it with the GPU's __float2half_rn.)
#include <cmath>

#include "check.hpp"
#include "half.hpp"

using namespace mnist;

int main() {
  const float ulp_at_one = std::ldexp(1.0f, -10);
  CHECK(round_to_half(1.0f) == 1.0f);
  CHECK(round_to_half(-2.5f) == -2.5f);
  CHECK(round_to_half(1.0f / 3) == 0.333251953125f);
  CHECK(round_to_half(1 + ulp_at_one / 2) == 1.0f);                    // tie: to even (down)
  CHECK(round_to_half(1 + 3 * ulp_at_one / 2) == 1 + 2 * ulp_at_one);  // tie: to even (up)
  CHECK(round_to_half(1 + ulp_at_one * 0.51f) == 1 + ulp_at_one);
  CHECK(round_to_half(65504.0f) == 65504.0f);  // largest half
  CHECK(round_to_half(65519.0f) == 65504.0f);
  CHECK(std::isinf(round_to_half(65520.0f)) && round_to_half(-65520.0f) < 0);
  CHECK(round_to_half(std::ldexp(1.0f, -14)) == std::ldexp(1.0f, -14));  // smallest normal
  CHECK(round_to_half(std::ldexp(1.0f, -24)) == std::ldexp(1.0f, -24));  // smallest subnormal
  CHECK(round_to_half(std::ldexp(1.0f, -25)) == 0.0f);                   // tie to even: zero
  CHECK(round_to_half(std::ldexp(3.0f, -25)) == std::ldexp(1.0f, -23));  // tie to even: up
  CHECK(round_to_half(std::ldexp(1.0f, -26)) == 0.0f);
  CHECK(round_to_half(0.0f) == 0.0f);
  CHECK(std::isnan(round_to_half(NAN)));
  return testing::finish("half");
}
