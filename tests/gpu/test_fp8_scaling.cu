// Delayed scaling on the device (common/fp8_scaling.cuh) against the CPU reference's
// (Fp8Scaling): tensors whose amaxes rise, fall and vanish over more quantisations than the
// history holds; after each one the device's scale must equal the reference's.
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "fp8_scaling.cuh"
#include "check.hpp"
#include "cuda_check.cuh"
#include "reference_trainer.hpp"
#include "rng.hpp"

using namespace mnist;

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    return testing::skip("fp8_scaling", "no CUDA GPU");
  }
  constexpr int kTensors = 5, kQuantisations = 3 * kFp8History;
  ScalingState* states;
  CUDA_CHECK(cudaMalloc(&states, kTensors * sizeof(ScalingState)));
  reset_scaling(states, kTensors, nullptr);
  std::vector<Fp8Scaling> reference(kTensors);
  SplitMix64 rng(16);
  int compared = 0;
  for (int q = 0; q < kQuantisations; ++q) {
    std::vector<ScalingState> host(kTensors);
    CUDA_CHECK(cudaMemcpy(host.data(), states, sizeof(ScalingState) * kTensors,
                          cudaMemcpyDeviceToHost));
    for (int t = 0; t < kTensors; ++t) {
      CHECK_MSG(host[t].scale == reference[t].scale(),
                "tensor " + std::to_string(t) + " before quantisation " + std::to_string(q) +
                    ": device scale " + std::to_string(host[t].scale) + ", reference " +
                    std::to_string(reference[t].scale()));
      ++compared;
      // Tensor t's amax: t = 0 constant, 1 rising, 2 falling, 3 random over 2^-30 .. 2^30, 4 zero
      // now and then.
      const float amax = t == 0   ? 3.0f
                         : t == 1 ? std::ldexp(1.0f, q - 20)
                         : t == 2 ? std::ldexp(1.0f, 20 - q)
                         : t == 3
                             ? std::ldexp(1.0f + rng.uniform01(), int(rng.uniform01() * 60) - 30)
                             : (q % 5 == 0 ? 0.0f : 1.5f);
      std::vector<double> values = {amax, -amax / 2};
      reference[t].quantise(values);
      unsigned bits;
      std::memcpy(&bits, &amax, sizeof bits);
      host[t].amax_bits = bits;
    }
    // The epilogues' part: the amax slots, here written from the host.
    for (int t = 0; t < kTensors; ++t) {
      CUDA_CHECK(cudaMemcpy(&states[t].amax_bits, &host[t].amax_bits, sizeof(unsigned),
                            cudaMemcpyHostToDevice));
    }
    advance_scaling(states, kTensors, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
  }
  CUDA_CHECK(cudaFree(states));
  std::printf("fp8_scaling: %d scales compared\n", compared);
  return testing::finish("fp8_scaling");
}
