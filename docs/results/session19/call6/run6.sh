#!/usr/bin/env bash
# Session 19, call 6: the grid again as many blocks as the phases have 32 x 32 tiles (call 5's tree
# counted the weight gradients as 64 x 64 tiles, and launched fewer blocks): tools/ab_train.sh
# against HEAD 69b81a6 (ab_base/) at the grid kernel's shapes; then the mutants of the tile.
# Everything in $OUT/s6.tar.gz.
export PATH=/usr/local/cuda/bin:$PATH
start=$(date +%s)
o=$OUT/s6
mkdir -p data/mnist "$o/m"
for f in .device/mnist-gz/*.gz; do gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,power.limit --format=csv | tee "$o/gpu.txt"
echo "=== ab ($(date -u +%T))"
REPS=3 timeout 330 tools/ab_train.sh "$o/ab" 10_persistent_step ab_base . 32x512 32x1024 256x128 256x512 256x1024 2>&1 | tail -n 7
rm -rf "$o"/ab/build_* "$o"/ab/runs/*/*_steps.csv
left=$((585 - $(date +%s) + start))
echo "=== mutants, $left s left ($(date -u +%T))"
MUTATE_JOBS=3 timeout $left tools/device_run.sh "$o/m" mutate 10_weight_tile_b_fragments_of_the_first_tile \
  10_weight_tile_a_fragments_of_the_first_tile 10_last_steps_of_k_skipped 2>&1 | grep -E "^===|caught|MISSED|survived|error|passed|failed" | tail -12
tar -czf "$OUT/s6.tar.gz" -C "$OUT" s6 && rm -rf "$o"
echo "=== end ($(date -u +%T))"
