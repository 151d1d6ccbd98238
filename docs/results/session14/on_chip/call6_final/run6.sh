#!/usr/bin/env bash
# Session 14, call 6: the on-chip kernel, block_product in two paths again: tests, section clock,
# A/B against HEAD.
export PATH=/usr/local/cuda/bin:$PATH
mkdir -p "$OUT/a" "$OUT/c"
t=/tmp/t_clock
mkdir -p $t && tar -cf - --exclude=./exp --exclude=./.device --exclude=./ab_base --exclude=./data/mnist --exclude='./build*' . | tar -xf - -C $t
python3 exp/onchip_clock.py $t && (meson setup $t/b $t >/dev/null && ninja -C $t/b chapters/train_10_persistent_step >"$OUT/c/build.txt" 2>&1 || echo "clock build failed") &
tools/device_run.sh "$OUT/a" tests 10_persistent_step 2>&1 | grep -E "^ *[0-9]+/[0-9]+ |^Ok|^Fail|rror|FAIL" | head -20
grep -E "on_chip|FAIL|DIFFER|checks" build-device/meson-logs/testlog.txt | head -20
wait
for h in 128 64; do
  $t/b/chapters/train_10_persistent_step --batch 32 --hidden $h --epochs 2 --no-eval --data-dir data/mnist --out-dir /tmp/c$h >"$OUT/c/clock_h$h.txt" 2>&1
  echo "h$h: $(grep onchip "$OUT/c/clock_h$h.txt" | tail -1)"
done
echo "=== ab ($(date -u +%T))"
REPS=3 timeout 200 tools/ab_train.sh "$OUT/ab" 10_persistent_step ab_base . 32x128 32x64 2>&1 | tail -n 3
rm -rf "$OUT"/ab/build_*; cp build-device/meson-logs/testlog.txt "$OUT/a/"
tar -czf "$OUT/r6.tar.gz" -C "$OUT" a ab c && rm -rf "$OUT/a" "$OUT/ab" "$OUT/c"
echo "=== end ($(date -u +%T))"
