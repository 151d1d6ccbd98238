#!/usr/bin/env bash
# Session 26, call 5: chapter 02 with 16 x 8 and 8 x 16 thread tiles and K steps of 64, against the chapter: whole GEMM test, square products, 5 rounds.
# the whole GEMM test (seed 7) of two, and four more timed as in call 1.
export PATH=/usr/local/cuda/bin:$PATH
o=$OUT/c5; mkdir -p "$o/csv"; w=/tmp/variants5; mkdir -p $w; chn=02_smem_tiling
flags="-O3 -lineinfo --expt-relaxed-constexpr -gencode=arch=compute_90a,code=sm_90a"
variants="t16x8_b2_k4_128x128x64 t8x16_b2_k4_128x128x64"
for v in $variants; do
  ( IFS=_ read -r t b k s <<<"$v"; tm=${t#t}; tm=${tm%x*}; tn=${t#*x}; bps=${b#b}; kpr=${k#k}; IFS=x read -r bm bn bk <<<"$s"
    nvcc $flags -DTM=$tm -DTN=$tn -DBPS=$bps -DKPR=$kpr -DBM=$bm -DBN=$bn -DBK=$bk -Ibuild/chapters -Icommon -Ibuild/common -Iexp/s26/v02/$chn -Ichapters -Ichapters/$chn "-DCHAPTER_NAME=\"$chn\"" -DCHAPTER_NAMESPACE=smem_tiling -Xptxas -v -c build/chapters/chapter_$chn.cu -o $w/$v.o >$w/$v.ptxas 2>&1 &&
    nvcc -gencode=arch=compute_90a,code=sm_90a build/bench/bench_gemm_$chn.p/meson-generated_.._gemm_bench.cu.o $w/$v.o -Xlinker=build/common/libcommon_gpu.a -Xlinker=build/common/libcommon_cpu.a -lcudart -lcublas -o $w/bench_$v &&
    nvcc -gencode=arch=compute_90a,code=sm_90a build/tests/test_gemm_$chn.p/meson-generated_.._test_gemm.cu.o $w/$v.o -Xlinker=build/common/libcommon_gpu.a -Xlinker=build/common/libcommon_cpu.a -lcudart -o $w/test_$v
    echo "built $v: $?" ) &
done; wait
for v in $variants; do echo "$v $(grep -A3 'Compiling entry.*gemm_kernel' $w/$v.ptxas | grep -o 'Used [0-9]* registers\|[0-9]* bytes spill stores' | paste -sd' ')"; done | tee "$o/registers.txt"
ln -sf "$PWD/build/bench/bench_gemm_$chn" $w/bench_base
echo "=== GEMM tests ($(date -u +%T))"
for v in $(echo $variants | cut -d' ' -f1-2); do timeout 100 $w/test_$v 7 >"$o/test_$v.txt" 2>&1; echo "test $v (whole) exit $? $(tail -1 "$o/test_$v.txt")"; done
for v in $(echo $variants | cut -d" " -f3-); do $w/test_$v 7 small >"$o/test_$v.txt" 2>&1; echo "test $v (small) exit $? $(tail -1 "$o/test_$v.txt")"; done
echo "=== bench ($(date -u +%T))"
trees="base $variants"
for r in 0 1 2 3 4; do
  for v in $trees; do
    first=""; [ $((r % 2)) = 1 ] && first=--cublas-first
    $w/bench_$v --only square $first --csv "$o/csv/${v}_r$r.csv" >>"$o/bench_log.txt" 2>&1 || echo "bench $v r$r failed"
    echo "$v r$r $first $(nvidia-smi --query-gpu=clocks.sm,power.draw --format=csv,noheader)" >>"$o/clocks.txt"
  done
  trees="$(echo $trees | cut -d' ' -f2-) $(echo $trees | cut -d' ' -f1)"
  echo "round $r done ($(date -u +%T))"
done
python3 exp/s26/summary.py "$o/csv" | tee "$o/summary.txt"
cd $OUT && tar czf c5.tgz c5 && rm -rf c5
