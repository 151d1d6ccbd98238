#!/usr/bin/env bash
# Session 14, call 9: the tree of commit 86b406d (the working tree sent; its git log line printed
# on the device is stale metadata and names an older commit): tests of gpu and 10, compute-sanitizer on
# chapter 10's trainer.
export PATH=/usr/local/cuda/bin:$PATH
mkdir -p "$OUT/t" "$OUT/s"
git log --oneline -1 2>/dev/null
tools/device_run.sh "$OUT/t" tests gpu 10_persistent_step 2>&1 | grep -E "^ *[0-9]+/[0-9]+ |^Ok|^Fail|rror|FAIL" | head -20
grep -E "on_chip|persistent step|checks" build-device/meson-logs/testlog.txt | head -12
SANITIZE_JOBS=8 SANITIZE_TIMEOUT=200 SANITIZE_ONLY='_train_10_' timeout 280 tools/sanitize.sh build-device "$OUT/s" 2>&1 | tail -n 6
tar -czf "$OUT/r9.tar.gz" -C "$OUT" s && rm -rf "$OUT/s"
echo "=== end ($(date -u +%T))"
