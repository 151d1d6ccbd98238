#!/usr/bin/env bash
# Session 18, call 3: the mutant 10_bias_group_summed_before_staged under racecheck on the
# trainer (tools/mutate.sh's new train_ targets); the crossover again: the working tree (hidden
# 1024 on chapter 09's graph) against a copy whose rule lets the persistent step take hidden 1024
# (ab_w1024/), at batch 32 and 256.
export PATH=/usr/local/cuda/bin:$PATH
mkdir -p data/mnist "$OUT/m"
for f in .device/mnist-gz/*.gz; do [ -f "data/mnist/$(basename "${f%.gz}")" ] || gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
echo "=== mutants ($(date -u +%T))"
MUTATE_JOBS=1 timeout 240 tools/device_run.sh "$OUT/m" mutate 10_bias_group_summed_before_staged \
  2>&1 | grep -E "caught|missed|error|mutate:" | tail -4
echo "=== ab ($(date -u +%T))"
REPS=3 timeout 300 tools/ab_train.sh "$OUT/ab" 10_persistent_step . ab_w1024 32x1024 256x1024 2>&1 | tail -n 4
rm -rf "$OUT"/ab/build_* "$OUT"/ab/runs/*/*_steps.csv
tar -czf "$OUT/mab.tar.gz" -C "$OUT" m ab && rm -rf "$OUT/m" "$OUT/ab"
echo "=== end ($(date -u +%T))"
