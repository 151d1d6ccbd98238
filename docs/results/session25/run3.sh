#!/usr/bin/env bash
# Session 25, call 3 (run on call 2's machine and build): compute-sanitizer's four tools on
# chapters 03 and 09, their GEMM tests and their trainers.
export PATH=/usr/local/cuda/bin:$PATH; o=$OUT/c3; mkdir -p $o; date -u > $o/gpu.txt
ninja -C build chapters/train_03_mma_sync tests/test_gemm_03_mma_sync chapters/train_09_swap_ab_split_k tests/test_gemm_09_swap_ab_split_k > $o/build.txt 2>&1; echo "ninja $?"
SANITIZE_ONLY='_0(3_mma_sync|9_swap_ab_split_k)' SANITIZE_JOBS=12 timeout 540 tools/sanitize.sh build $o/sanitizer 2>&1 | tail -n 40
rm -rf $o/sanitizer/*/; date -u >> $o/gpu.txt; cd $OUT && tar czf c3.tgz c3
