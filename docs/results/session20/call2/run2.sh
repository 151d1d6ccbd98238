#!/usr/bin/env bash
# Session 20, call 2 (call 1 again, after the fix of the unsplit products' K): split K in chapter 10 (working tree: forward phases and the backward-data
# product; ab_fwd/: forward phases only) against 28d713b (ab_base/): suites 10 and gpu on the
# working tree; the phase clock of base and working tree at batch 32, hidden 1024; tools/ab_train.sh
# at 32x512, 32x1024, 256x512. Everything in $OUT/s2.tar.gz.
export PATH=/usr/local/cuda/bin:$PATH
start=$(date +%s)
o=$OUT/s2
mkdir -p data/mnist "$o/p" "$o/m"
for f in .device/mnist-gz/*.gz; do gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,power.limit --format=csv | tee "$o/gpu.txt"
phase_tree() {
  local dir=/tmp/phase_$1
  rm -rf "$dir"; mkdir -p "$dir" && tar -cf - -C "$2" --exclude='./build*' --exclude=./.device --exclude='./ab_*' --exclude=./exp --exclude=./data/mnist . | tar -xf - -C "$dir"
  python3 tools/phase_clock.py "$dir" && meson setup "$dir/b" "$dir" >/dev/null &&
    ninja -C "$dir/b" chapters/train_10_persistent_step >"$o/build_phase_$1.txt" 2>&1 || echo "phase build $1 failed"
}
phase_tree base ab_base & phase_tree split . &
echo "=== tests ($(date -u +%T))"
timeout 300 tools/device_run.sh "$o/m" tests 10_persistent_step gpu 2>&1 | grep -E "^===|^ *[0-9]+/[0-9]+ |^Ok|^Fail|error" | tail -12
grep -E "persistent step, batch|steps in one launch|largest gap|FAIL" "$o/m/log.txt" | grep -iE "persistent|steps in one|FAIL|gap" | head -30
wait
echo "=== phases ($(date -u +%T))"
for shape in 32x1024; do
  for v in base split; do
    /tmp/phase_$v/b/chapters/train_10_persistent_step --batch ${shape%x*} --hidden ${shape#*x} --epochs 2 --no-eval \
      --data-dir data/mnist --out-dir "/tmp/phase_runs_$v" >"$o/p/phase_${shape}_$v.txt" 2>&1 || echo "phase run $v failed"
    echo "$shape $v: $(grep phases "$o/p/phase_${shape}_$v.txt" | tail -1)"
  done
done
left=$((580 - $(date +%s) + start))
echo "=== ab, $left s left ($(date -u +%T))"
REPS=3 timeout $left tools/ab_train.sh "$o/ab" 10_persistent_step ab_base . ab_fwd 32x512 32x1024 256x512 2>&1 | tail -n 6
rm -rf "$o"/ab/build_* "$o"/ab/runs/*/*_steps.csv
tar -czf "$OUT/s2.tar.gz" -C "$OUT" s2 && rm -rf "$o"
echo "=== end ($(date -u +%T))"
