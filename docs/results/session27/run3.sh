#!/usr/bin/env bash
# Session 27, call 3: what call 1 missed (its meson test stopped at an unbuilt target): the suites of
# chapters 09 and 10, and the one mutant call 2's time limit cut off.
export PATH=/usr/local/cuda/bin:$PATH
start=$(date +%s); o=$OUT/c3; mkdir -p "$o"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,power.limit --format=csv | tee "$o/gpu.txt"; date -u | tee -a "$o/gpu.txt"
ninja -C build tests/test_persistent_schedule >"$o/build.txt" 2>&1; echo "ninja exit $?"
echo "=== suites 09 and 10 ($(date -u +%T))"
meson test -C build --no-rebuild --suite 09_swap_ab_split_k --suite 10_persistent_step --print-errorlogs >"$o/suites.txt" 2>&1
echo "suites exit $?"; grep -E "^ *[0-9]+/[0-9]+ |^Ok|^Fail|^Skip" "$o/suites.txt"; cp build/meson-logs/testlog.txt "$o/testlog_suites.txt"
echo "=== mutant ($(date -u +%T))"
left=$((590 - $(date +%s) + start))
timeout $left tools/mutate.sh 09_weight_gradients_on_the_batch_tile_of_256 >"$o/mutants.txt" 2>&1
echo "mutate exit $?"; tail -3 "$o/mutants.txt"
echo "=== end ($(date -u +%T), $(( $(date +%s) - start )) s)"
cd $OUT && tar czf c3.tgz c3 && rm -rf c3
