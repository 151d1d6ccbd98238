// Session 23 experiment: a weight gradient with the SGD epilogue (as the trainer runs it), against
// a streaming kernel that moves the same bytes (read master fp32, write master fp32, write fp16)
// and against cudaMemcpy D2D. CUDA-graph replay, median.
#include <cuda_fp16.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>
#include "cuda_check.cuh"
#include "gemm_interface.cuh"
#include "rng.hpp"
using namespace mnist;
constexpr int kLaunches = 10, kReplays = 11;

__global__ void stream_sgd(const float* __restrict__ in, float* master, __half* out, size_t n4, float lr) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n4; i += size_t(gridDim.x) * blockDim.x) {
    float4 m = reinterpret_cast<const float4*>(master)[i];
    const float g = 1e-3f * float(i & 7);
    m.x -= lr * g; m.y -= lr * g; m.z -= lr * g; m.w -= lr * g;
    reinterpret_cast<float4*>(master)[i] = m;
    __half2 a = __floats2half2_rn(m.x, m.y), b = __floats2half2_rn(m.z, m.w);
    uint2 v; v.x = *reinterpret_cast<unsigned*>(&a); v.y = *reinterpret_cast<unsigned*>(&b);
    reinterpret_cast<uint2*>(out)[i] = v;
  }
}

template <class F>
double time_it(cudaStream_t s, F&& f) {
  cudaGraph_t g; cudaGraphExec_t e;
  CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < kLaunches; ++i) f();
  CUDA_CHECK(cudaStreamEndCapture(s, &g));
  CUDA_CHECK(cudaGraphInstantiate(&e, g, 0));
  CUDA_CHECK(cudaGraphLaunch(e, s));
  cudaEvent_t a, b; CUDA_CHECK(cudaEventCreate(&a)); CUDA_CHECK(cudaEventCreate(&b));
  std::vector<float> ms(kReplays);
  for (float& t : ms) {
    CUDA_CHECK(cudaEventRecord(a, s)); CUDA_CHECK(cudaGraphLaunch(e, s)); CUDA_CHECK(cudaEventRecord(b, s));
    CUDA_CHECK(cudaEventSynchronize(b)); CUDA_CHECK(cudaEventElapsedTime(&t, a, b));
  }
  std::nth_element(ms.begin(), ms.begin() + kReplays / 2, ms.end());
  CUDA_CHECK(cudaGraphExecDestroy(e)); CUDA_CHECK(cudaGraphDestroy(g));
  return 1000.0 * ms[kReplays / 2] / kLaunches;
}

int main(int argc, char** argv) {
  cudaStream_t s; CUDA_CHECK(cudaStreamCreate(&s));
  float* ws; CUDA_CHECK(cudaMalloc(&ws, kGemmWorkspaceFloats * sizeof(float)));
  for (int i = 1; i + 2 < argc; i += 3) {
    const int m = std::stoi(argv[i]), n = std::stoi(argv[i + 1]), k = std::stoi(argv[i + 2]);
    SplitMix64 rng(m + n + k);
    std::vector<__half> a(size_t(k) * m), b(size_t(k) * n);
    for (auto& x : a) x = __float2half_rn(2 * rng.uniform01() - 1);
    for (auto& x : b) x = __float2half_rn(2 * rng.uniform01() - 1);
    std::vector<float> master(size_t(m) * n);
    for (auto& x : master) x = 2 * rng.uniform01() - 1;
    __half *ad, *bd, *out; float *md, *copy;
    CUDA_CHECK(cudaMalloc(&ad, a.size() * 2)); CUDA_CHECK(cudaMalloc(&bd, b.size() * 2));
    CUDA_CHECK(cudaMalloc(&md, master.size() * 4)); CUDA_CHECK(cudaMalloc(&copy, master.size() * 4));
    CUDA_CHECK(cudaMalloc(&out, master.size() * 2));
    CUDA_CHECK(cudaMemcpy(ad, a.data(), a.size() * 2, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(bd, b.data(), b.size() * 2, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(md, master.data(), master.size() * 4, cudaMemcpyHostToDevice));
    GemmProblem p{m, n, k, ad, Op::T, bd, Op::N, nullptr, ws, kGemmWorkspaceFloats};
    p.epilogue = {EpilogueKind::kSgd, nullptr, nullptr, md, out, 1e-6f};
    const double bytes = 10.0 * m * n;
    p.epilogue.learning_rate = 1.0f;  // the check: master - v against float64
    gemm(p, s);
    CUDA_CHECK(cudaStreamSynchronize(s));
    {
      std::vector<float> got(master.size());
      CUDA_CHECK(cudaMemcpy(got.data(), md, got.size() * 4, cudaMemcpyDeviceToHost));
      int wrong = 0;
      for (int t = 0; t < 4096; ++t) {
        const int r = t == 0 ? m - 1 : int(rng.below(m)), c = t == 0 ? n - 1 : int(rng.below(n));
        double v = 0, mag = 0;
        for (int q = 0; q < k; ++q) {
          const double x = __half2float(a[size_t(q) * m + r]) * double(__half2float(b[size_t(q) * n + c]));
          v += x, mag += std::fabs(x);
        }
        const double want = master[size_t(r) * n + c] - v;
        if (!(std::fabs(got[size_t(r) * n + c] - want) <= (k + 2) * std::ldexp(1.0, -23) * (mag + std::fabs(want)))) ++wrong;
      }
      if (wrong) std::printf("WRONG: %d of 4096 sampled elements\n", wrong);
    }
    p.epilogue.learning_rate = 1e-6f;
    const double t_gemm = time_it(s, [&] { gemm(p, s); });
    const size_t n4 = size_t(m) * n / 4;
    const double t_stream = time_it(s, [&] {
      stream_sgd<<<132 * 8, 256, 0, s>>>(copy, md, out, n4, 1e-6f); CUDA_CHECK(cudaGetLastError()); });
    const double t_copy = time_it(s, [&] {
      CUDA_CHECK(cudaMemcpyAsync(copy, md, master.size() * 4, cudaMemcpyDeviceToDevice, s)); });
    std::printf("%5d x %5d x %4d  sgd gemm %8.2f us %6.2f TB/s | stream %8.2f us %6.2f TB/s | copy %8.2f us %6.2f TB/s\n",
                m, n, k, t_gemm, bytes / t_gemm / 1e6, t_stream, bytes / t_stream / 1e6, t_copy,
                8.0 * m * n / t_copy / 1e6);
    for (void* x : {(void*)ad, (void*)bd, (void*)md, (void*)copy, (void*)out}) CUDA_CHECK(cudaFree(x));
  }
  return 0;
}
