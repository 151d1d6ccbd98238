#!/usr/bin/env bash
# Session 27, call 4: 09_weight_gradients_on_the_batch_tile_of_256 again, now on every shape of the
# GEMM test (whole:, new in tools/mutate.sh; call 3 missed it on the small shapes), and two older
# mutants of the block that the column split touches.
export PATH=/usr/local/cuda/bin:$PATH
start=$(date +%s); o=$OUT/c4; mkdir -p "$o"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,power.limit --format=csv | tee "$o/gpu.txt"; date -u | tee -a "$o/gpu.txt"
timeout 580 tools/mutate.sh 09_weight_gradients_on_the_batch_tile_of_256 09_one_consumer_at_the_batch_tile_of_128 \
  09_units_of_one_batch_tile >"$o/mutants.txt" 2>&1
echo "mutate exit $?"; tail -5 "$o/mutants.txt"
echo "=== end ($(date -u +%T), $(( $(date +%s) - start )) s)"
cd $OUT && tar czf c4.tgz c4 && rm -rf c4
