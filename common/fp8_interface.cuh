// The FP8 chapters' GEMM interface, as gemm_interface.cuh is the fp16 chapters': one product of
// e4m3 operands and what its epilogue leaves. The FP8 training step (fp8_step.cuh) asks the
// chapter's launch_fp8_gemm(problem, epilogue, stream) for every product of the hidden layers:
// kQuantise and kUpdate only of a chapter that fuses them (Fp8Epilogues::kFused); of the others
// kStore, and finish_fp8_kernel does the rest in a pass over C.
#pragma once

#include <cuda_fp16.h>

#include <cstdint>

#include "fp8_scaling.cuh"

namespace mnist {

// C = *scale_a * *scale_b * (A B^T): A (m x k) and B (n x k) in e4m3, both K-major (row-major with
// k contiguous: FP8 wgmma reads no other layout), k a multiple of 16 (TMA's row pitch). The scales
// undo the operands' quantisation (ScalingState::unscale); device pointers, so that a scale
// computed on the GPU needs no trip to the host.
struct Fp8Problem {
  int m, n, k;
  const uint8_t* a;
  const uint8_t* b;
  const float* scale_a;
  const float* scale_b;
};

enum class Fp8EpilogueKind {
  kStore,     // C into c, m x n fp32
  kBiasRelu,  // fp16 ReLU(C + bias) into out, m x n: the last hidden layer, for the fp16 output
              // layer
  // Quantised at scaling->scale into x (m x n) and x_t (n x m, rows t_pitch codes apart), amax and
  // unscale into *scaling: forward, ReLU(C + bias), the next layer's input; backward data (active
  // set), C where active's code is > 0, the layer below's gradient.
  kQuantise,
  // SGD on a weight gradient's product: master (m x n fp32) -= learning_rate C, its e4m3
  // copy into x and, where not null, the transposed copy into x_t (t_pitch = m), amax and unscale
  // into *scaling.
  kUpdate,
};

struct Fp8Epilogue {
  Fp8EpilogueKind kind = Fp8EpilogueKind::kStore;
  float* c = nullptr;
  const float* bias = nullptr;
  __half* out = nullptr;
  const uint8_t* active = nullptr;  // m x n e4m3
  uint8_t* x = nullptr;
  uint8_t* x_t = nullptr;
  int t_pitch = 0;
  float* master = nullptr;
  float learning_rate = 0.0f;
  ScalingState* scaling = nullptr;
};

}  // namespace mnist
