#!/usr/bin/env bash
# Session 25, call 9: chapter 09's full GEMM test with the shape 65 x 8449 x 8 added (the batch tile
# of 128 within the mutants' small shapes), the mutant that takes its second consumer away, then
# the trainer at batch 256 with one consumer at the batch tile of 128 (dispatch.cuh as of HEAD,
# exp/s25/old9) and with two (the working tree), tools/ab_train.sh, 3 repetitions.
export PATH=/usr/local/cuda/bin:$PATH
o=$OUT/c9; mkdir -p "$o"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,power.limit --format=csv | tee "$o/gpu.txt"; date -u | tee -a "$o/gpu.txt"
mkdir -p data/mnist; for f in .device/mnist-gz/*.gz; do gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
for t in old new; do
  mkdir -p "trees/$t/data"; cp -r meson.build meson_options.txt chapters common tests bench tools "trees/$t/"; cp data/*.sh "trees/$t/data/"
done
cp exp/s25/old9/09_swap_ab_split_k/dispatch.cuh trees/old/chapters/09_swap_ab_split_k/dispatch.cuh
grep -h "return batch_tile" trees/*/chapters/09_swap_ab_split_k/dispatch.cuh
for v in a:old b:new; do ( meson setup "$o/ab/build_${v%%:*}" "trees/${v#*:}" >/dev/null 2>&1 && ninja -C "$o/ab/build_${v%%:*}" chapters/train_09_swap_ab_split_k >"/tmp/ab_build_${v%%:*}.txt" 2>&1; echo "tree ${v#*:} built $? ($(date -u +%T))" ) & done
( MUTATE_DIR=/tmp/mutate9 MUTATE_JOBS=1 timeout 420 tools/mutate.sh 09_one_consumer_at_the_batch_tile_of_128 >"$o/mutate.txt" 2>&1 ) &
[ -f build/build.ninja ] || meson setup build >/dev/null 2>&1
ninja -C build tests/test_gemm_09_swap_ab_split_k >"$o/build.txt" 2>&1; echo "ninja exit $? ($(date -u +%T))"
build/tests/test_gemm_09_swap_ab_split_k 7 >"$o/test_gemm_09.txt" 2>&1; echo "GEMM test exit $? ($(date -u +%T)): $(tail -1 "$o/test_gemm_09.txt")"
wait
grep -E "^(caught|MISSED|missed|error)|^mutate" "$o/mutate.txt" | tail -3
echo "=== ab ($(date -u +%T))"
REPS=3 timeout 240 tools/ab_train.sh "$o/ab" 09_swap_ab_split_k trees/old trees/new 256x2048 256x4096 256x8192 2>&1 | tail -n 6
rm -rf "$o"/ab/build_*
echo "=== end ($(date -u +%T))"
cd $OUT && tar czf c9.tgz c9
