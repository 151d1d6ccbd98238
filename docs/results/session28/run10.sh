#!/usr/bin/env bash
# Session 28, call 10 (issue 16), on call 9's machine and build: the suites of chapters 09 and 10,
# and the weight update's mutants (the three whose text changed, the three new ones, and the
# trainer's), each of which a test must catch.
export PATH=/usr/local/cuda/bin:$PATH
start=$(date +%s); o=$OUT/c10; mkdir -p "$o"
date -u | tee "$o/gpu.txt"
meson test -C build --no-rebuild --suite 09_swap_ab_split_k --suite 10_persistent_step --print-errorlogs >"$o/suites.txt" 2>&1
echo "suites exit $? ($(date -u +%T))"; grep -E "^ *[0-9]+/[0-9]+ " "$o/suites.txt"; cp build/meson-logs/testlog.txt "$o/testlog.txt"
MUTATE_JOBS=4 timeout 400 tools/mutate.sh 09_weight_update_never_taken 09_weight_update_past_one_k_tile \
  09_weight_update_only_the_first_k_tile_multiplied 09_weight_update_every_k_tile_read_from_the_first \
  09_weight_update_two_k_tiles_launched_as_one 09_weight_update_never_taken_in_training >"$o/mutate.txt" 2>&1
echo "mutate exit $? ($(date -u +%T))"; tail -10 "$o/mutate.txt"
echo "=== end ($(date -u +%T), $(( $(date +%s) - start )) s)"
cd $OUT && tar czf c10.tgz c10 && rm -rf c10
