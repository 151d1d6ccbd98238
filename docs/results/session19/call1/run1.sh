#!/usr/bin/env bash
# Session 19, call 1: chapter 10's grid kernel with the ring across a block's tiles (working tree)
# against HEAD 69b81a6 (ab_base/): the phase clock of both at batch 32 and 256, hidden 1024;
# tools/ab_train.sh at the grid kernel's shapes; then suites 10 and gpu.
export PATH=/usr/local/cuda/bin:$PATH
start=$(date +%s)
mkdir -p data/mnist "$OUT/m" "$OUT/p"
for f in .device/mnist-gz/*.gz; do gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,power.limit --format=csv | tee "$OUT/gpu.txt"
phase_tree() {
  local dir=/tmp/phase_$1
  mkdir -p "$dir" && tar -cf - -C "$2" --exclude='./build*' --exclude=./.device --exclude='./ab_*' --exclude=./exp --exclude=./data/mnist . | tar -xf - -C "$dir"
  python3 tools/phase_clock.py "$dir" && meson setup "$dir/b" "$dir" >/dev/null &&
    ninja -C "$dir/b" chapters/train_10_persistent_step >"$OUT/build_phase_$1.txt" 2>&1 || echo "phase build $1 failed"
}
phase_tree base ab_base & phase_tree ring . &
wait
echo "=== phases ($(date -u +%T))"
for shape in 32x1024 256x1024; do
  for rep in 1 2; do
    for v in base ring; do
      /tmp/phase_$v/b/chapters/train_10_persistent_step --batch ${shape%x*} --hidden ${shape#*x} --epochs 2 --no-eval \
        --data-dir data/mnist --out-dir "/tmp/phase_runs_$v$rep" >"$OUT/p/phase_${shape}_$v$rep.txt" 2>&1 || echo "phase run $v failed"
      echo "$shape $v rep $rep: $(grep phases "$OUT/p/phase_${shape}_$v$rep.txt" | tail -1)"
    done
  done
done
tar -czf "$OUT/p.tar.gz" -C "$OUT" p && rm -rf "$OUT/p"
echo "=== ab ($(date -u +%T))"
REPS=3 timeout 330 tools/ab_train.sh "$OUT/ab" 10_persistent_step ab_base . 32x1024 256x1024 32x512 256x512 256x128 2>&1 | tail -n 7
rm -rf "$OUT"/ab/build_* "$OUT"/ab/runs/*/*_steps.csv
cp "$OUT/ab/ab_summary.csv" "$OUT/ab/ab.csv" "$OUT/" 2>/dev/null
tar -czf "$OUT/ab.tar.gz" -C "$OUT" ab && rm -rf "$OUT/ab"
left=$((590 - $(date +%s) + start))
echo "=== tests, $left s left ($(date -u +%T))"
timeout $left tools/device_run.sh "$OUT/m" tests 10_persistent_step gpu 2>&1 | grep -E "^===|^ *[0-9]+/[0-9]+ |^Ok|^Fail|error" | tail -12
tar -czf "$OUT/m.tar.gz" -C "$OUT" m && rm -rf "$OUT/m"
echo "=== end ($(date -u +%T))"
