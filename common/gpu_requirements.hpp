// Which GPUs a chapter runs on, decided at run time from what the GPU is and what the build
// compiled for it (meson.build's gpu_arch). Every chapter needs compute capability 8.0 or newer:
// chapter 03's ldmatrix and mma.sync m16n8k16 and chapter 04's cp.async, which later chapters
// keep. Chapters 07 on need an H100-class GPU, compute capability 9.0, and code built for sm_90a:
// TMA, wgmma and setmaxnreg exist in no other feature set (08_wgmma/wgmma.cuh). A chapter that
// cannot run says why in one line, naming the GPU: the trainer and the benchmark stop there, the
// tests SKIP (chapter_unsupported_here in common/chapter.cu asks, once).
#pragma once

#include <string>

namespace mnist {

constexpr int kMinComputeCapability = 80;    // every chapter: major * 10 + minor
constexpr int kSm90aComputeCapability = 90;  // chapters 07 on: exactly this one

struct GpuFacts {
  std::string name;  // cudaDeviceProp::name
  int major = 0, minor = 0;
};

// The device code the build holds for that GPU, as the GPU reports it: `found` false where there
// is none it can run (no machine code for its architecture and no PTX the driver can compile for
// it), `error` then saying what CUDA answered; otherwise the __CUDA_ARCH__ it was compiled for
// (800 for sm_80 or compute_80) and whether it has the sm_90a instructions.
struct DeviceCode {
  bool found = false;
  std::string error;
  int arch = 0;
  bool sm90a = false;
};

// Empty where `chapter` (e.g. "07_tma") runs on `gpu` with `code`; otherwise one sentence that
// says what the chapter needs and what was found.
inline std::string why_chapter_cannot_run(const std::string& chapter, bool needs_sm90a,
                                          const GpuFacts& gpu, const DeviceCode& code) {
  const auto capability = [](int major, int minor) {
    return "compute capability " + std::to_string(major) + "." + std::to_string(minor);
  };
  const std::string gpu_found = gpu.name + " (" + capability(gpu.major, gpu.minor) + ")";
  const int cc = gpu.major * 10 + gpu.minor;
  const std::string needs = "chapter " + chapter + " needs ";
  const std::string needs_hopper = needs + "sm_90a: an H100-class GPU (compute capability 9.0) " +
                                   "and a build with sm_90a code (wgmma, TMA); found ";
  if (cc < kMinComputeCapability) {
    return needs + "a GPU of compute capability 8.0 or newer (cp.async, ldmatrix, mma.sync); " +
           "found " + gpu_found;
  }
  if (needs_sm90a && cc != kSm90aComputeCapability) return needs_hopper + gpu_found;
  if (!code.found) {
    const std::string target = "sm_" + std::to_string(cc) + (needs_sm90a ? "a" : "");
    return "this build of chapter " + chapter + " has no code that runs on " + gpu_found +
           ", CUDA says " + code.error +
           ": configure the build on this machine (-Dgpu_arch=auto) or add " + target +
           " to -Dgpu_arch";
  }
  if (needs_sm90a && !code.sm90a) {
    return needs_hopper + gpu_found + ", but this build's code for it is for " +
           capability(code.arch / 100, code.arch % 100 / 10) +
           ", without sm_90a: configure with -Dgpu_arch=sm_90a (or auto on this machine)";
  }
  return "";
}

}  // namespace mnist
