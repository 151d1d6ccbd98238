#!/usr/bin/env bash
# Session 18, call 4: the crossover at hidden 2048: the working tree (chapter 09's graph there)
# against a copy whose rule lets the persistent step take hidden 2048
# (ab_w2048/), at batch 32 and 256.
export PATH=/usr/local/cuda/bin:$PATH
mkdir -p data/mnist
for f in .device/mnist-gz/*.gz; do [ -f "data/mnist/$(basename "${f%.gz}")" ] || gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
echo "=== ab ($(date -u +%T))"
REPS=2 timeout 420 tools/ab_train.sh "$OUT/ab" 10_persistent_step . ab_w2048 32x2048 256x2048 2>&1 | tail -n 4
rm -rf "$OUT"/ab/build_* "$OUT"/ab/runs/*/*_steps.csv
tar -czf "$OUT/ab.tar.gz" -C "$OUT" ab && rm -rf "$OUT/ab"
echo "=== end ($(date -u +%T))"
