#!/usr/bin/env bash
# Session 24, call 1: the SGD weight-gradient prototype (TMA-staged masters) against chapter 09's path.
export PATH=/usr/local/cuda/bin:$PATH
o=$OUT/c1; mkdir -p "$o"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,power.limit --format=csv | tee "$o/gpu.txt"
date -u | tee -a "$o/gpu.txt"
nvcc -O3 -std=c++17 --expt-relaxed-constexpr -gencode=arch=compute_90a,code=sm_90a -Ichapters/09_swap_ab_split_k -Ichapters -Icommon \
  -DCHAPTER_NAME='"09_swap_ab_split_k"' -DCHAPTER_NAMESPACE=swap_ab_split_k common/chapter.cu common/epilogue.cu exp/s24/sgd_proto.cu \
  -o /tmp/sgd_proto >"$o/build.txt" 2>&1; echo "build exit $?"
/tmp/sgd_proto 8192 8192 32  8192 784 32  4096 4096 32  1024 1024 32  8192 8192 64  1000 784 17  136 1000 32  8192 8192 32 2>&1 | tee "$o/proto.txt"
nvidia-smi --query-gpu=clocks.sm --format=csv,noheader
cd $OUT && tar czf c1.tgz c1
