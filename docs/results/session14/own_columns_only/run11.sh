#!/usr/bin/env bash
# Session 14, call 11: the output layer's dZ W over the block's own columns only (working tree)
# against HEAD (ab_base/): chapter 10's tests, the A/B, then chapter 10 against PyTorch's graph.
export PATH=/usr/local/cuda/bin:$PATH
mkdir -p "$OUT/t" "$OUT/cmp"
tools/device_run.sh "$OUT/t" tests 10_persistent_step 2>&1 | grep -E "^ *[0-9]+/[0-9]+ |^Ok|^Fail|rror|FAIL" | head -12
grep -E "on_chip|checks|partial batch" build-device/meson-logs/testlog.txt | head -10
echo "=== ab ($(date -u +%T))"
REPS=3 timeout 200 tools/ab_train.sh "$OUT/ab" 10_persistent_step ab_base . 32x128 32x64 2>&1 | tail -n 3
rm -rf "$OUT"/ab/build_*
echo "=== comparison ($(date -u +%T))"
PYTHONUNBUFFERED=1 timeout 200 python3 bench/compare.py --out "$OUT/cmp" --build-dir build-device \
  --batches 32,256 --hiddens 128 --implementations 10_persistent_step \
  --pytorch-variants pytorch_cudagraph --data-dir data/mnist 2>&1 | tail -n 6
rm -rf "$OUT/cmp/runs"; cp build-device/meson-logs/testlog.txt "$OUT/ab/testlog_10.txt"
tar -czf "$OUT/r11.tar.gz" -C "$OUT" ab cmp && rm -rf "$OUT/ab" "$OUT/cmp"
echo "=== end ($(date -u +%T))"
