#!/usr/bin/env bash
# Session 15, call 9: after chapter 09's warpgroup_sync moved to chapter 08 (which now uses it in
# place of a barrier numbered by a register): the tests of 08, 09 and 10 on the H100.
export PATH=/usr/local/cuda/bin:$PATH
mkdir -p "$OUT/a"
timeout 560 tools/device_run.sh "$OUT/a" tests 08_warp_specialized 09_swap_ab_split_k 10_persistent_step 2>&1 | grep -E "^===|^ *[0-9]+/[0-9]+ |^Ok|^Fail|FAIL|Timeout" | head -30
cp build-device/meson-logs/testlog.txt "$OUT/a/" 2>/dev/null
