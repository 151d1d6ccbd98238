#!/usr/bin/env bash
# Session 17, call 6: this checkout (sgd_pair shared by the on-chip kernel's two SGD finishes; the
# partial-batch test without its alias): suites 10 and gpu, then five mutants of the code changed
# this session.
export PATH=/usr/local/cuda/bin:$PATH
mkdir -p "$OUT/m"
MUTATE_JOBS=5 timeout 580 tools/device_run.sh "$OUT/m" tests 10_persistent_step gpu -- mutate \
  10_on_chip_columns_of_block_0_sent 10_on_chip_first_layer_odd_rows_fp16_stale \
  10_on_chip_first_layer_masters_of_the_next_pixel 10_on_chip_sgd_odd_columns_at_half_rate \
  10_on_chip_next_batch_from_this_step 2>&1 | grep -E "^===|^ *[0-9]+/[0-9]+ |^Ok|^Fail|caught|missed|error|mutate:" | tail -24
echo "=== end ($(date -u +%T))"
