#!/usr/bin/env bash
# Session 15, call 4: what chapter 08's epilogue costs on the squares. HEAD (old) against HEAD with
# the epilogue removed (noepi: the consumers store nothing; the benchmark's check against cuBLAS
# switched off in that tree only, since C stays unwritten), 6 rounds of both orders; an upper bound
# on what overlapping the epilogue with the next tile's main loop could give.
export PATH=/usr/local/cuda/bin:$PATH
T=$PWD/build-s15
mkdir -p "$OUT/r/old" "$OUT/r/noepi"
if [ ! -x $T/noepi/b/bench/bench_gemm_08_warp_specialized ]; then
  mkdir -p $T && rm -rf $T/noepi && cp -r ab_base $T/noepi
  [ -d $T/old ] || cp -r ab_base $T/old
  sed -i '/finish_accumulators<kKind>(p, acc, row0 + consumer \* kWgmmaM, col0, paired);/d' $T/noepi/chapters/08_warp_specialized/gemm.cuh
  sed -i 's/if (!(relative < 1e-4)) {/if (false) {/' $T/noepi/bench/gemm_bench.cu
  echo "noepi patched: $(grep -c finish_accumulators $T/noepi/chapters/08_warp_specialized/gemm.cuh) finish_accumulators left, $(grep -c 'if (false)' $T/noepi/bench/gemm_bench.cu) check off"
  for v in old noepi; do
    ([ -d $T/$v/b ] || meson setup $T/$v/b $T/$v >/dev/null; ninja -C $T/$v/b bench/bench_gemm_08_warp_specialized >/dev/null 2>&1 || echo "build $v failed") &
  done
  wait
fi
order=(old noepi)
for round in $(seq 1 6); do
  for first in chapter cublas; do
    flag=()
    [ $first = cublas ] && flag=(--cublas-first)
    for v in "${order[@]}"; do
      timeout 60 $T/$v/b/bench/bench_gemm_08_warp_specialized --only square "${flag[@]}" \
        --csv "$OUT/r/$v/squares_${round}_$first.csv" >>"$OUT/r/bench_$v.txt" 2>&1 || echo "bench $v round $round failed"
    done
    order=("${order[@]:1}" "${order[0]}")
  done
done
for v in old noepi; do echo "== $v"; python3 tools/squares_summary.py "$OUT"/r/$v/*.csv | grep -E "^\| square"; done
tar -czf "$OUT/r4.tar.gz" -C "$OUT" r && rm -rf "$OUT/r"
echo "=== end ($(date -u +%T))"
