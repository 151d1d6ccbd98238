#!/usr/bin/env bash
# Session 22, call 6 (the tree of calls 4 and 5): compute-sanitizer's four tools on chapters 09 and
# 10 (GEMM tests, small shapes, and trainers). In $OUT/s6.tar.gz.
export PATH=/usr/local/cuda/bin:$PATH
o=$OUT/s6
mkdir -p "$o" data/mnist
for f in .device/mnist-gz/*.gz; do gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,power.limit --format=csv | tee "$o/gpu.txt"
date -u
[ -f build-device/build.ninja ] || meson setup build-device >/dev/null
ninja -C build-device >"$o/build.txt" 2>&1; tail -1 "$o/build.txt"
echo "=== sanitize ($(date -u +%T))"
SANITIZE_ONLY='_09_swap|_10_persistent' SANITIZE_JOBS=8 timeout 500 tools/sanitize.sh build-device "$o/san" 2>&1 | tail -n 20
tar -czf "$OUT/s6.tar.gz" -C "$OUT" s6
echo "=== end ($(date -u +%T))"
