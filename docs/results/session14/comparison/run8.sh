#!/usr/bin/env bash
# Session 14, call 8: chapter 10 (the on-chip kernel where the model fits) and cuBLAS against
# PyTorch's eager and CUDA-graph steps, in one call, at the issue's shapes.
export PATH=/usr/local/cuda/bin:$PATH
mkdir -p data/mnist "$OUT/cmp"
for f in .device/mnist-gz/*.gz; do gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
meson setup build-device >/dev/null && ninja -C build-device chapters/train_10_persistent_step bench/train_cublas | tail -1
nvidia-smi --query-gpu=name,clocks.sm,driver_version --format=csv,noheader
PYTHONUNBUFFERED=1 timeout 500 python3 bench/compare.py --out "$OUT/cmp" --build-dir build-device \
  --batches 32,256 --hiddens 128,512,1024 --implementations 10_persistent_step,cublas \
  --pytorch-variants pytorch_eager,pytorch_cudagraph --data-dir data/mnist 2>&1 | tail -n 30
rm -rf "$OUT/cmp/runs"
tar -czf "$OUT/cmp.tar.gz" -C "$OUT" cmp && rm -rf "$OUT/cmp"
echo "=== end ($(date -u +%T))"
