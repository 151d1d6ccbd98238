#!/usr/bin/env bash
# Session 20, call 7: the working tree (the backward phase's data tiles on the blocks with one unit
# fewer): compute-sanitizer's four tools on chapter 10's trainer, batch 96 (grid), 32 (on-chip) and
# 40 at hidden 1000 (grid, wide tile). Everything in $OUT/s7.tar.gz.
export PATH=/usr/local/cuda/bin:$PATH
o=$OUT/s7
mkdir -p data/mnist "$o"
for f in .device/mnist-gz/*.gz; do gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,power.limit --format=csv | tee "$o/gpu.txt"
echo "=== sanitize ($(date -u +%T))"
SANITIZE_ONLY='_train(_wide|_b32)?_10_' SANITIZE_TIMEOUT=200 timeout 500 tools/sanitize.sh build-device "$o/san" 2>&1 | grep -E "^ok|^FAIL|passed|failed|error" | tail -16
rm -rf "$o"/san/*/
tar -czf "$OUT/s7.tar.gz" -C "$OUT" s7 && rm -rf "$o"
echo "=== end ($(date -u +%T))"
