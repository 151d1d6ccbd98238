#!/usr/bin/env bash
# Session 25, call 4: the review's tidy of chapters 08 and 09 (one swizzle helper, chapter 08's box
# width and store map reused by the weight update; the machine code of every kernel the same bytes
# as before, compared on the build machine). What can change is the plain store's tensor map (L2
# promotion 256B -> none, chapter 08's): chapter 09's benchmark at batch 32 with the weight update
# as of af2215a (exp/s25/old) and as now, 3 processes each, alternating. Then the mutant
# 03_drops_the_k_tail, and suites 08, 09 and 10.
export PATH=/usr/local/cuda/bin:$PATH
o=$OUT/c4; mkdir -p "$o/csv"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,power.limit --format=csv | tee "$o/gpu.txt"; date -u | tee -a "$o/gpu.txt"
mkdir -p data/mnist; for f in .device/mnist-gz/*.gz; do gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
meson setup build >/dev/null 2>&1
ninja -C build bench/bench_gemm_09_swap_ab_split_k >"$o/build.txt" 2>&1; echo "ninja bench exit $? ($(date -u +%T))"
( ninja -C build tests/test_gemm_08_warp_specialized tests/test_training_08_warp_specialized chapters/train_08_warp_specialized tests/test_gemm_09_swap_ab_split_k tests/test_gemm_10_persistent_step tests/test_training_09_swap_ab_split_k tests/test_training_10_persistent_step tests/test_persistent_schedule chapters/train_09_swap_ab_split_k chapters/train_10_persistent_step >"$o/build_tests.txt" 2>&1; echo "ninja tests exit $? ($(date -u +%T))" >>"$o/build_tests.txt" ) &
w=/tmp/old; mkdir -p $w; c=09_swap_ab_split_k
nvcc -O3 -lineinfo --expt-relaxed-constexpr -gencode=arch=compute_90a,code=sm_90a -Ibuild/chapters -Icommon -Ibuild/common -Iexp/s25/old -Ichapters -Ichapters/$c "-DCHAPTER_NAME=\"$c\"" -DCHAPTER_NAMESPACE=swap_ab_split_k -c build/chapters/chapter_$c.cu -o $w/old.o &&
nvcc -gencode=arch=compute_90a,code=sm_90a build/bench/bench_gemm_$c.p/meson-generated_.._gemm_bench.cu.o $w/old.o -Xlinker=build/common/libcommon_gpu.a -Xlinker=build/common/libcommon_cpu.a -lcudart -lcublas -o $w/bench_old; echo "old bench built $? ($(date -u +%T))"
echo "=== A/B ($(date -u +%T))"
for r in 0 1 2; do
  for t in old new; do
    [ $r = 1 ] && t=$([ $t = old ] && echo new || echo old)
    b=build/bench/bench_gemm_$c; [ $t = old ] && b=$w/bench_old
    $b --only b32 --csv "$o/csv/${t}_r$r.csv" >>"$o/bench_log.txt" 2>&1 || echo "bench $t r$r failed"
    echo "$t r$r $(nvidia-smi --query-gpu=clocks.sm --format=csv,noheader)" >>"$o/clocks.txt"
  done
done
python3 exp/s25/ab_table.py "$o/csv" | tee "$o/ab.txt"
wait; tail -1 "$o/build_tests.txt"
echo "=== mutant ($(date -u +%T))"
MUTATE_DIR=/tmp/mutate MUTATE_JOBS=1 timeout 280 tools/mutate.sh 03_drops_the_k_tail 2>&1 | tail -5 | tee "$o/mutate.txt"
echo "=== end ($(date -u +%T))"
cd $OUT && tar czf c4.tgz c4
