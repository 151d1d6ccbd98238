#!/usr/bin/env bash
# Session 23, call 1: (1) chapter 10's crossover by batch: a tree whose persistent step takes every
# width (wide/) against one that never takes it (ch09/: chapter 09's graph), at batches 32-256 and
# hidden 512-1536; (2) the weight gradients' SGD epilogue against a streaming kernel moving the same
# bytes and a D2D copy (exp/s23/time_sgd.cu, chapter 09's dispatch).
export PATH=/usr/local/cuda/bin:$PATH
o=$OUT/c1
mkdir -p "$o" data/mnist
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,power.limit --format=csv | tee "$o/gpu.txt"
date -u
for f in .device/mnist-gz/*.gz; do gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
for t in wide ch09; do
  mkdir -p "trees/$t/data"
  cp -r meson.build meson_options.txt chapters common tests bench tools "trees/$t/"
  cp data/*.sh "trees/$t/data/" 2>/dev/null
done
sed -i 's/^constexpr int kMaxWidth = 1024;/constexpr int kMaxWidth = 1 << 14;/' trees/wide/chapters/10_persistent_step/schedule.cuh
sed -i 's/^constexpr int kMaxWidth = 1024;/constexpr int kMaxWidth = 0;/' trees/ch09/chapters/10_persistent_step/schedule.cuh
grep -n "^constexpr int kMaxWidth" trees/*/chapters/10_persistent_step/schedule.cuh
( nvcc -O3 -std=c++17 --expt-relaxed-constexpr -gencode=arch=compute_90a,code=sm_90a -Ichapters/09_swap_ab_split_k -Ichapters -Icommon \
    -DCHAPTER_NAME='"09_swap_ab_split_k"' -DCHAPTER_NAMESPACE=swap_ab_split_k common/chapter.cu common/epilogue.cu exp/s23/time_sgd.cu \
    -o "$o/time_sgd" >"$o/build_sgd.txt" 2>&1; echo "time_sgd build exit $?" >>"$o/build_sgd.txt" ) &
bpid=$!
echo "=== ab ($(date -u +%T))"
REPS=3 timeout 420 tools/ab_train.sh "$o/ab" 10_persistent_step trees/ch09 trees/wide \
  32x512 32x768 32x1024 32x1536 64x512 64x768 64x1024 128x512 128x768 128x1024 256x512 256x768 256x1024 2>&1 | tail -n 16
wait $bpid
tail -n 3 "$o/build_sgd.txt"
echo "=== sgd ($(date -u +%T))"
nvidia-smi --query-gpu=clocks.sm --format=csv,noheader
"$o/time_sgd" 8192 8192 32  8192 784 32  4096 4096 32  2048 2048 32  8192 8192 256  4096 4096 256 2>&1 | tee "$o/sgd.txt"
"$o/time_sgd" 8192 8192 32  8192 784 32 2>&1 | tee -a "$o/sgd.txt"
rm -rf "$o"/ab/build_* "$o"/ab/runs/*/*_steps.csv "$o/time_sgd"
echo "=== end ($(date -u +%T))"
