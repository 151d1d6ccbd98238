#!/usr/bin/env bash
# Session 28, call 7 (issue 16): the first layer's weight gradient at batch 256 (8192 x 784 x 256
# TN, 94% of cuBLAS on chapter 08's kernel) on chapter 09's own kernel, which the rule gives weight
# gradients only where their tiles run in one wave: the rule's last line returning the tile of 64
# x 64 (V64) or of 128 x 128 (V128) where it now returns none, against the committed tree and
# cuBLAS, 3 processes each in rotating order (tools/tile_sweep/time_gemm.cu).
export PATH=/usr/local/cuda/bin:$PATH
start=$(date +%s); o=$OUT/c7; mkdir -p "$o"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,power.limit --format=csv | tee "$o/gpu.txt"; date -u | tee -a "$o/gpu.txt"
source tools/tile_sweep/build.sh
w=/tmp/w7; rm -rf $w; mkdir -p $w
variant() {  # name tile
  local d=$w/$1; mkdir -p $d/09_swap_ab_split_k
  cp chapters/09_swap_ab_split_k/gemm.cuh $d/; cp chapters/09_swap_ab_split_k/*.cuh $d/09_swap_ab_split_k/
  sed -i "s/return kOpA == Op::N ? rows_split_tile(kMaxBatch) : kNoBlockTile;/return kOpA == Op::N ? rows_split_tile(kMaxBatch) : rows_split_tile($2);/" $d/09_swap_ab_split_k/dispatch.cuh
  grep -c "rows_split_tile($2);" $d/09_swap_ab_split_k/dispatch.cuh >$d/sed_count.txt
  build_gemm_timer $d 09_swap_ab_split_k swap_ab_split_k $d/t >$d/build.txt 2>&1 || echo "build $1 failed"
}
( mkdir -p $w/main && build_gemm_timer chapters/09_swap_ab_split_k 09_swap_ab_split_k swap_ab_split_k $w/main/t >$w/main/build.txt 2>&1 || echo "build main failed" ) &
( mkdir -p $w/cublas && build_gemm_timer bench/cublas cublas cublas $w/cublas/t -lcublas >$w/cublas/build.txt 2>&1 || echo "build cublas failed" ) &
variant V64 64 & variant V128 128 &
wait
cat $w/V64/sed_count.txt $w/V128/sed_count.txt
echo "built ($(date -u +%T))"
shapes="8192 784 256 TN 4096 784 256 TN 8192 8192 256 TN 4096 4096 256 TN"
names="cublas main V64 V128"
for r in 0 1 2; do
  for n in $names; do
    echo "== $n r$r $(nvidia-smi --query-gpu=clocks.sm --format=csv,noheader)" >>"$o/times.txt"
    $w/$n/t $shapes >>"$o/times.txt" 2>&1 || echo "$n failed" >>"$o/times.txt"
  done
  names="$(echo $names | cut -d' ' -f2-) $(echo $names | cut -d' ' -f1)"
done
cat "$o/times.txt"
echo "=== end ($(date -u +%T), $(( $(date +%s) - start )) s)"
