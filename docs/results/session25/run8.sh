#!/usr/bin/env bash
# Session 25, call 8: call 7's suites again after the fix of the tests' kernel names (call 7's
# training test of chapter 10 failed: its kernels' names carried the threads per block), and the
# mutant that takes the batch tile of 128's second consumer away.
export PATH=/usr/local/cuda/bin:$PATH
o=$OUT/c8; mkdir -p "$o"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,power.limit --format=csv | tee "$o/gpu.txt"; date -u | tee -a "$o/gpu.txt"
mkdir -p data/mnist; for f in .device/mnist-gz/*.gz; do gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
[ -f build/build.ninja ] || meson setup build >/dev/null 2>&1
ninja -C build tests/test_gemm_09_swap_ab_split_k tests/test_gemm_10_persistent_step tests/test_training_09_swap_ab_split_k tests/test_training_10_persistent_step tests/test_persistent_schedule chapters/train_09_swap_ab_split_k chapters/train_10_persistent_step >"$o/build.txt" 2>&1; echo "ninja exit $? ($(date -u +%T))"
echo "=== tests ($(date -u +%T))"
meson test -C build --no-rebuild --suite 09_swap_ab_split_k --suite 10_persistent_step --print-errorlogs >"$o/tests.txt" 2>&1; echo "tests exit $?"
grep -E "^ *[0-9]+/[0-9]+ " "$o/tests.txt"
cp build/meson-logs/testlog.txt "$o/testlog.txt"
echo "=== mutant ($(date -u +%T))"
MUTATE_DIR=/tmp/mutate8 MUTATE_JOBS=1 timeout 330 tools/mutate.sh 09_one_consumer_at_the_batch_tile_of_128 >"$o/mutate.txt" 2>&1; echo "mutate exit $?"
grep -E "^(caught|MISSED|missed|error)|^mutate" "$o/mutate.txt" | tail -3
echo "=== end ($(date -u +%T))"
cd $OUT && tar czf c8.tgz c8
