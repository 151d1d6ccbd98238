#!/usr/bin/env bash
# Session 24, call 7: the committed tree (be8cb86 and after): suites 09 and 10 on the H100, the
# mutant of the weight update's alignment check, compute-sanitizer on chapter 10's trainer at its
# new widest shape (128 x 1024).
export PATH=/usr/local/cuda/bin:$PATH
o=$OUT/c7; mkdir -p "$o" data/mnist
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,power.limit --format=csv | tee "$o/gpu.txt"
date -u | tee -a "$o/gpu.txt"
ls data/mnist/train-images-idx3-ubyte >/dev/null 2>&1 || for f in .device/mnist-gz/*.gz; do gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
[ -f build-device/build.ninja ] || meson setup build-device >/dev/null
( MUTATE_JOBS=1 MUTATE_DIR=/tmp/mut timeout 400 tools/mutate.sh 09_weight_update_takes_misaligned_epilogues >"$o/mutate.txt" 2>&1; echo "mutate exit $?" >>"$o/mutate.txt" ) &
mp=$!
ninja -C build-device tests/test_gemm_09_swap_ab_split_k tests/test_gemm_10_persistent_step tests/test_training_09_swap_ab_split_k tests/test_training_10_persistent_step chapters/train_09_swap_ab_split_k chapters/train_10_persistent_step tests/test_persistent_schedule >"$o/build.txt" 2>&1; echo "ninja exit $?"
echo "=== tests ($(date -u +%T))"
meson test -C build-device --no-rebuild --suite 09_swap_ab_split_k --suite 10_persistent_step --print-errorlogs >"$o/tests.txt" 2>&1; echo "tests exit $?"
grep -E "^ *[0-9]+/[0-9]+ " "$o/tests.txt"
cp build-device/meson-logs/testlog.txt "$o/testlog.txt"
grep -E "persistent step, batch|largest gap|refused" "$o/testlog.txt" | cut -c1-250 | head -40
echo "=== sanitizer ($(date -u +%T))"
SANITIZE_ONLY='train_widest_10' timeout 300 tools/sanitize.sh build-device "$o/sanitizer" 2>&1 | tail -n 6
rm -rf "$o"/sanitizer/*/
wait $mp; echo "=== mutant"; grep -E "^(caught|MISSED|error)|exit" "$o/mutate.txt"
echo "=== end ($(date -u +%T))"
cd $OUT && tar czf c7.tgz c7
