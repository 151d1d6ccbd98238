#!/usr/bin/env bash
# Session 24, call 5: compute-sanitizer's four tools on chapter 09's GEMM test (its small shapes,
# the weight update's among them) and on its trainer at batch 32 (the weight update) and 96.
export PATH=/usr/local/cuda/bin:$PATH
o=$OUT/c5; mkdir -p "$o" data/mnist
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,power.limit --format=csv | tee "$o/gpu.txt"
date -u | tee -a "$o/gpu.txt"
ls data/mnist/train-images-idx3-ubyte >/dev/null 2>&1 || for f in .device/mnist-gz/*.gz; do gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
[ -f build-device/build.ninja ] || meson setup build-device >/dev/null
ninja -C build-device chapters/train_09_swap_ab_split_k tests/test_gemm_09_swap_ab_split_k >"$o/build.txt" 2>&1; tail -1 "$o/build.txt"
echo "=== sanitizer ($(date -u +%T))"
SANITIZE_ONLY='_09_swap_ab' timeout 500 tools/sanitize.sh build-device "$o/sanitizer" 2>&1 | tail -n 16
rm -rf "$o"/sanitizer/*/  # the trainers' run folders
echo "=== end ($(date -u +%T))"
cd $OUT && tar czf c5.tgz c5
