#!/usr/bin/env bash
# Session 16, call 8: the on-chip kernel's softmax by one warp (softmax_cross_entropy_warp, common/
# mlp_device.cuh; the per-row code shared with the block version): the tests of gpu (the kernels of
# mlp_kernels.cu on the shared row), 06 and 10; the two new mutants and one older softmax mutant.
export PATH=/usr/local/cuda/bin:$PATH
mkdir -p "$OUT/t" "$OUT/m"
timeout 330 tools/device_run.sh "$OUT/t" tests gpu 06_fused_step 10_persistent_step 2>&1 | grep -E "^===|^ *[0-9]+/[0-9]+ |^Ok|^Fail|FAIL|Timeout" | head -30
cp build-device/meson-logs/testlog.txt "$OUT/t/" 2>/dev/null
MUTATE_JOBS=3 timeout 240 tools/device_run.sh "$OUT/m" mutate 10_on_chip_softmax_rows_past_the_batch_left_stale 10_on_chip_softmax_loss_of_half_the_lanes softmax_gradient_without_1_over_rows 2>&1 | grep -E "^===|caught|missed|error" | head -12
echo "=== end ($(date -u +%T))"
