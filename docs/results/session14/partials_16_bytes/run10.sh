#!/usr/bin/env bash
# Session 14, call 10: the partial products sent 16 bytes at a time (working tree) against HEAD
# (ab_base/): chapter 10's tests, the A/B, then chapter 10 against PyTorch's steps in one call.
export PATH=/usr/local/cuda/bin:$PATH
mkdir -p "$OUT/t" "$OUT/cmp"
tools/device_run.sh "$OUT/t" tests 10_persistent_step 2>&1 | grep -E "^ *[0-9]+/[0-9]+ |^Ok|^Fail|rror|FAIL" | head -12
grep -E "on_chip|checks" build-device/meson-logs/testlog.txt | head -8
echo "=== ab ($(date -u +%T))"
REPS=3 timeout 200 tools/ab_train.sh "$OUT/ab" 10_persistent_step ab_base . 32x128 32x64 2>&1 | tail -n 3
rm -rf "$OUT"/ab/build_*
echo "=== comparison ($(date -u +%T))"
ninja -C build-device chapters/train_10_persistent_step | tail -1
PYTHONUNBUFFERED=1 timeout 200 python3 bench/compare.py --out "$OUT/cmp" --build-dir build-device \
  --batches 32,256 --hiddens 128 --implementations 10_persistent_step \
  --pytorch-variants pytorch_cudagraph --data-dir data/mnist 2>&1 | tail -n 8
rm -rf "$OUT/cmp/runs"
tar -czf "$OUT/r10.tar.gz" -C "$OUT" ab cmp && rm -rf "$OUT/ab" "$OUT/cmp"
echo "=== end ($(date -u +%T))"
