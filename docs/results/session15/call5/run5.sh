#!/usr/bin/env bash
# Session 15, call 5: chapter 08 with the stored result (kStore) leaving through shared memory and
# TMA stores (epi, the working tree): the tests of 08, the square products against HEAD (old), 6
# rounds of both orders, trees alternating; then the tests of 09, 10 and gpu.
export PATH=/usr/local/cuda/bin:$PATH
T=$PWD/build-s15
mkdir -p "$OUT/a" "$OUT/b" "$OUT/r/old" "$OUT/r/epi"
mkdir -p $T
[ -d $T/old ] || cp -r ab_base $T/old
([ -d $T/old/b ] || meson setup $T/old/b $T/old >/dev/null; ninja -C $T/old/b bench/bench_gemm_08_warp_specialized >/dev/null 2>&1 || echo "build old failed") &
mkdir -p data/mnist
for f in .device/mnist-gz/*.gz; do gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
([ -f build-device/build.ninja ] || meson setup build-device >/dev/null; ninja -C build-device >"$OUT/a/build.txt" 2>&1 || { echo "main build failed"; tail -30 "$OUT/a/build.txt"; }) &
wait
echo "=== tests 08 ($(date -u +%T))"
timeout 200 tools/device_run.sh "$OUT/a" tests 08_warp_specialized 2>&1 | grep -E "^ *[0-9]+/[0-9]+ |^Ok|^Fail|FAIL|Timeout" | head
grep -E "FAIL|differ|error" build-device/meson-logs/testlog.txt | head -10
echo "=== squares ($(date -u +%T))"
order=(old epi)
for round in $(seq 1 6); do
  for first in chapter cublas; do
    flag=()
    [ $first = cublas ] && flag=(--cublas-first)
    for v in "${order[@]}"; do
      bin=$T/old/b/bench/bench_gemm_08_warp_specialized
      [ $v = epi ] && bin=build-device/bench/bench_gemm_08_warp_specialized
      timeout 60 $bin --only square "${flag[@]}" \
        --csv "$OUT/r/$v/squares_${round}_$first.csv" >>"$OUT/r/bench_$v.txt" 2>&1 || { echo "bench $v round $round failed"; tail -3 "$OUT/r/bench_$v.txt"; }
    done
    order=("${order[@]:1}" "${order[0]}")
  done
done
for v in old epi; do echo "== $v"; python3 tools/squares_summary.py "$OUT"/r/$v/*.csv | grep -E "^\| square"; done
echo "=== tests 09 10 gpu ($(date -u +%T))"
timeout 240 tools/device_run.sh "$OUT/b" tests 09_swap_ab_split_k 10_persistent_step gpu 2>&1 | grep -E "^ *[0-9]+/[0-9]+ |^Ok|^Fail|FAIL|Timeout" | head -20
cp build-device/meson-logs/testlog.txt "$OUT/b/" 2>/dev/null
tar -czf "$OUT/r5.tar.gz" -C "$OUT" a b r && rm -rf "$OUT/a" "$OUT/b" "$OUT/r"
echo "=== end ($(date -u +%T))"
