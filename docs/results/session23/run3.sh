#!/usr/bin/env bash
# Session 23, call 3: chapter 06's SGD epilogue with every input loaded before the main loop
# (exp/s23/p1/06_gemm.cuh, 218-233 registers: one block per SM) against main's (122-126: two),
# on chapter 06's dispatch, weight gradients K = 32 ... 256.
export PATH=/usr/local/cuda/bin:$PATH
o=$OUT/c3
mkdir -p "$o" p1tree
cp -r chapters common p1tree/
cp exp/s23/p1/06_gemm.cuh p1tree/chapters/06_fused_step/gemm.cuh
date -u
b() { nvcc -O3 -std=c++17 --expt-relaxed-constexpr -gencode=arch=compute_90a,code=sm_90a -I$1/chapters/06_fused_step -I$1/chapters -I$1/common \
    -DCHAPTER_NAME='"06_fused_step"' -DCHAPTER_NAMESPACE=fused_step $1/common/chapter.cu $1/common/epilogue.cu exp/s23/time_sgd.cu -o "$2" >"$2.txt" 2>&1; echo "$2 build exit $?"; }
b . "$o/t_main" & b p1tree "$o/t_p1" & wait
S="8192 8192 32  8192 784 32  4096 4096 32  1024 1024 32  128 784 32  8192 8192 64  8192 8192 128  8192 8192 256  4096 4096 256  1024 1024 256  256 784 256"
for pass in 1 2; do
  for v in main p1; do
    [ $pass = 2 ] && v=$([ $v = main ] && echo p1 || echo main)
    echo "--- pass $pass $v $(nvidia-smi --query-gpu=clocks.sm --format=csv,noheader)"
    "$o/t_$v" $S 2>&1 | tee -a "$o/sgd_$v.txt"
  done
done
rm -f "$o"/t_main "$o"/t_p1
echo "=== end ($(date -u +%T))"
