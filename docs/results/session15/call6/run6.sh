#!/usr/bin/env bash
# Session 15, call 6: the TMA-store epilogue with more of the tile staged. HEAD (old), the working
# tree (epi: 4 stages, 2 staging boxes per consumer) and s3b4 (3 stages, 4 staging boxes per
# consumer: half its tile stored without waiting), 6 rounds of both orders, trees rotating.
export PATH=/usr/local/cuda/bin:$PATH
T=$PWD/build-s15
mkdir -p "$OUT/r/old" "$OUT/r/epi" "$OUT/r/s3b4" $T
[ -d $T/old ] || cp -r ab_base $T/old
for v in epi s3b4; do
  rm -rf $T/$v.src && mkdir -p $T/$v.src
  tar -cf - --exclude=./ab_base --exclude=./.device --exclude=./data/mnist --exclude='./build*' . | tar -xf - -C $T/$v.src
  [ -d $T/$v ] && cp -r $T/$v/b $T/$v.src/ 2>/dev/null
  rm -rf $T/$v && mv $T/$v.src $T/$v
done
sed -i 's/constexpr int kStages = 4; /constexpr int kStages = 3; /; s/constexpr int kStoreBuffers = 2;/constexpr int kStoreBuffers = 4;/' $T/s3b4/chapters/08_warp_specialized/gemm.cuh
echo "s3b4: $(grep -cE 'kStages = 3; |kStoreBuffers = 4;' $T/s3b4/chapters/08_warp_specialized/gemm.cuh) of 2 patched"
for v in old epi s3b4; do
  (meson setup $T/$v/b $T/$v >/dev/null 2>&1; ninja -C $T/$v/b bench/bench_gemm_08_warp_specialized >"$OUT/r/build_$v.txt" 2>&1 || { echo "build $v failed"; tail "$OUT/r/build_$v.txt"; }) &
done
wait
order=(old epi s3b4)
for round in $(seq 1 6); do
  for first in chapter cublas; do
    flag=()
    [ $first = cublas ] && flag=(--cublas-first)
    for v in "${order[@]}"; do
      timeout 60 $T/$v/b/bench/bench_gemm_08_warp_specialized --only square "${flag[@]}" \
        --csv "$OUT/r/$v/squares_${round}_$first.csv" >>"$OUT/r/bench_$v.txt" 2>&1 || { echo "bench $v round $round failed"; tail -3 "$OUT/r/bench_$v.txt"; }
    done
    order=("${order[@]:1}" "${order[0]}")
  done
done
for v in old epi s3b4; do echo "== $v"; python3 tools/squares_summary.py "$OUT"/r/$v/*.csv | grep -E "^\| square"; done
tar -czf "$OUT/r6.tar.gz" -C "$OUT" r && rm -rf "$OUT/r"
echo "=== end ($(date -u +%T))"
