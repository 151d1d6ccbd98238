#!/usr/bin/env bash
# Session 16, call 12: chapter 10's on-chip backward phases pair dZ W with the layer's SGD in one
# pass (block_product_pair; the fp16 copy refreshed after it): the tests of suite 10, the new
# mutant, then against HEAD (ab_base) with tools/ab_train.sh at batch 32, hidden 128 and 64, the
# step losses compared, and chapter 10 with PyTorch's graph at batch 32, hidden 128 in one run.
export PATH=/usr/local/cuda/bin:$PATH
mkdir -p "$OUT/t" "$OUT/m" "$OUT/ab" "$OUT/cmp"
timeout 200 tools/device_run.sh "$OUT/t" tests 10_persistent_step 2>&1 | grep -E "^===|^ *[0-9]+/[0-9]+ |^Ok|^Fail|FAIL|Timeout" | head -12
MUTATE_JOBS=1 timeout 120 tools/device_run.sh "$OUT/m" mutate 10_on_chip_hidden_fp16_copy_never_refreshed 2>&1 | grep -E "caught|missed|mutate:" | tail -2
REPS=5 timeout 200 tools/ab_train.sh "$OUT/ab" 10_persistent_step ab_base . 32x128 32x64 2>&1 | tail -4
for h in 128 64; do
  a=$(ls "$OUT"/ab/runs/a_b32_h${h}_r1/*_steps.csv) b=$(ls "$OUT"/ab/runs/b_b32_h${h}_r1/*_steps.csv)
  echo "h$h: $(paste -d, <(cut -d, -f4 "$a") <(cut -d, -f4 "$b") | awk -F, 'NR>1{n++; s+=($1==$2)} END{print s" of "n" step losses identical as printed"}')"
done
PYTHONUNBUFFERED=1 timeout 150 python3 bench/compare.py --out "$OUT/cmp" --build-dir build-device \
  --batches 32 --hiddens 128 --implementations 10_persistent_step \
  --pytorch-variants pytorch_cudagraph --data-dir data/mnist 2>&1 | tail -n 4
rm -rf "$OUT/cmp/runs" "$OUT"/ab/build_* "$OUT"/ab/runs
tar -czf "$OUT/r12.tar.gz" -C "$OUT" ab cmp && rm -rf "$OUT/ab" "$OUT/cmp"
echo "=== end ($(date -u +%T))"
