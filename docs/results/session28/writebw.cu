// Write bandwidth of the H100 for an 8192 x 8192 fp32 matrix (268 MB): cudaMemsetAsync, a float4
// store kernel at several grid sizes, and a D2D copy. Events, median of 21.
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <vector>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { std::printf("error: %s\n", cudaGetErrorString(e)); return 1; } } while (0)
__global__ void store4(float4* p, size_t n4, float v) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n4; i += size_t(gridDim.x) * blockDim.x)
    p[i] = make_float4(v, v, v, v);
}
template <class F> float median_ms(F f) {
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  f(); cudaDeviceSynchronize();
  std::vector<float> t(21);
  for (float& x : t) { cudaEventRecord(a); f(); cudaEventRecord(b); cudaEventSynchronize(b); cudaEventElapsedTime(&x, a, b); }
  std::sort(t.begin(), t.end()); return t[10];
}
int main() {
  const size_t bytes = size_t(8192) * 8192 * 4;
  float *p, *q; CK(cudaMalloc(&p, bytes)); CK(cudaMalloc(&q, bytes));
  float ms = median_ms([&] { cudaMemsetAsync(p, 1, bytes); });
  std::printf("memset      %8.2f us %6.3f TB/s written\n", ms * 1e3, bytes / ms / 1e9);
  for (int blocks : {66, 132, 264, 528, 2112}) {
    ms = median_ms([&] { store4<<<blocks, 1024>>>((float4*)p, bytes / 16, 1.f); });
    std::printf("store4 %4d %8.2f us %6.3f TB/s written\n", blocks, ms * 1e3, bytes / ms / 1e9);
  }
  ms = median_ms([&] { cudaMemcpyAsync(q, p, bytes, cudaMemcpyDeviceToDevice); });
  std::printf("d2d copy    %8.2f us %6.3f TB/s read+written\n", ms * 1e3, 2 * bytes / ms / 1e9);
  CK(cudaGetLastError());
  return 0;
}
