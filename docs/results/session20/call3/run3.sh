#!/usr/bin/env bash
# Session 20, call 3: split K with the unsplit products' tile found without an integer division
# (working tree; ab_fwd/: forward phases only) against 28d713b (ab_base/): the phase clock of base
# and working tree at batch 32, hidden 1024 and batch 256, hidden 512; tools/ab_train.sh at the grid
# kernel's shapes; the kernel's machine-code size in both. Everything in $OUT/s3.tar.gz.
export PATH=/usr/local/cuda/bin:$PATH
start=$(date +%s)
o=$OUT/s3
mkdir -p data/mnist "$o/p"
for f in .device/mnist-gz/*.gz; do gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,power.limit --format=csv | tee "$o/gpu.txt"
phase_tree() {
  local dir=/tmp/phase3_$1
  rm -rf "$dir"; mkdir -p "$dir" && tar -cf - -C "$2" --exclude='./build*' --exclude=./.device --exclude='./ab_*' --exclude=./exp --exclude=./data/mnist . | tar -xf - -C "$dir"
  python3 tools/phase_clock.py "$dir" && meson setup "$dir/b" "$dir" >/dev/null &&
    ninja -C "$dir/b" chapters/train_10_persistent_step >"$o/build_phase_$1.txt" 2>&1 || echo "phase build $1 failed"
}
phase_tree base ab_base & phase_tree split . &
wait
for v in base split; do
  cuobjdump -sass -fun persistent_training_kernel /tmp/phase3_$v/b/chapters/train_10_persistent_step 2>/dev/null |
    grep -cE '^\s+/\*[0-9a-f]{4}\*/' | sed "s/^/$v (phase-clock build) SASS instructions: /"
done
echo "=== phases ($(date -u +%T))"
for shape in 32x1024 256x512; do
  for v in base split; do
    /tmp/phase3_$v/b/chapters/train_10_persistent_step --batch ${shape%x*} --hidden ${shape#*x} --epochs 2 --no-eval \
      --data-dir data/mnist --out-dir "/tmp/phase_runs_$v" >"$o/p/phase_${shape}_$v.txt" 2>&1 || echo "phase run $v failed"
    echo "$shape $v: $(grep phases "$o/p/phase_${shape}_$v.txt" | tail -1)"
  done
done
left=$((585 - $(date +%s) + start))
echo "=== ab, $left s left ($(date -u +%T))"
REPS=3 timeout $left tools/ab_train.sh "$o/ab" 10_persistent_step ab_base . ab_fwd 32x512 32x1024 256x128 256x512 256x1024 2>&1 | tail -n 8
rm -rf "$o"/ab/build_* "$o"/ab/runs/*/*_steps.csv
tar -czf "$OUT/s3.tar.gz" -C "$OUT" s3 && rm -rf "$o"
echo "=== end ($(date -u +%T))"
