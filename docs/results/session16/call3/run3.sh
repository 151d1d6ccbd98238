#!/usr/bin/env bash
# Session 16, call 3: the two consumer warpgroups out of phase (stagger.py): consumer 1 starts after
# consumer 0 has issued LAG K tiles, so that one multiplies alone while the other stores. HEAD (old)
# against LAG 2 (lag2) and LAG 4 (lag4), 8 rounds of both orders, trees rotating; before that, the
# GEMM test of chapter 08 on both staggered trees.
export PATH=/usr/local/cuda/bin:$PATH
D=docs/results/session16/call3
T=$PWD/build-s16
mkdir -p "$OUT/r/old" "$OUT/r/lag2" "$OUT/r/lag4" $T
for v in old lag2 lag4; do
  rm -rf $T/$v && mkdir -p $T/$v
  tar -cf - --exclude=./.device --exclude=./data/mnist --exclude='./build*' . | tar -xf - -C $T/$v
done
python3 $D/stagger.py $T/lag2/chapters/08_warp_specialized/gemm.cuh 2
python3 $D/stagger.py $T/lag4/chapters/08_warp_specialized/gemm.cuh 4
for v in old lag2 lag4; do
  (meson setup $T/$v/b $T/$v >/dev/null 2>&1; ninja -C $T/$v/b bench/bench_gemm_08_warp_specialized tests/test_gemm_08_warp_specialized >"$OUT/r/build_$v.txt" 2>&1 || { echo "build $v failed"; tail "$OUT/r/build_$v.txt"; }) &
done
wait
for v in lag2 lag4; do
  timeout 120 $T/$v/b/tests/test_gemm_08_warp_specialized >"$OUT/r/test_$v.txt" 2>&1
  echo "$v: test_gemm_08 exit $? : $(tail -1 "$OUT/r/test_$v.txt")"
done
order=(old lag2 lag4)
for round in $(seq 1 8); do
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
for v in old lag2 lag4; do echo "== $v"; python3 tools/squares_summary.py "$OUT"/r/$v/*.csv | grep -E "^\| square"; done
tar -czf "$OUT/r3.tar.gz" -C "$OUT" r && rm -rf "$OUT/r"
echo "=== end ($(date -u +%T))"
