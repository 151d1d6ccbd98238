#!/usr/bin/env bash
# Session 12, call A: branch ch10-loss-in-output-phase: tests of 10/gpu/01, the A/B timing against
# main (ab_main/), then the comparison grid with PyTorch in one script call.
export PATH=/usr/local/cuda/bin:$PATH
mkdir -p "$OUT/a"
tools/device_run.sh "$OUT/a" tests 10_persistent_step gpu 01_naive
echo "=== ab_train ($(date -u +%T))"
tools/ab_train.sh "$OUT/ab" 10_persistent_step ab_main . 32x128 256x128 32x512 32x1024 2>&1 | tail -n 12
rm -rf "$OUT"/ab/build_* 
tar -czf "$OUT/ab.tar.gz" -C "$OUT" ab && rm -rf "$OUT/ab"
echo "=== compare ($(date -u +%T))"
mkdir -p "$OUT/cmp"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv >"$OUT/cmp/gpu.txt"; date -u >>"$OUT/cmp/gpu.txt"
python3 bench/compare.py --out "$OUT/cmp" --build-dir build-device \
  --implementations 08_warp_specialized,09_swap_ab_split_k,10_persistent_step,cublas \
  --data-dir data/mnist --pytorch-variants pytorch_eager,pytorch_cudagraph 2>&1 | tee "$OUT/cmp/log.txt" | tail -n 30
tar -czf "$OUT/cmp.tar.gz" -C "$OUT" cmp
echo "=== end ($(date -u +%T))"
