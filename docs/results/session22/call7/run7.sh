#!/usr/bin/env bash
# Session 22, call 7 (review): the GEMM test with the shape 32 x 4232 x 2048 added (67 tiles: K
# whole, where the resident blocks would split it in 3), for chapters 09 and 10. In $OUT/s7.
export PATH=/usr/local/cuda/bin:$PATH
o=$OUT/s7
mkdir -p "$o"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,power.limit --format=csv | tee "$o/gpu.txt"
date -u
meson setup build-device >/dev/null 2>&1
ninja -C build-device tests/test_gemm_09_swap_ab_split_k tests/test_gemm_10_persistent_step >"$o/build.txt" 2>&1 || { echo "build failed"; tail -20 "$o/build.txt"; }
echo "=== tests ($(date -u +%T))"
build-device/tests/test_gemm_09_swap_ab_split_k >"$o/test_gemm_09.txt" 2>&1; echo "test_gemm_09_swap_ab_split_k: exit $?"
build-device/tests/test_gemm_10_persistent_step >"$o/test_gemm_10.txt" 2>&1; echo "test_gemm_10_persistent_step: exit $?"
tail -n 9 "$o/test_gemm_09.txt"; tail -n 1 "$o/test_gemm_10.txt"
echo "=== end ($(date -u +%T))"
