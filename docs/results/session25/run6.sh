#!/usr/bin/env bash
# Session 25, call 6 (issue 16, batch 256): chapter 09 with two consumer warpgroups for the batch
# tile of 128 (V1: tiles of 128 weight rows, the batch operand read once per 128 rows instead of
# 64), and V2 = V1 with batch tiles of at least 128 wherever M > 128 (exp/s25/v16/*/dispatch.cuh).
# Chapter 09's GEMM test on each variant, then its benchmark at batch 256, 3 processes per tree in
# rotating order, cuBLAS in the same process.
export PATH=/usr/local/cuda/bin:$PATH
o=$OUT/c6; mkdir -p "$o/csv"; w=/tmp/v16; mkdir -p $w
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,power.limit --format=csv | tee "$o/gpu.txt"; date -u | tee -a "$o/gpu.txt"
meson setup build >/dev/null 2>&1
c=09_swap_ab_split_k
ninja -C build bench/bench_gemm_$c tests/test_gemm_$c >"$o/build.txt" 2>&1; echo "ninja exit $? ($(date -u +%T))"
for v in V1 V2; do
  ( nvcc -O3 -lineinfo --expt-relaxed-constexpr -gencode=arch=compute_90a,code=sm_90a -Ibuild/chapters -Icommon -Ibuild/common -Iexp/s25/v16/$v -Ichapters -Ichapters/$c "-DCHAPTER_NAME=\"$c\"" -DCHAPTER_NAMESPACE=swap_ab_split_k -c build/chapters/chapter_$c.cu -o $w/$v.o &&
    nvcc -gencode=arch=compute_90a,code=sm_90a build/bench/bench_gemm_$c.p/meson-generated_.._gemm_bench.cu.o $w/$v.o -Xlinker=build/common/libcommon_gpu.a -Xlinker=build/common/libcommon_cpu.a -lcudart -lcublas -o $w/bench_$v &&
    nvcc -gencode=arch=compute_90a,code=sm_90a build/tests/test_gemm_$c.p/meson-generated_.._test_gemm.cu.o $w/$v.o -Xlinker=build/common/libcommon_gpu.a -Xlinker=build/common/libcommon_cpu.a -lcudart -o $w/test_$v
    echo "built $v: $? ($(date -u +%T))" ) &
done; wait
ln -sf "$PWD/build/bench/bench_gemm_$c" $w/bench_base
echo "=== bench ($(date -u +%T))"
trees="base V1 V2"
for r in 0 1 2; do
  for t in $trees; do
    first=""; [ $r = 1 ] && first=--cublas-first
    $w/bench_$t --only b256 $first --csv "$o/csv/${t}_r$r.csv" >>"$o/bench_log.txt" 2>&1 || echo "bench $t r$r failed"
    echo "$t r$r $first $(nvidia-smi --query-gpu=clocks.sm --format=csv,noheader)" >>"$o/clocks.txt"
  done
  trees="$(echo $trees | cut -d' ' -f2-) $(echo $trees | cut -d' ' -f1)"
done
python3 exp/s25/ab3_table.py "$o/csv" | tee "$o/ab.txt"
echo "=== GEMM tests ($(date -u +%T))"
for v in V1 V2; do timeout 150 $w/test_$v 7 >"$o/test_$v.txt" 2>&1; echo "test $v exit $? $(tail -1 "$o/test_$v.txt")"; done
echo "=== end ($(date -u +%T))"
cd $OUT && tar czf c6.tgz c6
