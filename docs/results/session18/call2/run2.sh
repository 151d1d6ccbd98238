#!/usr/bin/env bash
# Session 18, call 2: the staged biases (working tree, as in call 1): chapter 10's trainer against
# PyTorch's CUDA-graph step in one call (bench/compare.py) at batch 256, hidden 128 and 512; the
# three bias-group mutants; compute-sanitizer's four tools on chapter 10's trainer at batch 96
# (the grid kernel).
export PATH=/usr/local/cuda/bin:$PATH
mkdir -p data/mnist "$OUT/cmp" "$OUT/m" "$OUT/s"
for f in .device/mnist-gz/*.gz; do [ -f "data/mnist/$(basename "${f%.gz}")" ] || gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
[ -f build-device/build.ninja ] || meson setup build-device >/dev/null
ninja -C build-device chapters/train_10_persistent_step | tail -1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv >"$OUT/cmp/gpu.txt"; date -u >>"$OUT/cmp/gpu.txt"
echo "=== compare ($(date -u +%T))"
timeout 200 python3 bench/compare.py --out "$OUT/cmp" --build-dir build-device --batches 256 --hiddens 128,512 \
  --implementations 10_persistent_step --data-dir data/mnist --pytorch-variants pytorch_cudagraph 2>&1 | tee "$OUT/cmp/log.txt" | tail -n 8
echo "=== sanitizer ($(date -u +%T))"
SANITIZE_JOBS=4 SANITIZE_TIMEOUT=200 SANITIZE_ONLY='^[a-z]+_train_10_' timeout 230 tools/sanitize.sh build-device "$OUT/s" 2>&1 | tail -n 6
echo "=== mutants ($(date -u +%T))"
MUTATE_JOBS=3 timeout 240 tools/device_run.sh "$OUT/m" mutate \
  10_first_bias_group_never_updated 10_bias_group_sum_one_row_short 10_bias_group_summed_before_staged \
  2>&1 | grep -E "caught|missed|error|mutate:" | tail -8
tar -czf "$OUT/cms.tar.gz" -C "$OUT" cmp m s && rm -rf "$OUT/cmp" "$OUT/m" "$OUT/s"
echo "=== end ($(date -u +%T))"
