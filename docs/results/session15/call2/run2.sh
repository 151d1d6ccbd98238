#!/usr/bin/env bash
# Session 15, call 2: why call 1's cluster kernel ran at half speed. The SASS of its consumer loop
# (fences?), the grid ncu sees, and a variant whose cross-block arrivals and waits use the
# mbarrier's default CTA-scope semantics (cta), timed against HEAD (old) as in call 1.
export PATH=/usr/local/cuda/bin:$PATH
T=$PWD/build-s15  # ignored by git: kept between calls on one machine
mkdir -p "$OUT/r/old" "$OUT/r/cta" "$OUT/r/new"
rm -rf $T/cta $T/new && mkdir -p $T/cta $T/new
tar -cf - --exclude=./ab_base --exclude=./.device --exclude=./data/mnist --exclude='./build*' . | tar -xf - -C $T/new
cp -r $T/new/. $T/cta/
[ -d $T/old ] || cp -r ab_base $T/old
sed -i 's/mbarrier.arrive.release.cluster.shared::cluster.b64/mbarrier.arrive.shared::cluster.b64/; s/mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64/mbarrier.try_wait.parity.shared::cta.b64/' $T/cta/chapters/08_warp_specialized/cluster.cuh
grep -n "mbarrier.arrive\|try_wait" $T/cta/chapters/08_warp_specialized/cluster.cuh
for v in old new cta; do
  ([ -d $T/$v/b ] || meson setup $T/$v/b $T/$v >/dev/null; ninja -C $T/$v/b bench/bench_gemm_08_warp_specialized >"$OUT/r/build_$v.txt" 2>&1 || echo "build $v failed") &
done
wait
cuobjdump -sass $T/new/b/bench/bench_gemm_08_warp_specialized > "$OUT/r/sass_new.txt"
awk '/Function :/{f=$3} /MEMBAR|CCTL|FENCE|SYNCS/{split($0,w,/ +/); for(i in w) if (w[i] ~ /^(MEMBAR|CCTL|FENCE|SYNCS)/) c[f" "w[i]]++} END{for(k in c) print c[k], k}' "$OUT/r/sass_new.txt" | grep warp_specialized_gemm | sort -k2 | head -40
awk '/Function :.*warp_specialized_gemm/{n++} n==1' "$OUT/r/sass_new.txt" | grep -n -B4 -A2 "MEMBAR\|CCTL\|FENCE" | head -60
ncu --clock-control none -k regex:warp_specialized_gemm --launch-count 1 --metrics launch__grid_size,launch__cluster_dim_x,launch__block_size,gpu__time_duration.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active \
  $T/new/b/bench/bench_gemm_08_warp_specialized --only "square 4096" 2>&1 | grep -E "launch__|gpu__time|tensor|==PROF==|error" | head -20
wait
order=(old cta new)
for round in 1 2 3; do
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
for v in old cta new; do echo "== $v"; python3 tools/squares_summary.py "$OUT"/r/$v/*.csv | grep -E "^\| square"; done
tar -czf "$OUT/r2.tar.gz" -C "$OUT" r && rm -rf "$OUT/r"
echo "=== end ($(date -u +%T))"
