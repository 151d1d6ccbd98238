#!/usr/bin/env bash
# Session 24, call 6: chapter 10's crossover again, now that chapter 09's weight gradients at
# batch <= 64 run the weight update: a tree whose persistent step takes every model against one
# that never takes it (tools/ab_train.sh), near the rule's edges.
export PATH=/usr/local/cuda/bin:$PATH
o=$OUT/c6; mkdir -p "$o" data/mnist
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,power.limit --format=csv | tee "$o/gpu.txt"
date -u | tee -a "$o/gpu.txt"
ls data/mnist/train-images-idx3-ubyte >/dev/null 2>&1 || for f in .device/mnist-gz/*.gz; do gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
for t in wide ch09; do
  rm -rf "trees/$t"; mkdir -p "trees/$t/data"
  cp -r meson.build meson_options.txt chapters common tests bench tools "trees/$t/"
  cp data/*.sh "trees/$t/data/" 2>/dev/null
done
sed -i -e 's/^constexpr int kMaxWidth = 2048;/constexpr int kMaxWidth = 1 << 14;/' -e 's/^constexpr int kMaxActivationTiles = 132;/constexpr int kMaxActivationTiles = 1 << 20;/' trees/wide/chapters/10_persistent_step/schedule.cuh
sed -i 's/^constexpr int kMaxWidth = 2048;/constexpr int kMaxWidth = 0;/' trees/ch09/chapters/10_persistent_step/schedule.cuh
grep -n "^constexpr int kMax" trees/*/chapters/10_persistent_step/schedule.cuh
echo "=== ab ($(date -u +%T))"
REPS=3 timeout 420 tools/ab_train.sh "$OUT/ab" 10_persistent_step trees/ch09 trees/wide \
  32x512 32x768 32x1024 32x1536 32x2048 64x768 64x1024 64x1536 96x768 96x1024 2>&1 | tail -n 13
mv "$OUT/ab" "$o/ab"; rm -rf "$o"/ab/build_* "$o"/ab/runs
echo "=== end ($(date -u +%T))"
cd $OUT && tar czf c6.tgz c6
