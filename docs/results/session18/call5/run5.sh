#!/usr/bin/env bash
# Session 18, call 5: the rule takes hidden widths up to 1024 (working tree): suites 10 and gpu
# (test_training_10 now trains 784-1024-1024-10 at batch 256 on the grid kernel) and the mutant
# 10_bias_group_restaged_before_summed.
export PATH=/usr/local/cuda/bin:$PATH
mkdir -p "$OUT/m"
MUTATE_JOBS=1 timeout 580 tools/device_run.sh "$OUT/m" tests 10_persistent_step gpu -- mutate \
  10_bias_group_restaged_before_summed 2>&1 | grep -E "^===|^ *[0-9]+/[0-9]+ |^Ok|^Fail|caught|missed|error|mutate:" | tail -16
grep -E "persistent step, batch" build-device/meson-logs/testlog.txt | head -12
tar -czf "$OUT/m.tar.gz" -C "$OUT" m && rm -rf "$OUT/m"
echo "=== end ($(date -u +%T))"
