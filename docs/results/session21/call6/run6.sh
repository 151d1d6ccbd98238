#!/usr/bin/env bash
# Session 21, call 6 (review): the GEMM test's blocks-per-SM helper named once; suites 09 and 10.
export PATH=/usr/local/cuda/bin:$PATH
mkdir -p data/mnist
for f in .device/mnist-gz/*.gz; do gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
nvidia-smi --query-gpu=name,clocks.sm,driver_version --format=csv,noheader; date -u
meson setup build-device >/dev/null 2>&1
ninja -C build-device tests/test_gemm_09_swap_ab_split_k tests/test_gemm_10_persistent_step \
  tests/test_training_09_swap_ab_split_k tests/test_training_10_persistent_step >/dev/null 2>&1 || echo "build failed"
timeout 300 meson test -C build-device --no-rebuild --print-errorlogs --suite 09_swap_ab_split_k --suite 10_persistent_step 2>&1 | grep -E "^ *[0-9]+/[0-9]+ |^Ok|^Fail"
grep -E "checks, [0-9]+ failed" build-device/meson-logs/testlog.txt
