#!/usr/bin/env bash
# Session 28, call 1 (issue 16): the store-bound weight gradients (K = 256). Write bandwidth of the
# H100; chapter 08's kernel with other ring stages / staging boxes and an evict_first store policy,
# against cuBLAS, 3 processes each in rotating order.
export PATH=/usr/local/cuda/bin:$PATH
start=$(date +%s); o=$OUT/c1; mkdir -p "$o"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,power.limit --format=csv | tee "$o/gpu.txt"; date -u | tee -a "$o/gpu.txt"
source tools/tile_sweep/build.sh
w=/tmp/w; rm -rf $w; mkdir -p $w
nvcc -O3 -arch=sm_90a docs/results/session28/writebw.cu -o $w/writebw &
mk() {  # name stages buffers evict
  local d=$w/$1; mkdir -p $d; cp chapters/08_warp_specialized/gemm.cuh $d/
  sed -i -E "s/(constexpr int kStages = )[0-9]+;/\1$2;/; s/(constexpr int kStoreBuffers = )[0-9]+;/\1$3;/" $d/gemm.cuh
  [ "$4" = 1 ] && python3 docs/results/session28/evict_first.py $d/gemm.cuh
  build_gemm_timer $d 08_warp_specialized warp_specialized $d/t -Xptxas -v >$d/ptxas.txt 2>&1 || echo "build $1 failed"
}
mk s4b2 4 2 0 & mk s3b4 3 4 0 & mk s2b8 2 8 0 & mk s4b2e 4 2 1 & mk s2b8e 2 8 1 & mk s3b4e 3 4 1 &
( mkdir -p $w/cublas && build_gemm_timer bench/cublas cublas cublas $w/cublas/t -lcublas >$w/cublas/ptxas.txt 2>&1 || echo "build cublas failed" ) &
wait
echo "built ($(date -u +%T))"
$w/writebw | tee "$o/writebw.txt"
shapes="8192 8192 256 TN 4096 4096 256 TN 8192 784 256 TN"
names="cublas s4b2 s3b4 s2b8 s4b2e s3b4e s2b8e"
for r in 0 1 2; do
  for n in $names; do
    echo "== $n r$r $(nvidia-smi --query-gpu=clocks.sm --format=csv,noheader)" >>"$o/times.txt"
    $w/$n/t $shapes >>"$o/times.txt" 2>&1 || echo "$n failed" >>"$o/times.txt"
  done
  names="$(echo $names | cut -d' ' -f2-) $(echo $names | cut -d' ' -f1)"
done
$w/writebw | tee -a "$o/writebw.txt"
cat "$o/times.txt"
for n in s4b2 s3b4 s2b8 s4b2e; do grep -E "registers|spill" $w/$n/ptxas.txt | grep -i "store\|warp_spec" | head -3; done > "$o/ptxas.txt" 2>&1
echo "=== end ($(date -u +%T), $(( $(date +%s) - start )) s)"
