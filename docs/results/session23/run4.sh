#!/usr/bin/env bash
# Session 23, call 4: the working tree (chapter 10's crossover by batch): build, suite
# 10_persistent_step, compute-sanitizer's four tools on chapter 10's trainer (SANITIZE_ONLY).
export PATH=/usr/local/cuda/bin:$PATH
o=$OUT/c4
mkdir -p "$o" data/mnist
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,power.limit --format=csv | tee "$o/gpu.txt"
date -u
ls data/mnist/train-images-idx3-ubyte >/dev/null 2>&1 || for f in .device/mnist-gz/*.gz; do gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
[ -f build-device/build.ninja ] || meson setup build-device >/dev/null
ninja -C build-device chapters/train_10_persistent_step tests/test_gemm_10_persistent_step tests/test_training_10_persistent_step tests/test_persistent_schedule >"$o/build.txt" 2>&1; tail -1 "$o/build.txt"
echo "=== tests ($(date -u +%T))"
meson test -C build-device --no-rebuild --suite 10_persistent_step --print-errorlogs >"$o/tests.txt" 2>&1
grep -E "^ *[0-9]+/[0-9]+ |^Ok:|^Fail:|^Skipped:" "$o/tests.txt" | tail -n 30
cp build-device/meson-logs/testlog.txt "$o/testlog.txt"
grep -E "persistent step, batch|all .* steps in one launch|largest gap" "$o/testlog.txt" | head -40
echo "=== sanitizer ($(date -u +%T))"
SANITIZE_ONLY='train_.*10_persistent' timeout 300 tools/sanitize.sh build-device "$o/sanitizer" 2>&1 | tail -n 14
echo "=== end ($(date -u +%T))"
