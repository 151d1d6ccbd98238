#!/usr/bin/env bash
# Session 27, call 2: the trainer A/B (tools/ab_train.sh: 8f6bbc6's chapter 09, call 1's /tmp/base,
# against this tree, at batch 256, hidden 4096 where the rule changed and 8192 where it did not);
# then the new mutants (tools/mutate.sh) and compute-sanitizer on chapter 09 (tools/sanitize.sh).
export PATH=/usr/local/cuda/bin:$PATH
start=$(date +%s); o=$OUT/c2; mkdir -p "$o"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,power.limit --format=csv | tee "$o/gpu.txt"; date -u | tee -a "$o/gpu.txt"
echo "=== ab_train ($(date -u +%T))"
REPS=3 EPOCHS=3 tools/ab_train.sh /tmp/ab 09_swap_ab_split_k /tmp/base . 256x4096 256x8192 >"$o/ab_train.txt" 2>&1
echo "ab_train exit $?"; tail -8 "$o/ab_train.txt"; cp /tmp/ab/ab.csv /tmp/ab/ab_summary.csv "$o/" 2>/dev/null
echo "=== mutants ($(date -u +%T))"
timeout 300 tools/mutate.sh 02_mn_major_second_run_reads_the_first 09_batch_tile_ignores_the_fit \
  09_batch_tile_only_below_one_wave 09_columns_split_never_taken 09_columns_split_ignores_the_fit \
  09_columns_split_for_the_weight_gradients 09_columns_split_second_consumer_reads_the_first_columns \
  09_columns_split_second_consumer_stores_at_the_first_columns 09_batch_tile_stored_at_the_first \
  09_weight_gradients_on_the_batch_tile_of_256 >"$o/mutants.txt" 2>&1
echo "mutate exit $?"; tail -14 "$o/mutants.txt"
echo "=== sanitizer ($(date -u +%T))"
left=$((590 - $(date +%s) + start))
SANITIZE_ONLY='09_swap_ab' timeout $left tools/sanitize.sh build "$o/sanitizer" >"$o/sanitize.txt" 2>&1
echo "sanitize exit $?"; tail -10 "$o/sanitize.txt"
echo "=== end ($(date -u +%T), $(( $(date +%s) - start )) s)"
cd $OUT && tar czf c2.tgz c2 && rm -rf c2
