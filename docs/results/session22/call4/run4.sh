#!/usr/bin/env bash
# Session 22, call 4 (working tree: the weight gradients on chapter 09's kernel where their tiles of
# 64 or 128 all run at once; K split only from 32 K tiles, into no more blocks than SMs): the
# split mutants (in the background while Meson builds), suites 09, 10 and gpu, chapter 09's GEMM
# benchmark, then tools/ab_train.sh against eca01a2 (ab_base/). Everything in $OUT/s4.tar.gz.
export PATH=/usr/local/cuda/bin:$PATH
start=$(date +%s)
o=$OUT/s4
mkdir -p "$o/mut" "$o/bench" data/mnist
for f in .device/mnist-gz/*.gz; do gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,power.limit --format=csv | tee "$o/gpu.txt"
date -u
(MUTATE_JOBS=5 timeout 330 tools/device_run.sh "$o/mut" mutate 09_arrival_counter_not_reset \
  09_splits_summed_from_the_last_arrival 09_no_fence_before_arrival 09_never_splits \
  09_splits_below_32_k_tiles >/dev/null 2>&1) &
mutants=$!
meson setup build-device >/dev/null 2>&1; ninja -C build-device >"$o/build.txt" 2>&1 || echo "meson build failed"
echo "=== tests ($(date -u +%T))"
timeout 200 meson test -C build-device --print-errorlogs --suite 09_swap_ab_split_k --suite 10_persistent_step --suite gpu >"$o/tests.txt" 2>&1
grep -E "^ *[0-9]+/[0-9]+ |^Ok|^Fail|Timeout" "$o/tests.txt" | tail -20
cp build-device/meson-logs/testlog.txt "$o/testlog.txt"
grep -E "FAIL" "$o/testlog.txt" | head -10
wait $mutants
echo "=== mutants ($(date -u +%T))"
grep -E "caught|MISSED|survived|mutate:|error" "$o/mut/log.txt" | cut -c1-250
echo "=== bench ($(date -u +%T))"
timeout 150 tools/device_run.sh "$o/bench" bench 09_swap_ab_split_k 2>&1 | tail -n 3
tar -czf "$OUT/s4.tar.gz" -C "$OUT" s4
left=$((590 - $(date +%s) + start))
echo "=== ab, $left s left ($(date -u +%T))"
REPS=3 timeout $left tools/ab_train.sh "$o/ab" 09_swap_ab_split_k ab_base . 256x512 256x1024 256x2048 256x4096 256x8192 32x1024 32x8192 2>&1 | tail -n 10
rm -rf "$o"/ab/build_* "$o"/ab/runs
tar -czf "$OUT/s4.tar.gz" -C "$OUT" s4
echo "=== end ($(date -u +%T))"
