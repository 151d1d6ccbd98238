#!/usr/bin/env bash
# Session 23, call 2: the crossover at more shapes (is it the step's work, or width by batch?),
# and the SGD-epilogue timer (fixed: one gemm before capture).
export PATH=/usr/local/cuda/bin:$PATH
o=$OUT/c2
mkdir -p "$o" data/mnist
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,power.limit --format=csv | tee "$o/gpu.txt"
date -u
ls data/mnist/train-images-idx3-ubyte >/dev/null 2>&1 || for f in .device/mnist-gz/*.gz; do gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
( nvcc -O3 -std=c++17 --expt-relaxed-constexpr -gencode=arch=compute_90a,code=sm_90a -Ichapters/09_swap_ab_split_k -Ichapters -Icommon \
    -DCHAPTER_NAME='"09_swap_ab_split_k"' -DCHAPTER_NAMESPACE=swap_ab_split_k common/chapter.cu common/epilogue.cu exp/s23/time_sgd.cu \
    -o "$o/time_sgd" >"$o/build_sgd.txt" 2>&1; echo "time_sgd build exit $?" >>"$o/build_sgd.txt" ) &
bpid=$!
for t in wide ch09; do
  [ -d "trees/$t/chapters" ] && continue
  mkdir -p "trees/$t/data"
  cp -r meson.build meson_options.txt chapters common tests bench tools "trees/$t/"
  cp data/*.sh "trees/$t/data/" 2>/dev/null
done
sed -i 's/^constexpr int kMaxWidth = 1024;/constexpr int kMaxWidth = 1 << 14;/' trees/wide/chapters/10_persistent_step/schedule.cuh
sed -i 's/^constexpr int kMaxWidth = 1024;/constexpr int kMaxWidth = 0;/' trees/ch09/chapters/10_persistent_step/schedule.cuh
grep -n "^constexpr int kMaxWidth" trees/*/chapters/10_persistent_step/schedule.cuh
echo "=== ab ($(date -u +%T))"
REPS=3 timeout 400 tools/ab_train.sh "$OUT/ab2" 10_persistent_step trees/ch09 trees/wide \
  32x2048 32x3072 48x1536 64x1536 64x2048 96x1024 96x1536 128x1536 160x768 160x1024 192x512 192x768 2>&1 | tail -n 17
mv "$OUT/ab2" "$o/ab"
wait $bpid
tail -n 3 "$o/build_sgd.txt"
echo "=== sgd ($(date -u +%T))"
nvidia-smi --query-gpu=clocks.sm --format=csv,noheader
"$o/time_sgd" 8192 8192 32  8192 784 32  4096 4096 32  2048 2048 32  8192 8192 256  4096 4096 256 2>&1 | tee "$o/sgd.txt"
"$o/time_sgd" 8192 8192 32  8192 784 32 2>&1 | tee -a "$o/sgd.txt"
rm -rf "$o"/ab/build_* "$o"/ab/runs "$o/time_sgd"
echo "=== end ($(date -u +%T))"
