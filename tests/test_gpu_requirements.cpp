// Which GPUs and builds each chapter accepts (common/gpu_requirements.hpp), on the facts a GPU
// would report: the decision behind the trainers' one-line refusal and the GPU tests' SKIP, which
// a machine without a GPU, or with only an H100, never reaches. The GPU side (what the device says
// its code was compiled for) is checked on an H100 with a compute_80 build:
// maint/check_portable.sh.
#include <initializer_list>
#include <string>

#include "check.hpp"
#include "gpu_requirements.hpp"

using namespace mnist;

namespace {

const GpuFacts kH100{"NVIDIA H100 80GB HBM3", 9, 0};
const GpuFacts kA100{"NVIDIA A100-SXM4-80GB", 8, 0};
const GpuFacts kRtx4090{"NVIDIA GeForce RTX 4090", 8, 9};
const GpuFacts kB200{"NVIDIA B200", 10, 0};
const GpuFacts kT4{"Tesla T4", 7, 5};

const DeviceCode kSm90aCode{true, "", 900, true};
const DeviceCode kSm90Code{true, "", 900, false};  // -gencode arch=compute_90,code=sm_90
const DeviceCode kCompute80Code{true, "", 800, false};
const DeviceCode kSm89Code{true, "", 890, false};
const DeviceCode kNoCode{false, "cudaErrorNoKernelImageForDevice", 0, false};

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// `why` is a refusal: one line, naming the GPU and every word of `says`.
void check_refused(const std::string& what, const std::string& why, const GpuFacts& gpu,
                   std::initializer_list<const char*> says) {
  bool names_all = contains(why, gpu.name);
  for (const char* part : says) names_all = names_all && contains(why, part);
  CHECK_MSG(!why.empty() && !contains(why, "\n") && names_all, what + ": \"" + why + "\"");
}

void check_runs(const std::string& what, const std::string& why) {
  CHECK_MSG(why.empty(), what + " runs, but: \"" + why + "\"");
}

}  // namespace

int main() {
  for (const char* chapter : {"01_naive", "03_mma_sync", "06_fused_step"}) {
    const std::string name = chapter;
    check_runs(name + " on an H100, sm_90a",
               why_chapter_cannot_run(chapter, false, kH100, kSm90aCode));
    check_runs(name + " on an H100, compute_80 PTX",
               why_chapter_cannot_run(chapter, false, kH100, kCompute80Code));
    check_runs(name + " on an A100, compute_80 PTX",
               why_chapter_cannot_run(chapter, false, kA100, kCompute80Code));
    check_runs(name + " on an RTX 4090, sm_89",
               why_chapter_cannot_run(chapter, false, kRtx4090, kSm89Code));
    check_runs(name + " on a B200, compute_80 PTX",
               why_chapter_cannot_run(chapter, false, kB200, kCompute80Code));
    check_refused(name + " on a T4", why_chapter_cannot_run(chapter, false, kT4, kCompute80Code),
                  kT4, {"8.0", "7.5", chapter});
    check_refused(name + " on an A100 without code for it",
                  why_chapter_cannot_run(chapter, false, kA100, kNoCode), kA100,
                  {"no code", "cudaErrorNoKernelImageForDevice", "sm_80", chapter});
  }

  for (const char* chapter : {"07_tma", "10_tile_scheduler"}) {
    const std::string name = chapter;
    check_runs(name + " on an H100, sm_90a",
               why_chapter_cannot_run(chapter, true, kH100, kSm90aCode));
    const std::initializer_list<const char*> hopper = {"sm_90a", "H100-class", "9.0", chapter};
    check_refused(name + " on an H100, compute_80 PTX",
                  why_chapter_cannot_run(chapter, true, kH100, kCompute80Code), kH100, hopper);
    check_refused(name + " on an H100, plain sm_90",
                  why_chapter_cannot_run(chapter, true, kH100, kSm90Code), kH100, hopper);
    check_refused(name + " on an A100",
                  why_chapter_cannot_run(chapter, true, kA100, kCompute80Code), kA100, hopper);
    check_refused(name + " on an RTX 4090",
                  why_chapter_cannot_run(chapter, true, kRtx4090, kSm89Code), kRtx4090, hopper);
    // Newer is not enough: wgmma is in sm_90a's feature set only. Without code for the GPU (the
    // sm_90a build on another GPU) the refusal is still that one, not advice to add a target.
    check_refused(name + " on a B200", why_chapter_cannot_run(chapter, true, kB200, kCompute80Code),
                  kB200, hopper);
    check_refused(name + " on a B200, sm_90a build",
                  why_chapter_cannot_run(chapter, true, kB200, kNoCode), kB200, hopper);
    check_refused(name + " on an A100, sm_90a build",
                  why_chapter_cannot_run(chapter, true, kA100, kNoCode), kA100, hopper);
    check_refused(name + " on an H100 without code for it",
                  why_chapter_cannot_run(chapter, true, kH100, kNoCode), kH100,
                  {"no code", "sm_90a"});
    check_refused(name + " on a T4", why_chapter_cannot_run(chapter, true, kT4, kNoCode), kT4,
                  {"8.0", "7.5"});
  }
  return testing::finish("gpu requirements");
}
