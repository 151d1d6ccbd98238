#!/usr/bin/env bash
# Session 26, call 8 (issue 16, batch 256): chapter 09 with the two consumers of the batch tile of
# 128 splitting its batch columns instead of its weight rows (NS: tiles of 64 weight rows by 128
# batch columns, each consumer 64 x 64), and NS with batch tiles of at least 128 wherever M > 128
# for the forward and backward-data products (NSV2) (exp/s26/v16/*/09_swap_ab_split_k/). Chapter
# 09's GEMM test on each variant, then its benchmark at batch 256, 3 processes per tree in rotating
# order, round 2 with cuBLAS first.
export PATH=/usr/local/cuda/bin:$PATH
start=$(date +%s); o=$OUT/c8; mkdir -p "$o/csv"; w=/tmp/v16; mkdir -p $w
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,power.limit --format=csv | tee "$o/gpu.txt"; date -u | tee -a "$o/gpu.txt"
meson setup build >/dev/null 2>&1
c=09_swap_ab_split_k
ninja -C build bench/bench_gemm_$c tests/test_gemm_$c >"$o/build.txt" 2>&1; echo "ninja exit $? ($(date -u +%T))"
for v in NS NSV2; do
  ( nvcc -O3 -lineinfo --expt-relaxed-constexpr -gencode=arch=compute_90a,code=sm_90a -Ibuild/chapters -Icommon -Ibuild/common -Iexp/s26/v16/$v/$c -Iexp/s26/v16/$v -Ichapters -Ichapters/$c "-DCHAPTER_NAME=\"$c\"" -DCHAPTER_NAMESPACE=swap_ab_split_k -c build/chapters/chapter_$c.cu -o $w/$v.o &&
    nvcc -gencode=arch=compute_90a,code=sm_90a build/bench/bench_gemm_$c.p/meson-generated_.._gemm_bench.cu.o $w/$v.o -Xlinker=build/common/libcommon_gpu.a -Xlinker=build/common/libcommon_cpu.a -lcudart -lcublas -o $w/bench_$v &&
    nvcc -gencode=arch=compute_90a,code=sm_90a build/tests/test_gemm_$c.p/meson-generated_.._test_gemm.cu.o $w/$v.o -Xlinker=build/common/libcommon_gpu.a -Xlinker=build/common/libcommon_cpu.a -lcudart -o $w/test_$v
    echo "built $v: $? ($(date -u +%T))" ) &
done; wait
ln -sf "$PWD/build/bench/bench_gemm_$c" $w/bench_base
echo "=== GEMM tests ($(date -u +%T))"
$w/test_NSV2 7 small >"$o/test_NSV2_small.txt" 2>&1; echo "test NSV2 small exit $? $(tail -1 "$o/test_NSV2_small.txt")"
grep -c "^FAIL" "$o/test_NSV2_small.txt"; grep "^FAIL" "$o/test_NSV2_small.txt" | grep -v "dispatch\|batch tile\|threads" | head -5
echo "=== bench ($(date -u +%T))"
trees="base NS NSV2"
for r in 0 1 2; do
  for t in $trees; do
    first=""; [ $r = 1 ] && first=--cublas-first
    $w/bench_$t --only b256 $first --csv "$o/csv/${t}_r$r.csv" >>"$o/bench_log.txt" 2>&1 || echo "bench $t r$r failed"
    echo "$t r$r $first $(nvidia-smi --query-gpu=clocks.sm --format=csv,noheader)" >>"$o/clocks.txt"
  done
  trees="$(echo $trees | cut -d' ' -f2-) $(echo $trees | cut -d' ' -f1)"
  echo "round $r ($(date -u +%T))"
done
python3 exp/s26/ab3_table.py "$o/csv" base,NS,NSV2 | tee "$o/ab.txt"
echo "=== whole GEMM test of NSV2 ($(date -u +%T))"
left=$((585 - $(date +%s) + start))
timeout $left $w/test_NSV2 7 >"$o/test_NSV2.txt" 2>&1; echo "test NSV2 exit $? $(tail -1 "$o/test_NSV2.txt")"
grep "^FAIL" "$o/test_NSV2.txt" | sed 's/ M=.*//' | sort | uniq -c | head -8
echo "=== end ($(date -u +%T))"
cd $OUT && tar czf c8.tgz c8
