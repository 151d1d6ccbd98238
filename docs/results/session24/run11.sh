#!/usr/bin/env bash
# Session 24, call 11: tests/check_tma_stores.py on chapters 09 and 10's GEMM tests as built by
# Meson (suites' tma_stores tests), and the three memory-order mutants through it (tools/mutate.sh).
export PATH=/usr/local/cuda/bin:$PATH
o=$OUT/c11; mkdir -p "$o"
nvidia-smi --query-gpu=name,driver_version --format=csv | tee "$o/gpu.txt"; date -u | tee -a "$o/gpu.txt"
( MUTATE_JOBS=3 MUTATE_DIR=/tmp/mut timeout 500 tools/mutate.sh 09_weight_update_no_proxy_fence 09_weight_update_no_wait_before_the_end 09_weight_update_no_barrier_before_the_store >"$o/mutate.txt" 2>&1; echo "mutate exit $?" >>"$o/mutate.txt" ) &
mp=$!
meson setup build-device >/dev/null 2>&1
ninja -C build-device tests/test_gemm_09_swap_ab_split_k tests/test_gemm_10_persistent_step >"$o/build.txt" 2>&1; echo "ninja exit $?"
meson test -C build-device --no-rebuild --suite 09_swap_ab_split_k --suite 10_persistent_step --print-errorlogs tma_stores >"$o/tests.txt" 2>&1; echo "tests exit $?"
grep -E "^ *[0-9]+/[0-9]+ " "$o/tests.txt"
grep -h "tma_stores test_gemm" build-device/meson-logs/testlog.txt | tee "$o/tma_stores.txt"
wait $mp; echo "=== mutants"; grep -E "^(caught|MISSED|error)|exit|mutate:" "$o/mutate.txt"
cd $OUT && tar czf c11.tgz c11
