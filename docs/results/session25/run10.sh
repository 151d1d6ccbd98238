#!/usr/bin/env bash
# Session 25, call 10 (025b504): chapter 10's GEMM test with the shape 65 x 8449 x 8, and
# compute-sanitizer's four tools on chapter 09's GEMM test (its small shapes, now with that shape's
# two-consumer tile of 128) and trainer.
export PATH=/usr/local/cuda/bin:$PATH
o=$OUT/c10; mkdir -p "$o"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,power.limit --format=csv | tee "$o/gpu.txt"; date -u | tee -a "$o/gpu.txt"
mkdir -p data/mnist; for f in .device/mnist-gz/*.gz; do gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
meson setup build >/dev/null 2>&1
ninja -C build tests/test_gemm_09_swap_ab_split_k tests/test_gemm_10_persistent_step chapters/train_09_swap_ab_split_k >"$o/build.txt" 2>&1; echo "ninja exit $? ($(date -u +%T))"
build/tests/test_gemm_10_persistent_step 7 >"$o/test_gemm_10.txt" 2>&1; echo "GEMM test 10 exit $? ($(date -u +%T)): $(tail -1 "$o/test_gemm_10.txt")"
SANITIZE_ONLY='_09_swap_ab_split_k' SANITIZE_JOBS=12 timeout 300 tools/sanitize.sh build "$o/sanitizer" 2>&1 | tail -n 3
rm -rf "$o"/sanitizer/*/
for f in "$o"/sanitizer/*.status; do echo "$(cat $f) $(basename ${f%.status}): $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' ${f%.status}.txt | tail -1)"; done > "$o/sanitizer_summary.txt"; cat "$o/sanitizer_summary.txt"
echo "=== end ($(date -u +%T))"
cd $OUT && tar czf c10.tgz c10
