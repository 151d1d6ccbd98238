#!/usr/bin/env bash
# Session 16, call 4: the tests of chapters 07-10 and the gpu suite after this session's changes
# (one tensor-map encoder in tma.cuh; chapter 10's on-chip kernel on chapter 07's mbarrier wrappers
# and bias_sgd_column), then tools/squares_ab.sh's first run: HEAD against itself (a and b), 3
# rounds, which also shows the drift between two identical kernels.
export PATH=/usr/local/cuda/bin:$PATH
mkdir -p "$OUT/t" "$OUT/q"
timeout 420 tools/device_run.sh "$OUT/t" tests 07_wgmma 08_warp_specialized 09_swap_ab_split_k 10_persistent_step gpu 2>&1 | grep -E "^===|^ *[0-9]+/[0-9]+ |^Ok|^Fail|FAIL|Timeout" | head -40
cp build-device/meson-logs/testlog.txt "$OUT/t/" 2>/dev/null
timeout 170 tools/squares_ab.sh "$OUT/q" 08_warp_specialized 3 a b 2>&1 | tail -12
echo "=== end ($(date -u +%T))"
