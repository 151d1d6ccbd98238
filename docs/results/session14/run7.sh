#!/usr/bin/env bash
# Session 14, call 7: the working tree's tests of gpu, 01, 09 and 10 (test_training.cu changed for
# every chapter), then the on-chip kernel's mutants and two of the grid kernel's.
export MUTATE_JOBS=8 PATH=/usr/local/cuda/bin:$PATH
tools/device_run.sh "$OUT/t" tests gpu 01_naive 09_swap_ab_split_k 10_persistent_step 2>&1 |
  grep -E "^ *[0-9]+/[0-9]+ |^Ok|^Fail|rror|FAIL" | head -40
tools/device_run.sh "$OUT/m" mutate 10_on_chip_one_partial_left_out 10_on_chip_output_bias_frozen \
  10_on_chip_masters_not_stored 10_on_chip_relu_mask_of_block_0 10_on_chip_next_batch_from_this_step \
  10_on_chip_layer_1_in_one_buffer 10_first_steps_batch_for_every_step 10_no_barrier_after_the_tile 2>&1 |
  grep -E "caught|missed|mutate:|rror|===" | head -40
echo "=== end ($(date -u +%T))"
