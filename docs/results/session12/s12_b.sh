#!/usr/bin/env bash
# Session 12, call B: the loss and bias mutants, compute-sanitizer on chapter 10's trainer.
export MUTATE_JOBS=5 PATH=/usr/local/cuda/bin:$PATH
mkdir -p "$OUT/a" "$OUT/b"
tools/device_run.sh "$OUT/a" mutate 10_loss_in_the_launch_slot 10_loss_of_the_first_tile_only \
  10_loss_gradient_over_the_tile_rows 10_first_bias_column_never_updated softmax_gradient_without_1_over_rows
SANITIZE_JOBS=8 SANITIZE_TIMEOUT=300 SANITIZE_ONLY='_train_10_' tools/device_run.sh "$OUT/b" sanitize
