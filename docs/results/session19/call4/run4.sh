#!/usr/bin/env bash
# Session 19, call 4: the weight gradients on a wider block tile. HEAD 69b81a6 (ab_base/, 32 x 32
# tiles), the working tree (64 x 64), ab_w24/ (64 x 128), ab_w42/ (128 x 64): tools/ab_train.sh of
# all four; the phase clock of HEAD and 64 x 64 at batch 32 and 256, hidden 1024; suites 10 and gpu
# on the working tree. Everything in $OUT/s4.tar.gz.
export PATH=/usr/local/cuda/bin:$PATH
start=$(date +%s)
o=$OUT/s4
mkdir -p data/mnist "$o/p" "$o/m"
for f in .device/mnist-gz/*.gz; do gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,power.limit --format=csv | tee "$o/gpu.txt"
phase_tree() {
  local dir=/tmp/phase4_$1
  rm -rf "$dir"; mkdir -p "$dir" && tar -cf - -C "$2" --exclude='./build*' --exclude=./.device --exclude='./ab_*' --exclude=./exp --exclude=./data/mnist . | tar -xf - -C "$dir"
  python3 tools/phase_clock.py "$dir" && meson setup "$dir/b" "$dir" >/dev/null &&
    ninja -C "$dir/b" chapters/train_10_persistent_step >"$o/build_phase_$1.txt" 2>&1 || echo "phase build $1 failed"
}
phase_tree base ab_base & phase_tree w22 . &
wait
echo "=== phases ($(date -u +%T))"
for shape in 32x1024 256x1024; do
  for rep in 1 2; do
    for v in base w22; do
      /tmp/phase4_$v/b/chapters/train_10_persistent_step --batch ${shape%x*} --hidden ${shape#*x} --epochs 2 --no-eval \
        --data-dir data/mnist --out-dir "/tmp/phase_runs_$v$rep" >"$o/p/phase_${shape}_$v$rep.txt" 2>&1 || echo "phase run $v failed"
      echo "$shape $v rep $rep: $(grep phases "$o/p/phase_${shape}_$v$rep.txt" | tail -1)"
    done
  done
done
echo "=== ab ($(date -u +%T))"
REPS=3 timeout 300 tools/ab_train.sh "$o/ab" 10_persistent_step ab_base . ab_w24 ab_w42 32x1024 256x1024 32x512 256x128 2>&1 | tail -n 6
rm -rf "$o"/ab/build_* "$o"/ab/runs/*/*_steps.csv
left=$((585 - $(date +%s) + start))
echo "=== tests, $left s left ($(date -u +%T))"
timeout $left tools/device_run.sh "$o/m" tests 10_persistent_step gpu 2>&1 | grep -E "^===|^ *[0-9]+/[0-9]+ |^Ok|^Fail|error" | tail -12
tar -czf "$OUT/s4.tar.gz" -C "$OUT" s4 && rm -rf "$o"
echo "=== end ($(date -u +%T))"
