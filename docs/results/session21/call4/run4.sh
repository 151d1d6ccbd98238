#!/usr/bin/env bash
# Session 21, call 4: chapter 09's batch tile per product (working tree, with the shape 225 x 2056
# x 8 and the mutants reworked after call 3): the two mutants of the fit, suites 09 and 10 (GEMM
# and training tests), compute-sanitizer on chapters 09 and 10 (GEMM tests and trainers), and
# chapter 09's GEMM benchmark. Everything in $OUT/s4.tar.gz.
export PATH=/usr/local/cuda/bin:$PATH
start=$(date +%s)
o=$OUT/s4
mkdir -p "$o" data/mnist
for f in .device/mnist-gz/*.gz; do gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,power.limit --format=csv | tee "$o/gpu.txt"
date -u
(MUTATE_JOBS=2 timeout 400 tools/device_run.sh "$o/mut" mutate 09_batch_tile_ignores_the_fit \
  09_batch_tile_only_below_one_wave >/dev/null 2>&1) &
[ -f build-device/build.ninja ] || meson setup build-device >/dev/null
ninja -C build-device >"$o/build.txt" 2>&1 | tail -1
echo "=== tests ($(date -u +%T))"
timeout 300 meson test -C build-device --print-errorlogs --suite 09_swap_ab_split_k --suite 10_persistent_step >"$o/tests.txt" 2>&1
grep -E "^ *[0-9]+/[0-9]+ |^Ok|^Fail|Timeout" "$o/tests.txt" | tail -12
cp build-device/meson-logs/testlog.txt "$o/testlog.txt"
echo "=== sanitize ($(date -u +%T))"
SANITIZE_ONLY='_09_swap|_10_persistent' SANITIZE_JOBS=6 timeout 300 tools/sanitize.sh build-device "$o/san" 2>&1 | tail -n 20
wait
echo "=== mutants ($(date -u +%T))"
grep -E "caught|MISSED|survived|mutate:" "$o/mut/log.txt" | cut -c1-250
left=$((590 - $(date +%s) + start))
echo "=== bench, $left s left ($(date -u +%T))"
timeout $((left - 10)) tools/device_run.sh "$o/bench" bench 09_swap_ab_split_k 2>&1 | tail -n 4
tar -czf "$OUT/s4.tar.gz" -C "$OUT" s4
echo "=== end ($(date -u +%T))"
