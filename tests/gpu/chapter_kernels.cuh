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
  // Takes only the products tma_kernel_takes() allows (chapters/07_tma/dispatch.cuh: operands TMA
  // can read, K of 4 tiles or more, no split by chapter 06) and gives every other product to
  // chapter 06's kernels.
  bool tma_dispatch;
  // Chapter 12 on: the swap-AB kernel that keeps K whole (the same as `kernel` in chapter 12; from
  // chapter 13 on `kernel` splits K and adds the splits itself). The two take only the products
  // swap_ab_takes() allows (chapters/12_swap_ab/tiles.cuh: A not transposed, M <= 256, operands
  // TMA can read) and give every other product to chapter 10's rule (kSquareKernels).
  const char* whole_k = nullptr;
  // Chapter 14 on: the kernel that takes the weight gradients through the SGD epilogue or the
  // plain store at a batch of at most 64 (weight_update_takes() in
  // chapters/14_weight_update/weight_update.cuh), before the rules above.
  const char* weight_update = nullptr;
  // Chapter 16 on: the kernel that trains many steps in one launch (common/step_interface.cuh),
  // for the models and batches the chapter's rule takes; its GEMMs (the fields above) are those of
  // the chapter it falls back to for the rest.
  const char* persistent = nullptr;
  // Chapter 18 on: the kernel that trains, on one thread block cluster, the small models whose
  // weights fit in its shared memory (model_refusal in chapters/18_cluster_model/layout.cuh).
  const char* on_chip = nullptr;
  // Chapter 15: the 32 x 32 tile's kernel, for the products small_tile_takes() allows
  // (chapters/15_small_tile/gemm.cuh), before chapter 14's rules.
  const char* small_tile = nullptr;
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
    // 07-11: their own kernel for what tma_kernel_takes(), chapter 06's (kChapter06) for the rest.
    {"07_tma", "mnist::tma::tma_gemm_kernel", nullptr, true},
    {"08_wgmma", "mnist::wgmma::wgmma_gemm_kernel", nullptr, true},
    {"09_warp_specialized", "mnist::warp_specialized::warp_specialized_gemm_kernel", nullptr, true},
    {"10_tile_scheduler", "mnist::tile_scheduler::tile_scheduler_gemm_kernel", nullptr, true},
    {"11_clusters", "mnist::clusters::clusters_gemm_kernel", nullptr, true},
    // 12: its swap-AB kernel (K whole) for what swap_ab_takes(), chapter 10's rule for the rest.
    {"12_swap_ab", "mnist::swap_ab::swap_ab_gemm_kernel", nullptr, false,
     "mnist::swap_ab::swap_ab_gemm_kernel"},
    // 13: chapter 12's kernel where K stays whole, its own where plan_split cuts K.
    {"13_split_k_in_kernel", "mnist::split_k_in_kernel::swap_ab_split_k_gemm_kernel", nullptr,
     false, "mnist::swap_ab::swap_ab_gemm_kernel"},
    // 14: the weight update for the weight gradients it takes, chapter 13's GEMM for the rest.
    {"14_weight_update", "mnist::split_k_in_kernel::swap_ab_split_k_gemm_kernel", nullptr, false,
     "mnist::swap_ab::swap_ab_gemm_kernel", "mnist::weight_update::weight_update_kernel"},
    // 15: the 32 x 32 tile where its rule takes the product, chapter 14's GEMM for the rest.
    {"15_small_tile", "mnist::split_k_in_kernel::swap_ab_split_k_gemm_kernel", nullptr, false,
     "mnist::swap_ab::swap_ab_gemm_kernel", "mnist::weight_update::weight_update_kernel", nullptr,
     nullptr, "mnist::small_tile::small_tile_gemm_kernel"},
    // 16: the persistent training kernel where its rule takes the model (steps_refusal in
    // chapters/16_persistent_step/launch.cuh); chapter 14's GEMMs for everything else.
    {"16_persistent_step", "mnist::split_k_in_kernel::swap_ab_split_k_gemm_kernel", nullptr, false,
     "mnist::swap_ab::swap_ab_gemm_kernel", "mnist::weight_update::weight_update_kernel",
     "mnist::persistent_step::persistent_training_kernel"},
    // 17: chapter 16's scheme with its own tiles, loss and bias (chapters/17_step_tile/steps.cuh).
    {"17_step_tile", "mnist::split_k_in_kernel::swap_ab_split_k_gemm_kernel", nullptr, false,
     "mnist::swap_ab::swap_ab_gemm_kernel", "mnist::weight_update::weight_update_kernel",
     "mnist::step_tile::persistent_training_kernel"},
    // 18-19: their kernel where the model fits on one cluster, chapter 17's kernel where its rule
    // takes the model, chapter 14's GEMMs for everything else.
    {"18_cluster_model", "mnist::split_k_in_kernel::swap_ab_split_k_gemm_kernel", nullptr, false,
     "mnist::swap_ab::swap_ab_gemm_kernel", "mnist::weight_update::weight_update_kernel",
     "mnist::step_tile::persistent_training_kernel",
     "mnist::cluster_model::cluster_training_kernel"},
    {"19_on_chip", "mnist::split_k_in_kernel::swap_ab_split_k_gemm_kernel", nullptr, false,
     "mnist::swap_ab::swap_ab_gemm_kernel", "mnist::weight_update::weight_update_kernel",
     "mnist::step_tile::persistent_training_kernel", "mnist::on_chip::on_chip_training_kernel"},
    // 20-24: chapter 14's GEMMs for the products the trainer launches (the fp16 steps,
    // evaluation); their FP8 step is many kernels a step, checked by test_training_fp8.
    {"20_fp8_gemm", "mnist::split_k_in_kernel::swap_ab_split_k_gemm_kernel", nullptr, false,
     "mnist::swap_ab::swap_ab_gemm_kernel", "mnist::weight_update::weight_update_kernel"},
    {"21_fp8_fused_epilogue", "mnist::split_k_in_kernel::swap_ab_split_k_gemm_kernel", nullptr,
     false, "mnist::swap_ab::swap_ab_gemm_kernel", "mnist::weight_update::weight_update_kernel"},
    {"22_fp8_swap_ab", "mnist::split_k_in_kernel::swap_ab_split_k_gemm_kernel", nullptr, false,
     "mnist::swap_ab::swap_ab_gemm_kernel", "mnist::weight_update::weight_update_kernel"},
    {"23_fp8_weight_update", "mnist::split_k_in_kernel::swap_ab_split_k_gemm_kernel", nullptr,
     false, "mnist::swap_ab::swap_ab_gemm_kernel", "mnist::weight_update::weight_update_kernel"},
    {"24_fp8_two_parts", "mnist::split_k_in_kernel::swap_ab_split_k_gemm_kernel", nullptr, false,
     "mnist::swap_ab::swap_ab_gemm_kernel", "mnist::weight_update::weight_update_kernel"},
};
// What chapters 07-10 fall back to, and what the skinny-product chapters fall back to.
const ChapterKernels& kChapter06 = kChapterKernels[5];
const ChapterKernels& kSquareKernels = kChapterKernels[9];

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
