// Each chapter's own kernels, by the names captured_kernels.cuh reads from a captured graph: what
// the GEMM test and the training test expect a chapter to run. A chapter whose new kernel is never
// dispatched fails both.
#pragma once

#include <cstring>
#include <stdexcept>
#include <string>

namespace mnist::testing {

struct ChapterKernels {
  const char* chapter;  // chapter_name()
  // The chapter's newest GEMM kernel.
  const char* kernel;
  // Its split-K reduction, where the chapter splits K itself (choose_split in
  // chapters/05_split_k/split_k.cuh); null otherwise.
  const char* sum_splits;
  // Takes only the products wgmma_takes() allows (chapters/07_wgmma/dispatch.cuh: operands TMA
  // can read, K of 4 tiles or more, no split by chapter 06) and gives every other product to
  // chapter 06's kernels.
  bool wgmma_dispatch;
};

const ChapterKernels kChapterKernels[] = {
    // 01-04: one kernel for every product, and no split-K yet.
    {"01_naive", "mnist::naive::naive_gemm_kernel", nullptr, false},
    {"02_smem_tiling", "mnist::smem_tiling::smem_tiling_gemm_kernel", nullptr, false},
    {"03_mma_sync", "mnist::mma_sync::mma_sync_gemm_kernel", nullptr, false},
    {"04_cp_async", "mnist::cp_async::cp_async_gemm_kernel", nullptr, false},
    // 05: the same kernel split along K or not, and the reduction that adds the splits.
    {"05_split_k", "mnist::split_k::split_k_gemm_kernel", "mnist::split_k::sum_splits_kernel",
     false},
    // 06: chapter 05's scheme with the epilogue in both kernels.
    {"06_fused_step", "mnist::fused_step::fused_gemm_kernel",
     "mnist::fused_step::sum_splits_kernel", false},
    // 07, 08: their own kernel for what wgmma_takes(), chapter 06's (kChapter06) for the rest.
    {"07_wgmma", "mnist::wgmma::wgmma_gemm_kernel", nullptr, true},
    {"08_warp_specialized", "mnist::warp_specialized::warp_specialized_gemm_kernel", nullptr, true},
};
// What chapters 07 and 08 fall back to.
const ChapterKernels& kChapter06 = kChapterKernels[5];

// gemm()'s separate epilogue pass of the chapters that do not fuse it (common/epilogue.cu).
const char* const kEpiloguePass = "mnist::epilogue_kernel";

inline const ChapterKernels& chapter_kernels(const char* chapter) {
  for (const ChapterKernels& entry : kChapterKernels) {
    if (std::strcmp(entry.chapter, chapter) == 0) return entry;
  }
  throw std::invalid_argument(std::string("no kernels listed for chapter ") + chapter +
                              " in tests/gpu/chapter_kernels.cuh");
}

}  // namespace mnist::testing
