#!/usr/bin/env bash
# Session 14, call 5: the on-chip kernel on st.async and mbarriers: tests, section clock, sanitizer,
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
echo "=== sanitizer ($(date -u +%T))"
mkdir -p "$OUT/s"; SANITIZE_JOBS=8 SANITIZE_TIMEOUT=200 SANITIZE_ONLY='_train_10_' timeout 280 tools/sanitize.sh build-device "$OUT/s" 2>&1 | tail -n 6
rm -rf "$OUT"/ab/build_*; cp build-device/meson-logs/testlog.txt "$OUT/a/"
tar -czf "$OUT/r5.tar.gz" -C "$OUT" a ab c s && rm -rf "$OUT/a" "$OUT/ab" "$OUT/c" "$OUT/s"
echo "=== end ($(date -u +%T))"
