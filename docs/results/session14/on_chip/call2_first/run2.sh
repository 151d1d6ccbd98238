#!/usr/bin/env bash
# Session 14, call 2: the on-chip kernel: chapter 10's tests, then A/B against HEAD (ab_base/).
export PATH=/usr/local/cuda/bin:$PATH
mkdir -p "$OUT/a"
tools/device_run.sh "$OUT/a" tests 10_persistent_step 2>&1 | grep -E "^ *[0-9]+/[0-9]+ |^Ok|^Fail|rror|FAIL|fail" | head -40
grep -E "persistent step|partial batch|GPU .* reference|FAIL|fail|identical|DIFFER|error" build-device/meson-logs/testlog.txt | head -60
echo "=== ab ($(date -u +%T))"
REPS=3 timeout 300 tools/ab_train.sh "$OUT/ab" 10_persistent_step ab_base . 32x128 32x64 2>&1 | tail -n 5
rm -rf "$OUT"/ab/build_*; cp build-device/meson-logs/testlog.txt "$OUT/a/"
tar -czf "$OUT/r2.tar.gz" -C "$OUT" a ab && rm -rf "$OUT/a" "$OUT/ab"
echo "=== end ($(date -u +%T))"
