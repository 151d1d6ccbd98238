#!/usr/bin/env bash
# Session 15, call 1: chapter 08 in clusters of two blocks that share each B tile by TMA multicast.
# The square products in 12 processes per tree (6 with the chapter timed first, 6 with cuBLAS
# first), trees in rotating order: HEAD (old), the working tree (new) and the working tree with
# groups of 32 tile rows (g32); then the tests of 08, 09, 10 and gpu on the working tree.
export PATH=/usr/local/cuda/bin:$PATH
mkdir -p "$OUT/a" "$OUT/sq/old" "$OUT/sq/new" "$OUT/sq/g32"
T=/tmp/s15
rm -rf $T && mkdir -p $T/new $T/g32
tar -cf - --exclude=./ab_base --exclude=./.device --exclude=./data/mnist --exclude='./build*' . | tar -xf - -C $T/new
cp -r $T/new/. $T/g32/
sed -i 's/constexpr int kGroupTileRows = 16;/constexpr int kGroupTileRows = 32;/' $T/g32/chapters/08_warp_specialized/gemm.cuh
echo "g32 patched: $(grep -c 'kGroupTileRows = 32' $T/g32/chapters/08_warp_specialized/gemm.cuh)"
cp -r ab_base $T/old
echo "=== builds ($(date -u +%T))"
for v in old new g32; do
  (meson setup $T/$v/b $T/$v >/dev/null && ninja -C $T/$v/b bench/bench_gemm_08_warp_specialized >"$OUT/sq/build_$v.txt" 2>&1 || echo "build $v failed") &
done
mkdir -p data/mnist
for f in .device/mnist-gz/*.gz; do gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
(meson setup build-device >/dev/null; ninja -C build-device >"$OUT/a/build.txt" 2>&1 || echo "main build failed") &
wait
echo "=== squares ($(date -u +%T))"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,power.draw --format=csv,noheader
order=(old new g32)
for round in 1 2 3 4 5 6; do
  for first in chapter cublas; do
    flag=()
    [ $first = cublas ] && flag=(--cublas-first)
    for v in "${order[@]}"; do
      timeout 60 $T/$v/b/bench/bench_gemm_08_warp_specialized --only square "${flag[@]}" \
        --csv "$OUT/sq/$v/squares_${round}_$first.csv" >>"$OUT/sq/bench_$v.txt" 2>&1 || echo "bench $v round $round failed"
    done
    order=("${order[@]:1}" "${order[0]}")
  done
done
for v in old new g32; do echo "== $v"; python3 tools/squares_summary.py "$OUT"/sq/$v/*.csv | grep -E "^\| square"; done
echo "=== tests ($(date -u +%T))"
timeout 330 tools/device_run.sh "$OUT/a" tests 08_warp_specialized 09_swap_ab_split_k 10_persistent_step gpu 2>&1 | grep -E "^ *[0-9]+/[0-9]+ |^Ok|^Fail|rror|FAIL|Timeout" | head -40
cp build-device/meson-logs/testlog.txt "$OUT/a/" 2>/dev/null
rm -f "$OUT"/sq/build_*.txt.gz
echo "=== end ($(date -u +%T))"
