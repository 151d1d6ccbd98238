#!/usr/bin/env bash
# Session 17, call 7: the on-chip kernel's other mutants, on this session's code.
export PATH=/usr/local/cuda/bin:$PATH
mkdir -p "$OUT/m"
MUTATE_JOBS=7 timeout 580 tools/device_run.sh "$OUT/m" mutate 10_on_chip_one_partial_left_out \
  10_on_chip_output_bias_frozen 10_on_chip_masters_not_stored 10_on_chip_relu_mask_of_block_0 \
  10_on_chip_bias_reads_dz_with_its_width 10_on_chip_softmax_rows_past_the_batch_left_stale \
  10_on_chip_softmax_loss_of_half_the_lanes 2>&1 | grep -E "^===|caught|missed|error|mutate:" | tail -10
echo "=== end ($(date -u +%T))"
