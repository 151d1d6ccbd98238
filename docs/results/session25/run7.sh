#!/usr/bin/env bash
# Session 25, call 7: chapter 09 with two consumers at the batch tile of 128 (the working tree):
# suites 09 and 10 (the GEMM test now checks each launch's threads per block against the batch
# tile's consumers) and chapter 09's GEMM benchmark with cuBLAS in the same process.
export PATH=/usr/local/cuda/bin:$PATH
o=$OUT/c7; mkdir -p "$o"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,power.limit --format=csv | tee "$o/gpu.txt"; date -u | tee -a "$o/gpu.txt"
mkdir -p data/mnist; for f in .device/mnist-gz/*.gz; do gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
meson setup build >/dev/null 2>&1
ninja -C build bench/bench_gemm_09_swap_ab_split_k tests/test_gemm_09_swap_ab_split_k tests/test_gemm_10_persistent_step tests/test_training_09_swap_ab_split_k tests/test_training_10_persistent_step tests/test_persistent_schedule chapters/train_09_swap_ab_split_k chapters/train_10_persistent_step >"$o/build.txt" 2>&1; echo "ninja exit $? ($(date -u +%T))"
echo "=== bench ($(date -u +%T))"
build/bench/bench_gemm_09_swap_ab_split_k --csv "$o/gemm_09_swap_ab_split_k.csv" >"$o/bench_log.txt" 2>&1; echo "bench exit $?"
grep -E "^b256 h(4096|8192)" "$o/bench_log.txt"
echo "=== tests ($(date -u +%T))"
meson test -C build --no-rebuild --suite 09_swap_ab_split_k --suite 10_persistent_step --print-errorlogs >"$o/tests.txt" 2>&1; echo "tests exit $?"
grep -E "^ *[0-9]+/[0-9]+ " "$o/tests.txt"
cp build/meson-logs/testlog.txt "$o/testlog.txt"
echo "=== end ($(date -u +%T))"
cd $OUT && tar czf c7.tgz c7
