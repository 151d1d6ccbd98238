#!/usr/bin/env bash
# Session 21, call 3: chapter 09's trainer with the batch tile per product (working tree) against
# f789a35 (ab_base/), tools/ab_train.sh at batch 256 and one batch-32 shape; then tools/mutate.sh
# on chapter 09's mutants of the batch tiles and of the counters. Everything in $OUT/s3.tar.gz.
export PATH=/usr/local/cuda/bin:$PATH
start=$(date +%s)
o=$OUT/s3
mkdir -p "$o" data/mnist
for f in .device/mnist-gz/*.gz; do gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,power.limit --format=csv | tee "$o/gpu.txt"
date -u
echo "=== ab ($(date -u +%T))"
REPS=3 timeout 330 tools/ab_train.sh "$o/ab" 09_swap_ab_split_k ab_base . 256x1024 256x2048 256x4096 256x8192 32x1024 2>&1 | tail -n 8
rm -rf "$o"/ab/build_* "$o"/ab/runs
left=$((585 - $(date +%s) + start))
echo "=== mutants, $left s left ($(date -u +%T))"
MUTATE_JOBS=3 timeout $left tools/device_run.sh "$o/mut" mutate 09_batch_tile_rounded_down 09_counter_shared_by_consumers \
  09_batch_tile_only_below_one_wave 09_batch_rows_of_the_first_tile_loaded 09_batch_tile_stored_at_the_first \
  09_units_of_one_batch_tile 2>&1 | grep -E "^===|caught|MISSED|survived|error|passed|failed" | tail -10
tar -czf "$OUT/s3.tar.gz" -C "$OUT" s3
echo "=== end ($(date -u +%T))"
