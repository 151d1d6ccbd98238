#!/usr/bin/env bash
# Session 29, call 4 (issue 16), on call 3's machine and build: the new mutant (three K tiles
# launched as two, which only the new shape 72 x 120 x 136 reaches among the small ones) and the
# one beside it; compute-sanitizer's four tools on chapter 09's GEMM test, whose small shapes now
# reach the weight update with two, three and four K tiles.
export PATH=/usr/local/cuda/bin:$PATH
start=$(date +%s); o=$OUT/c4; mkdir -p "$o"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,power.limit --format=csv | tee "$o/gpu.txt"; date -u | tee -a "$o/gpu.txt"
SANITIZE_ONLY='^[a-z]+_09_swap_ab_split_k$' SANITIZE_TIMEOUT=240 \
  timeout 300 tools/sanitize.sh build "$o/sanitizer" >"$o/sanitizer.txt" 2>&1; echo "sanitize exit $?"; tail -6 "$o/sanitizer.txt"
echo "sanitized ($(date -u +%T))"
left=$((585 - $(date +%s) + start))
MUTATE_JOBS=2 timeout $left tools/mutate.sh 09_weight_update_three_k_tiles_launched_as_two 09_weight_update_two_k_tiles_launched_as_one >"$o/mutate.txt" 2>&1; echo "mutate exit $?"; tail -6 "$o/mutate.txt"
echo "=== end ($(date -u +%T), $(( $(date +%s) - start )) s)"
cd $OUT && tar czf c4.tgz c4 && rm -rf c4
