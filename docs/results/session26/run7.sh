#!/usr/bin/env bash
# Session 26, call 7: Nsight Compute (--set full) on chapter 09 and cuBLAS for two products chapter 09
# leaves below cuBLAS (256 x 4096 x 4096 NT, 8192 x 8192 x 256 TN) through tools/tile_sweep's timer,
# which also times both; then the mutant 02_mn_major_value_wrong_stride on the new chapter 02.
export PATH=/usr/local/cuda/bin:$PATH
start=$(date +%s); o=$OUT/c7; mkdir -p "$o/ncu"; bins=/tmp/bins7; mkdir -p $bins
source tools/tile_sweep/build.sh
build_gemm_timer chapters/09_swap_ab_split_k 09_swap_ab_split_k swap_ab_split_k $bins/09 >"$o/build09.txt" 2>&1 &
build_gemm_timer bench/cublas cublas cublas $bins/cublas -lcublas >"$o/buildcb.txt" 2>&1 &
wait; ls $bins
for name in 09 cublas; do $bins/$name 256 4096 4096 NT 8192 8192 256 TN 256 4096 4096 NN >"$o/time_$name.txt" 2>&1; echo "time $name: $?"; cat "$o/time_$name.txt"; done
for shape in "256 4096 4096 NT" "8192 8192 256 TN"; do
  tag=$(echo $shape | tr ' ' _)
  for name in 09 cublas; do
    regex=gemm_kernel; [ $name = cublas ] && regex='nvjet|sm90|xmma|cutlass|gemm'
    timeout 90 ncu --clock-control none --kernel-name regex:"$regex" --launch-count 1 --set full -o "$o/ncu/${name}_$tag" $bins/$name $shape >"$o/ncu/${name}_$tag.stdout" 2>&1; echo "ncu $name $tag: $?"
    ncu --import "$o/ncu/${name}_$tag.ncu-rep" --page raw --csv >"$o/ncu/${name}_$tag.raw.csv" 2>&1
    ncu --import "$o/ncu/${name}_$tag.ncu-rep" --print-summary none >"$o/ncu/${name}_$tag.txt" 2>&1
    grep -E "^  [a-z_]+.*gemm|Duration|DRAM Throughput|Memory Throughput|Compute \(SM\) Throughput|L2 Cache Throughput" "$o/ncu/${name}_$tag.txt" | head -8
    rm -f "$o/ncu/${name}_$tag.ncu-rep"
  done
done
echo "=== mutant ($(date -u +%T))"
left=$((590 - $(date +%s) + start))
MUTATE_DIR=/tmp/mut7 MUTATE_JOBS=1 timeout $left tools/mutate.sh 02_mn_major_value_wrong_stride >"$o/mutate.txt" 2>&1; echo "mutate exit $?"; tail -4 "$o/mutate.txt"
echo "=== end ($(date -u +%T))"
cd $OUT && tar czf c7.tgz c7 && rm -rf c7
