#!/usr/bin/env bash
# Session 25, call 2: chapter 03 with K tiles of 64 and two blocks per SM (the working tree):
# its GEMM benchmark (every case, cuBLAS in the same process), its default model, Nsight Compute
# on the forward 4096^3 product, SASS counts; then suites 03, 09 and 10 on this tree.
export PATH=/usr/local/cuda/bin:$PATH
o=$OUT/c2; mkdir -p "$o"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,power.limit --format=csv | tee "$o/gpu.txt"; date -u | tee -a "$o/gpu.txt"
git log --oneline -1 | tee -a "$o/gpu.txt"; git status --short | grep -v '^??' | tee -a "$o/gpu.txt"
mkdir -p data/mnist; for f in .device/mnist-gz/*.gz; do gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
meson setup build >/dev/null 2>&1
ninja -C build bench/bench_gemm_03_mma_sync tests/test_gemm_03_mma_sync tests/test_training_03_mma_sync chapters/train_03_mma_sync >"$o/build.txt" 2>&1; echo "ninja 03 exit $? ($(date -u +%T))"
( ninja -C build tests/test_gemm_09_swap_ab_split_k tests/test_gemm_10_persistent_step tests/test_training_09_swap_ab_split_k tests/test_training_10_persistent_step tests/test_persistent_schedule chapters/train_09_swap_ab_split_k chapters/train_10_persistent_step >"$o/build_0910.txt" 2>&1; echo "ninja 09/10 exit $? ($(date -u +%T))" >>"$o/build_0910.txt" ) &
echo "=== bench ($(date -u +%T))"
build/bench/bench_gemm_03_mma_sync --csv "$o/gemm_03_mma_sync.csv" >"$o/bench_log.txt" 2>&1; echo "bench exit $?"
grep -E "^square" "$o/bench_log.txt"
echo "=== train ($(date -u +%T))"
build/chapters/train_03_mma_sync --out-dir "$o/runs" >"$o/train_log.txt" 2>&1; echo "train exit $?"; tail -3 "$o/train_log.txt"
echo "=== ncu ($(date -u +%T))"
tools/ncu_forward.sh "$o/ncu_out" 03 >"$o/ncu_log.txt" 2>&1; echo "ncu exit $?"
tar -xzf "$o/ncu_out/ncu.tar.gz" -C "$o/ncu_out" && python3 tools/ncu_summary.py "$o/ncu_out/ncu" 03 | tee "$o/ncu_summary.txt"
rm -f "$o"/ncu_out/ncu/*.ncu-rep
echo "=== SASS ($(date -u +%T))"
cuobjdump -res-usage build/bench/bench_gemm_03_mma_sync 2>&1 | grep -A1 "_gemm_kernel" | tee "$o/res_usage_03.txt"
cuobjdump -sass build/bench/bench_gemm_03_mma_sync >"$o/sass_03.txt"; echo "$(grep -cE '\bHMMA' "$o/sass_03.txt") HMMA, $(grep -cE '\bLDSM' "$o/sass_03.txt") LDSM, $(grep -cE '\bBAR\.SYNC' "$o/sass_03.txt") BAR.SYNC in the binary"
gzip "$o/sass_03.txt"
wait; tail -1 "$o/build_0910.txt"
echo "=== tests ($(date -u +%T))"
meson test -C build --no-rebuild --suite 03_mma_sync --suite 09_swap_ab_split_k --suite 10_persistent_step --print-errorlogs >"$o/tests.txt" 2>&1; echo "tests exit $?"
grep -E "^ *[0-9]+/[0-9]+ " "$o/tests.txt"
cp build/meson-logs/testlog.txt "$o/testlog.txt"
echo "=== end ($(date -u +%T))"
cd $OUT && tar czf c2.tgz c2
