#!/usr/bin/env bash
# Session 16, call 10: the mutants of the code this session changed that calls 5 and 8 did not run:
# chapter 10's other on-chip mutants (its device code now under the sm_90a guard, on chapter 07's
# wrappers) and those of common/mlp_device.cuh's softmax row and bias column (both refactored).
export PATH=/usr/local/cuda/bin:$PATH
mkdir -p "$OUT/m"
MUTATE_JOBS=8 timeout 560 tools/device_run.sh "$OUT/m" mutate 10_on_chip_one_partial_left_out \
  10_on_chip_masters_not_stored 10_on_chip_relu_mask_of_block_0 10_on_chip_next_batch_from_this_step \
  softmax_shifted_by_the_first_logit softmax_sum_one_class_short softmax_gradient_one_class_short \
  bias_sum_one_row_short bias_sgd_climbs bias_learning_rate_halved 2>&1 | grep -E "^===|caught|missed|error|mutate:" | tail -14
echo "=== end ($(date -u +%T))"
