#!/usr/bin/env bash
# Session 24, call 3: the mutants of the weight update (and three candidates), then the trainer
# with and without it (tools/ab_train.sh) at batch 32 and 64.
export PATH=/usr/local/cuda/bin:$PATH
o=$OUT/c3; mkdir -p "$o" data/mnist
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,power.limit --format=csv | tee "$o/gpu.txt"
date -u | tee -a "$o/gpu.txt"
ls data/mnist/train-images-idx3-ubyte >/dev/null 2>&1 || for f in .device/mnist-gz/*.gz; do gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
cat exp/s24/candidates.txt >> tools/mutants.txt
names=$(grep -o '^09_weight_update[a-z_]*' tools/mutants.txt | tr '\n' ' ')
echo "mutants: $names"
echo "=== mutants ($(date -u +%T))"
MUTATE_JOBS=6 MUTATE_DIR=/tmp/mut timeout 360 tools/mutate.sh $names >"$o/mutate.txt" 2>&1; echo "mutate exit $?"
grep -E "^(caught|MISSED|missed|error)" "$o/mutate.txt" || tail -n 20 "$o/mutate.txt"
git_old() { :; }
for t in old new; do
  mkdir -p "trees/$t/data"
  cp -r meson.build meson_options.txt chapters common tests bench tools "trees/$t/"
  cp data/*.sh "trees/$t/data/" 2>/dev/null
done
cp exp/s24/old09/09_swap_ab_split_k/gemm.cuh trees/old/chapters/09_swap_ab_split_k/gemm.cuh
grep -c weight_update trees/*/chapters/09_swap_ab_split_k/gemm.cuh
echo "=== ab ($(date -u +%T))"
REPS=3 timeout 300 tools/ab_train.sh "$OUT/ab" 09_swap_ab_split_k trees/old trees/new 32x1024 32x2048 32x4096 32x8192 64x2048 64x8192 2>&1 | tail -n 12
mv "$OUT/ab" "$o/ab"; rm -rf "$o"/ab/build_* "$o"/ab/runs
echo "=== end ($(date -u +%T))"
cd $OUT && tar czf c3.tgz c3
