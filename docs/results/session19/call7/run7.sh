#!/usr/bin/env bash
# Session 19, call 7: main at ff278a1 (the 64 x 64 weight tile): suites 10 and gpu; compute-
# sanitizer's four tools on chapter 10's trainer (batch 96 and 40 on the grid kernel, the latter
# at hidden 1000 on the wide tile; batch 32 on-chip); bench/compare.py with chapters 09 and 10 and
# PyTorch's CUDA-graph step at batch 32 and 256, hidden 128 and 1024. Everything in $OUT/s7.tar.gz.
export PATH=/usr/local/cuda/bin:$PATH
start=$(date +%s)
o=$OUT/s7
mkdir -p data/mnist "$o/m" "$o/cmp"
for f in .device/mnist-gz/*.gz; do gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,power.limit --format=csv | tee "$o/gpu.txt"
timeout 260 tools/device_run.sh "$o/m" tests 10_persistent_step gpu 2>&1 | grep -E "^===|^ *[0-9]+/[0-9]+ |^Ok|^Fail|error" | tail -12
grep -E "persistent step, batch|steps in one launch" "$o/m/log.txt" | head -16
echo "=== sanitize ($(date -u +%T))"
SANITIZE_ONLY='_train(_wide|_b32)?_10_' SANITIZE_TIMEOUT=200 timeout 230 tools/sanitize.sh build-device "$o/san" 2>&1 | grep -E "^ok|^FAIL|passed|failed" | tail -14
rm -rf "$o"/san/*/  # the trainers' CSVs
echo "=== compare ($(date -u +%T))"
left=$((585 - $(date +%s) + start))
timeout $left python3 bench/compare.py --out "$o/cmp" --build-dir build-device --batches 32,256 --hiddens 128,1024 \
  --implementations 09_swap_ab_split_k,10_persistent_step --data-dir data/mnist --pytorch-variants pytorch_cudagraph \
  2>&1 | tee "$o/cmp/log.txt" | tail -n 14
tar -czf "$OUT/s7.tar.gz" -C "$OUT" s7 && rm -rf "$o"
echo "=== end ($(date -u +%T))"
