#!/usr/bin/env bash
# Session 18, call 8 (review): bias_sgd_group sums through bias_sgd_column over halves staged in
# shared memory, where it had its own loop over floats (working tree) against HEAD 086a8b9
# (ab_base/): tools/ab_train.sh at 256x128 and 256x1024, the step losses of both; then suites 10
# and gpu in the time left.
export PATH=/usr/local/cuda/bin:$PATH
start=$(date +%s)
mkdir -p data/mnist "$OUT/m"
for f in .device/mnist-gz/*.gz; do gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,power.limit --format=csv
echo "=== ab ($(date -u +%T))"
REPS=3 timeout 280 tools/ab_train.sh "$OUT/ab" 10_persistent_step ab_base . 256x128 256x1024 2>&1 | tail -n 4
for s in b256_h128 b256_h1024; do
  for v in a b; do echo "$v $s: $(tail -1 "$OUT"/ab/runs/${v}_${s}_r1/*_epochs.csv | cut -d, -f3-8)"; done
done
rm -rf "$OUT"/ab/build_* "$OUT"/ab/runs/*/*_steps.csv
cp "$OUT/ab/ab_summary.csv" "$OUT/"
tar -czf "$OUT/ab.tar.gz" -C "$OUT" ab && rm -rf "$OUT/ab"
left=$((585 - $(date +%s) + start))
echo "=== tests, $left s left ($(date -u +%T))"
timeout $left tools/device_run.sh "$OUT/m" tests 10_persistent_step gpu 2>&1 | grep -E "^===|^ *[0-9]+/[0-9]+ |^Ok|^Fail|error" | tail -12
tar -czf "$OUT/m.tar.gz" -C "$OUT" m && rm -rf "$OUT/m"
echo "=== end ($(date -u +%T))"
