#!/usr/bin/env bash
# Session 13, call 6: the mutants of chapter 10's block tile (one mma tile per warp) and the
# barrier, loss and batch mutants of chapter 10, on the working tree.
export MUTATE_JOBS=6 PATH=/usr/local/cuda/bin:$PATH
tools/device_run.sh "$OUT/m" mutate 10_first_chain_left_out_of_the_sum 10_odd_b_fragment_at_the_even_step \
  10_last_steps_of_k_skipped 10_no_barrier_after_the_tile 10_no_barrier_between_forward_layers \
  10_no_barrier_after_backward_phase 10_loss_gradient_over_the_tile_rows 10_first_steps_batch_for_every_step 2>&1 |
  grep -E "caught|missed|mutate:|rror|==="
