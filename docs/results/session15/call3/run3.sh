#!/usr/bin/env bash
# Session 15, call 3: HEAD (old) against the cluster kernel with CTA-scope cross-block arrivals (cta,
# call 2's variant) on the square products, 10 rounds of both orders, trees alternating; then one
# ncu pass of each on the 4096^3 forward product: time, tensor pipe, L2 and the SM clock.
export PATH=/usr/local/cuda/bin:$PATH
T=$PWD/build-s15
mkdir -p "$OUT/r/old" "$OUT/r/cta"
if [ ! -x $T/cta/b/bench/bench_gemm_08_warp_specialized ]; then  # call 2's trees, rebuilt
  rm -rf $T && mkdir -p $T/cta
  tar -cf - --exclude=./ab_base --exclude=./.device --exclude=./data/mnist --exclude='./build*' . | tar -xf - -C $T/cta
  cp -r ab_base $T/old
  sed -i 's/mbarrier.arrive.release.cluster.shared::cluster.b64/mbarrier.arrive.shared::cluster.b64/; s/mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64/mbarrier.try_wait.parity.shared::cta.b64/' $T/cta/chapters/08_warp_specialized/cluster.cuh
  for v in old cta; do
    (meson setup $T/$v/b $T/$v >/dev/null && ninja -C $T/$v/b bench/bench_gemm_08_warp_specialized >/dev/null 2>&1 || echo "build $v failed") &
  done
  wait
fi
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,power.draw --format=csv,noheader
order=(old cta)
for round in $(seq 1 10); do
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
for v in old cta; do echo "== $v"; python3 tools/squares_summary.py "$OUT"/r/$v/*.csv | grep -E "^\| square"; done
for v in old cta; do
  echo "== ncu $v"
  ncu --clock-control none -k regex:warp_specialized_gemm --launch-count 1 --metrics gpu__time_duration.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,lts__t_throughput.avg.pct_of_peak_sustained_elapsed,lts__t_bytes.sum,sm__cycles_elapsed.avg.per_second,launch__grid_size \
    $T/$v/b/bench/bench_gemm_08_warp_specialized --only "square 4096" 2>&1 | grep -E "^ +(gpu__|sm__|lts__|launch__)" | tee "$OUT/r/ncu_$v.txt"
done
tar -czf "$OUT/r3.tar.gz" -C "$OUT" r && rm -rf "$OUT/r"
echo "=== end ($(date -u +%T))"
