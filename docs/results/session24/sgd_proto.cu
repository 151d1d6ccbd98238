// Session 24 prototype: the weight gradient at K <= 64 with the SGD epilogue, the masters streamed
// through shared memory by TMA. Against gemm() (chapter 09's dispatch) and a streaming kernel.
#include <cuda_fp16.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>
#include "07_wgmma/tma.cuh"
#include "07_wgmma/wgmma.cuh"
#include "cuda_check.cuh"
#include "gemm_interface.cuh"
#include "rng.hpp"
using namespace mnist;
using namespace mnist::wgmma;
constexpr int kLaunches = 10, kReplays = 11;
constexpr int kBoxBytes = 64 * kSwizzleBytes;  // 64 rows of 128 bytes

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
__device__ __forceinline__ void tma_store(const CUtensorMap& map, uint32_t source, int inner, int outer) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];\n" ::"l"(
                   reinterpret_cast<uint64_t>(&map)), "r"(inner), "r"(outer), "r"(source)
               : "memory");
}
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
__device__ __forceinline__ void bulk_wait_read() { asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory"); }

__device__ __forceinline__ int swizzled(int r, int byte) {  // within a box of 128-byte rows
  return r * kSwizzleBytes + (((byte >> 4) ^ (r & 7)) << 4) + (byte & 15);
}

#endif
template <int kTileN, bool kTmaStore>
struct Layout {
  using ATile = SmemTile<64, false, kWgmmaK>;
  using BTile = SmemTile<kTileN, false, kWgmmaK>;
  static constexpr int kMasterBoxes = kTileN / 32, kOutBoxes = kTileN / 64;
  static constexpr int kMaster = 0;
  static constexpr int kOut = kMaster + kMasterBoxes * kBoxBytes;
  static constexpr int kA = kOut + (kTmaStore ? kOutBoxes * kBoxBytes : 0);
  static constexpr int kB = kA + ATile::kBytes;
  static constexpr int kBarrier = kB + BTile::kBytes;
  static constexpr int kSmem = kSwizzleAtomBytes + kBarrier + 8;
};

template <int kTileN, bool kTmaStore>
__global__ void __launch_bounds__(128) sgd_kernel(const __grid_constant__ CUtensorMap map_a,
                                                  const __grid_constant__ CUtensorMap map_b,
                                                  const __grid_constant__ CUtensorMap map_master,
                                                  const __grid_constant__ CUtensorMap map_out,
                                                  const __grid_constant__ GemmProblem p) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using L = Layout<kTileN, kTmaStore>;
  extern __shared__ __align__(16) uint8_t smem[];
  const uint32_t base = ring_start(smem);
  uint8_t* const base_ptr = smem + (base - shared_address(smem));
  const uint32_t bar = base + L::kBarrier;
  const int row0 = blockIdx.y * 64, col0 = blockIdx.x * kTileN;
  if (threadIdx.x == 0) {
    mbarrier_init(bar, 1);
    fence_proxy_async();
    mbarrier_arrive_expect_tx(bar, L::kMasterBoxes * kBoxBytes + L::ATile::kBytes + L::BTile::kBytes);
    for (int b = 0; b < L::kMasterBoxes; ++b) tma_load(base + L::kMaster + b * kBoxBytes, map_master, col0 + 32 * b, row0, bar);
    load_tile<typename L::ATile>(map_a, base + L::kA, row0, 0, bar);
    load_tile<typename L::BTile>(map_b, base + L::kB, col0, 0, bar);
  }
  __syncthreads();
  mbarrier_wait(bar, 0);
  float acc[kTileN / 2];
  multiply_k_tile<typename L::ATile, typename L::BTile>(acc, base + L::kA, base + L::kB, false);
  wgmma_wait<0>();
  accumulators_settled(acc);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const float lr = p.epilogue.learning_rate;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int r = warp * 16 + lane / 4 + 8 * h, row = row0 + r;
    if (!kTmaStore && row >= p.m) continue;
#pragma unroll
    for (int i = 0; i < kTileN / 8; ++i) {
      const int c = 8 * i + 2 * (lane % 4), col = col0 + c;
      float2* const m = reinterpret_cast<float2*>(base_ptr + L::kMaster + c / 32 * kBoxBytes + swizzled(r, c % 32 * 4));
      const float2 old = *m;
      const float2 u = make_float2(old.x - lr * acc[4 * i + 2 * h], old.y - lr * acc[4 * i + 2 * h + 1]);
      if constexpr (kTmaStore) {
        *m = u;
        *reinterpret_cast<__half2*>(base_ptr + L::kOut + c / 64 * kBoxBytes + swizzled(r, c % 64 * 2)) = __floats2half2_rn(u.x, u.y);
      } else if (col < p.n) {
        const size_t e = size_t(row) * p.n + col;
        *reinterpret_cast<float2*>(p.epilogue.master + e) = u;
        *reinterpret_cast<__half2*>(p.epilogue.out + e) = __floats2half2_rn(u.x, u.y);
      }
    }
  }
  if constexpr (kTmaStore) {
    fence_proxy_async();
    __syncthreads();
    if (threadIdx.x == 0) {
      for (int b = 0; b < L::kMasterBoxes; ++b) tma_store(map_master, base + L::kMaster + b * kBoxBytes, col0 + 32 * b, row0);
      for (int b = 0; b < L::kOutBoxes; ++b) tma_store(map_out, base + L::kOut + b * kBoxBytes, col0 + 64 * b, row0);
      bulk_commit();
      bulk_wait_read();
    }
  }
#endif
}

template <int kTileN, bool kTmaStore>
void launch_sgd(const GemmProblem& p, cudaStream_t s) {
  using L = Layout<kTileN, kTmaStore>;
  static bool once = [] {
    CUDA_CHECK(cudaFuncSetAttribute(sgd_kernel<kTileN, kTmaStore>, cudaFuncAttributeMaxDynamicSharedMemorySize, L::kSmem));
    int blocks = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, sgd_kernel<kTileN, kTmaStore>, 128, L::kSmem));
    std::printf("  [tile 64x%d tma_store %d: %d bytes smem, %d blocks/SM]\n", kTileN, int(kTmaStore), L::kSmem, blocks);
    return true;
  }();
  (void)once;
  const CUtensorMap a = make_tensor_map<typename L::ATile>(p.a, p.m, p.k);
  const CUtensorMap b = make_tensor_map<typename L::BTile>(p.b, p.n, p.k);
  const CUtensorMap master = encode_tensor_map(p.epilogue.master, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, p.n, p.m, 32, 64,
                                               CU_TENSOR_MAP_L2_PROMOTION_L2_256B, "master");
  const CUtensorMap out = encode_tensor_map(p.epilogue.out, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, p.n, p.m, 64, 64,
                                            CU_TENSOR_MAP_L2_PROMOTION_L2_256B, "out");
  const dim3 grid((p.n + kTileN - 1) / kTileN, (p.m + 63) / 64);
  sgd_kernel<kTileN, kTmaStore><<<grid, 128, L::kSmem, s>>>(a, b, master, out, p);
  CUDA_CHECK(cudaGetLastError());
}

__global__ void stream_sgd(float* master, __half* out, size_t n4, float lr) {
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
    __half *ad, *bd, *out; float* md;
    CUDA_CHECK(cudaMalloc(&ad, a.size() * 2)); CUDA_CHECK(cudaMalloc(&bd, b.size() * 2));
    CUDA_CHECK(cudaMalloc(&md, master.size() * 4)); CUDA_CHECK(cudaMalloc(&out, master.size() * 2));
    CUDA_CHECK(cudaMemcpy(ad, a.data(), a.size() * 2, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(bd, b.data(), b.size() * 2, cudaMemcpyHostToDevice));
    GemmProblem p{m, n, k, ad, Op::T, bd, Op::N, nullptr, ws, kGemmWorkspaceFloats};
    p.epilogue = {EpilogueKind::kSgd, nullptr, nullptr, md, out, 1.0f};
    const double bytes = 10.0 * m * n;
    std::printf("%5d x %5d x %4d\n", m, n, k);
    const auto run = [&](const char* name, auto&& launch) {
      CUDA_CHECK(cudaMemcpy(md, master.data(), master.size() * 4, cudaMemcpyHostToDevice));
      CUDA_CHECK(cudaMemset(out, 0xFF, master.size() * 2));
      p.epilogue.learning_rate = 1.0f;
      launch();
      CUDA_CHECK(cudaStreamSynchronize(s));
      std::vector<float> got(master.size());
      std::vector<__half> got16(master.size());
      CUDA_CHECK(cudaMemcpy(got.data(), md, got.size() * 4, cudaMemcpyDeviceToHost));
      CUDA_CHECK(cudaMemcpy(got16.data(), out, got16.size() * 2, cudaMemcpyDeviceToHost));
      int wrong = 0;
      for (int t = 0; t < 8192; ++t) {
        const int r = t == 0 ? m - 1 : int(rng.below(m)), c = t == 0 ? n - 1 : int(rng.below(n));
        double v = 0, mag = 0;
        for (int q = 0; q < k; ++q) {
          const double x = __half2float(a[size_t(q) * m + r]) * double(__half2float(b[size_t(q) * n + c]));
          v += x, mag += std::fabs(x);
        }
        const double want = master[size_t(r) * n + c] - v;
        const size_t e = size_t(r) * n + c;
        if (!(std::fabs(got[e] - want) <= (k + 2) * std::ldexp(1.0, -23) * (mag + std::fabs(want)))) ++wrong;
        if (__half2float(got16[e]) != __half2float(__float2half_rn(got[e]))) ++wrong;
      }
      p.epilogue.learning_rate = 1e-6f;
      const double t = time_it(s, launch);
      std::printf("  %-22s %8.2f us %6.2f TB/s%s\n", name, t, bytes / t / 1e6, wrong ? "  WRONG" : "");
      if (wrong) std::printf("  WRONG: %d of 8192 sampled\n", wrong);
    };
    run("gemm (ch09 dispatch)", [&] { gemm(p, s); });
    run("tma load 64x64", [&] { launch_sgd<64, false>(p, s); });
    run("tma load 64x128", [&] { launch_sgd<128, false>(p, s); });
    run("tma load+store 64x64", [&] { launch_sgd<64, true>(p, s); });
    run("tma load+store 64x128", [&] { launch_sgd<128, true>(p, s); });
    run("gemm (ch09 dispatch)", [&] { gemm(p, s); });
    const size_t n4 = size_t(m) * n / 4;
    const double t_stream = time_it(s, [&] { stream_sgd<<<132 * 8, 256, 0, s>>>(md, out, n4, 1e-6f); CUDA_CHECK(cudaGetLastError()); });
    std::printf("  %-22s %8.2f us %6.2f TB/s\n", "stream", t_stream, bytes / t_stream / 1e6);
    for (void* x : {(void*)ad, (void*)bd, (void*)md, (void*)out}) CUDA_CHECK(cudaFree(x));
  }
  return 0;
}
