#!/usr/bin/env bash
# Session 13, call 5: one mma tile per warp, four accumulator chains, in chapter 10's block tile
# (working tree) against HEAD (ab_base/): the tests of gpu, 01 and 10 on the working tree, the phase clock of both (built
# while the tests run), compute-sanitizer on chapter 10's trainer, then the A/B timing.
export PATH=/usr/local/cuda/bin:$PATH
mkdir -p "$OUT/a" "$OUT/s"
phase_tree() {
  local dir=/tmp/phase_$1
  mkdir -p "$dir" && tar -cf - -C "$2" --exclude='./build*' --exclude=./.device --exclude='./ab_*' --exclude=./data/mnist . | tar -xf - -C "$dir"
  python3 tools/phase_clock.py "$dir" && meson setup "$dir/b" "$dir" >/dev/null &&
    ninja -C "$dir/b" chapters/train_10_persistent_step >"$OUT/build_phase_$1.txt" 2>&1 || echo "phase build $1 failed"
}
phase_tree base ab_base & phase_tree warp . &
tools/device_run.sh "$OUT/a" tests gpu 01_naive 10_persistent_step 2>&1 | grep -E "^ *[0-9]+/[0-9]+ |^Ok|^Fail|rror"
wait
echo "=== phases ($(date -u +%T))"
for v in base warp; do
  for rep in 1 2; do
    /tmp/phase_$v/b/chapters/train_10_persistent_step --batch 32 --hidden 128 --epochs 2 --no-eval \
      --data-dir data/mnist --out-dir "/tmp/phase_runs_$v$rep" >"$OUT/phase_$v$rep.txt" 2>&1 || echo "phase run $v failed"
    echo "$v rep $rep: $(grep phases "$OUT/phase_$v$rep.txt" | tail -1)"
  done
done
echo "=== sanitizer ($(date -u +%T))"
SANITIZE_JOBS=8 SANITIZE_TIMEOUT=240 SANITIZE_ONLY='_train_10_' tools/sanitize.sh build-device "$OUT/s" 2>&1 | tail -n 5
tar -czf "$OUT/as.tar.gz" -C "$OUT" a s && rm -rf "$OUT/a" "$OUT/s"
echo "=== ab ($(date -u +%T))"
tools/ab_train.sh "$OUT/ab" 10_persistent_step ab_base . 32x128 256x128 32x512 2>&1 | tail -n 5
rm -rf "$OUT"/ab/build_* "$OUT"/ab/runs/*/*_steps.csv
tar -czf "$OUT/ab.tar.gz" -C "$OUT" ab && rm -rf "$OUT/ab"
echo "=== end ($(date -u +%T))"
