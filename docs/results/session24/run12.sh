#!/usr/bin/env bash
# Session 24, call 12: the weight update also takes the plain store (kStore). Chapter 09's GEMM
# benchmark (every trainer shape, cuBLAS in the same process), then suites 09 and 10.
export PATH=/usr/local/cuda/bin:$PATH
o=$OUT/c12; mkdir -p "$o"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,power.limit --format=csv | tee "$o/gpu.txt"; date -u | tee -a "$o/gpu.txt"
mkdir -p data/mnist; for f in .device/mnist-gz/*.gz; do gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
meson setup build >/dev/null 2>&1
ninja -C build bench/bench_gemm_09_swap_ab_split_k tests/test_gemm_09_swap_ab_split_k tests/test_gemm_10_persistent_step tests/test_training_09_swap_ab_split_k tests/test_training_10_persistent_step tests/test_persistent_schedule chapters/train_09_swap_ab_split_k chapters/train_10_persistent_step >"$o/build.txt" 2>&1; echo "ninja exit $?"
echo "=== bench ($(date -u +%T))"
build/bench/bench_gemm_09_swap_ab_split_k --csv "$o/gemm_09_swap_ab_split_k.csv" >"$o/bench_log.txt" 2>&1; echo "bench exit $?"
grep -E "backward-weight" "$o/bench_log.txt" | grep -E "^b32" | head -30
nvidia-smi --query-gpu=clocks.sm --format=csv,noheader
echo "=== tests ($(date -u +%T))"
meson test -C build --no-rebuild --suite 09_swap_ab_split_k --suite 10_persistent_step --print-errorlogs >"$o/tests.txt" 2>&1; echo "tests exit $?"
grep -E "^ *[0-9]+/[0-9]+ " "$o/tests.txt"
cp build/meson-logs/testlog.txt "$o/testlog.txt"
grep -E "paths the products took" -A8 "$o/testlog.txt" | head -10
echo "=== end ($(date -u +%T))"
cd $OUT && tar czf c12.tgz c12
