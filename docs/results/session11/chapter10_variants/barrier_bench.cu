// Experiment (not for commit): the cost of one grid barrier, three schemes, several grid sizes.
#include <cstdio>
#include <cuda_runtime.h>
#include "10_persistent_step/grid_barrier.cuh"
using namespace mnist::persistent_step;

struct Words { GridBarrier b; unsigned flip; unsigned pad[6]; };

// B: one word; block 0 adds 2^31 - (n - 1), the others 1: the last arrival flips the top bit.
__device__ __forceinline__ void flip_barrier(unsigned* w) {
  __syncthreads();
  if (threadIdx.x == 0) {
    const unsigned add = blockIdx.x == 0 ? 0x80000000u - (gridDim.x - 1) : 1u;
    __threadfence();
    const unsigned old = atomicAdd(w, add);
    volatile unsigned* v = w;
    while (((*v ^ old) & 0x80000000u) == 0) {}
    __threadfence();
  }
  __syncthreads();
}
// C: as B with release/acquire instead of the two sc fences.
__device__ __forceinline__ void flip_barrier_ra(unsigned* w) {
  __syncthreads();
  if (threadIdx.x == 0) {
    const unsigned add = blockIdx.x == 0 ? 0x80000000u - (gridDim.x - 1) : 1u;
    unsigned old, now;
    asm volatile("atom.add.release.gpu.u32 %0, [%1], %2;" : "=r"(old) : "l"(w), "r"(add) : "memory");
    do {
      asm volatile("ld.acquire.gpu.u32 %0, [%1];" : "=r"(now) : "l"(w) : "memory");
    } while (((now ^ old) & 0x80000000u) == 0);
  }
  __syncthreads();
}

__global__ void bench(Words* w, int scheme, int n, long long* cycles) {
  long long t0 = clock64();
  for (int i = 0; i < n; ++i) {
    if (scheme == 0) grid_barrier(&w->b);
    else if (scheme == 1) flip_barrier(&w->flip);
    else flip_barrier_ra(&w->flip);
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) *cycles = clock64() - t0;
}

int main() {
  Words* w; long long* cycles;
  cudaMalloc(&w, sizeof(Words)); cudaMalloc(&cycles, 8);
  cudaMemset(w, 0, sizeof(Words));
  int clock_khz; cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0);
  const char* names[] = {"fence_sc+reset+generation (chapter 10)", "one word, top bit flips, sc fences", "one word, top bit flips, release/acquire"};
  const int n = 20000;
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  for (int grid : {1, 4, 16, 32, 64, 108, 132, 264}) {
    for (int scheme = 0; scheme < 3; ++scheme) {
      for (int rep = 0; rep < 2; ++rep) {
        void* args[] = {&w, &scheme, (void*)&n, &cycles};
        int nn = n; args[2] = &nn;
        cudaEventRecord(a);
        cudaError_t e = cudaLaunchCooperativeKernel((void*)bench, grid, 256, args, 0, 0);
        cudaEventRecord(b);
        if (e != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess) { printf("error %s\n", cudaGetErrorString(cudaGetLastError())); return 1; }
        float ms; cudaEventElapsedTime(&ms, a, b);
        long long c; cudaMemcpy(&c, cycles, 8, cudaMemcpyDeviceToHost);
        if (rep == 1) printf("barrier,%d,%s,%.3f us (events),%.0f cycles\n", grid, names[scheme], ms * 1000 / n, double(c) / n);
      }
    }
  }
  return 0;
}
