#!/usr/bin/env bash
# Session 13, call 2 (experiment): the grid as one thread block cluster, its hardware barrier in
# place of the grid barrier (working tree, 16 blocks; a copy with 8) against HEAD (ab_base/):
# phase clocks of all three, the A/B timing of 16 blocks against HEAD, then chapter 10's
# training test built from the 16-block tree.
export PATH=/usr/local/cuda/bin:$PATH
echo "=== GPU ($(date -u +%T))"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv,noheader
mkdir -p data/mnist && for f in .device/mnist-gz/*.gz; do gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
copy_tree() {  # copy_tree DIR SRC
  mkdir -p "$1" && tar -cf - -C "$2" --exclude='./build*' --exclude=./.device --exclude='./ab_*' --exclude=./data/mnist . | tar -xf - -C "$1"
}
copy_tree /tmp/c8 . && sed -i 's/constexpr int kClusterBlocks = 16;/constexpr int kClusterBlocks = 8;/' /tmp/c8/chapters/10_persistent_step/steps.cuh
phase_tree() {  # phase_tree NAME SRC
  local dir=/tmp/phase_$1
  copy_tree "$dir" "$2" && python3 tools/phase_clock.py "$dir" && meson setup "$dir/b" "$dir" >/dev/null &&
    ninja -C "$dir/b" chapters/train_10_persistent_step >"$OUT/build_phase_$1.txt" 2>&1 || echo "phase build $1 failed"
}
phase_tree base ab_base & phase_tree c16 . & phase_tree c8 /tmp/c8 &
wait
echo "=== phases ($(date -u +%T))"
for rep in 1 2; do
  for v in base c16 c8; do
    for shape in "32 128" "256 128"; do
      set -- $shape
      /tmp/phase_$v/b/chapters/train_10_persistent_step --batch $1 --hidden $2 --epochs 2 --no-eval \
        --data-dir data/mnist --out-dir "/tmp/phase_runs_$v$rep" >"$OUT/phase_${v}_b$1_h$2_$rep.txt" 2>&1 || echo "phase run $v $shape failed"
      echo "$v b$1 h$2 rep $rep: $(grep phases "$OUT/phase_${v}_b$1_h$2_$rep.txt" | tail -1) | $(grep -E '^epoch' "$OUT/phase_${v}_b$1_h$2_$rep.txt" | tail -1)"
    done
  done
done
echo "=== ab ($(date -u +%T))"
tools/ab_train.sh "$OUT/ab" 10_persistent_step ab_base . 32x128 256x128 32x512 2>&1 | tail -n 5
rm -rf "$OUT"/ab/build_* "$OUT"/ab/runs/*/*_steps.csv
echo "=== training test, 16 blocks ($(date -u +%T))"
ninja -C /tmp/phase_c16/b tests/test_training_10_persistent_step >/dev/null 2>&1 || echo "test build failed"
timeout 200 /tmp/phase_c16/b/tests/test_training_10_persistent_step data/mnist >"$OUT/test_c16.txt" 2>&1; echo "rc $?"
tail -n 4 "$OUT/test_c16.txt"
tar -czf "$OUT/ab.tar.gz" -C "$OUT" ab && rm -rf "$OUT/ab"
echo "=== end ($(date -u +%T))"
