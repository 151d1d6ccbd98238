#!/usr/bin/env bash
# Session 20, call 6: the backward phase's data tiles on the blocks with one unit fewer where a block has more than one unit (working
# tree) against 28d713b (ab_base/): suites 10 and gpu; the phase clock of both at batch 32, hidden
# 1024 and batch 256, hidden 1024; tools/ab_train.sh at the grid kernel's shapes; the two mutants of the order. Everything in
# $OUT/s6.tar.gz.
export PATH=/usr/local/cuda/bin:$PATH
start=$(date +%s)
o=$OUT/s6
mkdir -p data/mnist "$o/p" "$o/m"
for f in .device/mnist-gz/*.gz; do gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,power.limit --format=csv | tee "$o/gpu.txt"
phase_tree() {
  local dir=/tmp/phase6_$1
  rm -rf "$dir"; mkdir -p "$dir" && tar -cf - -C "$2" --exclude='./build*' --exclude=./.device --exclude='./ab_*' --exclude=./exp --exclude=./data/mnist . | tar -xf - -C "$dir"
  python3 tools/phase_clock.py "$dir" && meson setup "$dir/b" "$dir" >/dev/null &&
    ninja -C "$dir/b" chapters/train_10_persistent_step >"$o/build_phase_$1.txt" 2>&1 || echo "phase build $1 failed"
}
phase_tree base ab_base & phase_tree placed . &
echo "=== tests ($(date -u +%T))"
timeout 300 tools/device_run.sh "$o/m" tests 10_persistent_step gpu 2>&1 | grep -E "^===|^ *[0-9]+/[0-9]+ |^Ok|^Fail|error" | tail -12
grep -E "persistent step, batch|steps in one launch|largest gap|FAIL" "$o/m/log.txt" | grep -iE "persistent|steps in one|FAIL|gap" | head -30
wait
echo "=== phases ($(date -u +%T))"
for shape in 32x1024; do
  for v in base placed base placed; do
    /tmp/phase6_$v/b/chapters/train_10_persistent_step --batch ${shape%x*} --hidden ${shape#*x} --epochs 2 --no-eval \
      --data-dir data/mnist --out-dir "/tmp/phase_runs_$v" >>"$o/p/phase_${shape}_$v.txt" 2>&1 || echo "phase run $v failed"
    echo "$shape $v: $(grep phases "$o/p/phase_${shape}_$v.txt" | tail -1)"
  done
done
left=$((585 - $(date +%s) + start))
echo "=== ab, $left s left ($(date -u +%T))"
REPS=3 timeout $((left - 170)) tools/ab_train.sh "$o/ab" 10_persistent_step ab_base . 32x512 32x1024 256x128 256x512 256x1024 2>&1 | tail -n 7
rm -rf "$o"/ab/build_* "$o"/ab/runs
left=$((590 - $(date +%s) + start))
echo "=== mutants, $left s left ($(date -u +%T))"
MUTATE_JOBS=2 timeout $left tools/device_run.sh "$o/mut" mutate 10_data_tile_one_past_its_range \
  10_weight_tile_after_the_data_tiles_off_by_one 2>&1 | grep -E "^===|caught|MISSED|survived|error|passed|failed" | tail -8
tar -czf "$OUT/s6.tar.gz" -C "$OUT" s6 && rm -rf "$o"
echo "=== end ($(date -u +%T))"
