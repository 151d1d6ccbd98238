#!/usr/bin/env bash
# Session 17, call 5: this checkout (HEAD: the first layer's SGD transposed; with it the column
# sends by warp): suites 10 and gpu; compute-sanitizer's four tools on the batch-32 trainer; PyTorch's
# CUDA-graph step and chapter 10 in one run of the comparison harness at batch 32, hidden 128 and 64.
export PATH=/usr/local/cuda/bin:$PATH
date -u; nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit,driver_version --format=csv
mkdir -p data/mnist "$OUT/t" "$OUT/s" "$OUT/cmp"
for f in .device/mnist-gz/*.gz; do gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
timeout 400 tools/device_run.sh "$OUT/t" tests 10_persistent_step gpu 2>&1 | grep -E "^ *[0-9]+/[0-9]+ |^Ok|^Fail|FAIL|rror" | head -30
echo "=== sanitize $(date -u +%T)"
SANITIZE_ONLY='_train_b32_10_' timeout 200 tools/device_run.sh "$OUT/s" sanitize 2>&1 | grep -E "^ok|^FAIL|sanitize:" | head -10
echo "=== compare $(date -u +%T)"
PYTHONUNBUFFERED=1 timeout 240 python3 bench/compare.py --out "$OUT/cmp" --build-dir build-device \
  --batches 32 --hiddens 64,128 --implementations 10_persistent_step \
  --pytorch-variants pytorch_cudagraph --data-dir data/mnist 2>&1 | tail -n 9
rm -rf "$OUT/cmp/runs"
tar -czf "$OUT/r5.tar.gz" -C "$OUT" t s && rm -rf "$OUT/t" "$OUT/s"
echo "=== end $(date -u +%T)"
