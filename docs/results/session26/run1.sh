#!/usr/bin/env bash
# Session 26, call 1: the whole build; chapter 02 with other thread tiles (exp/s26/v02/02_smem_tiling/gemm.cuh
# with -DTM -DTN -DBPS -DKPR), each checked by the chapter's GEMM test (small shapes) and timed on the
# square products, 3 processes per tree in rotating order, round 1 with cuBLAS first; then suites 09 and 10.
export PATH=/usr/local/cuda/bin:$PATH
start=$(date +%s)
o=$OUT/c1; mkdir -p "$o/csv"; w=/tmp/variants; mkdir -p $w
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,power.limit --format=csv | tee "$o/gpu.txt"; date -u | tee -a "$o/gpu.txt"
mkdir -p data/mnist; for f in .device/mnist-gz/*.gz; do gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
meson setup build >/dev/null 2>&1
ninja -C build bench/bench_gemm_02_smem_tiling tests/test_gemm_02_smem_tiling >"$o/build02.txt" 2>&1; echo "ninja 02 exit $? ($(date -u +%T))"
flags="-O3 -lineinfo --expt-relaxed-constexpr -gencode=arch=compute_90a,code=sm_90a"
chn=02_smem_tiling
variants="t8x8_b2_k4 t16x8_b2_k4 t16x8_b2_k2 t8x16_b2_k4 t8x16_b3_k2"
for v in $variants; do
  ( IFS=_ read -r t b k <<<"$v"; tm=${t#t}; tm=${tm%x*}; tn=${t#*x}; bps=${b#b}; kpr=${k#k}
    nvcc $flags -DTM=$tm -DTN=$tn -DBPS=$bps -DKPR=$kpr -Ibuild/chapters -Icommon -Ibuild/common -Iexp/s26/v02/$chn -Ichapters -Ichapters/$chn "-DCHAPTER_NAME=\"$chn\"" -DCHAPTER_NAMESPACE=smem_tiling -Xptxas -v -c build/chapters/chapter_$chn.cu -o $w/$v.o >$w/$v.ptxas 2>&1 &&
    nvcc -gencode=arch=compute_90a,code=sm_90a build/bench/bench_gemm_$chn.p/meson-generated_.._gemm_bench.cu.o $w/$v.o -Xlinker=build/common/libcommon_gpu.a -Xlinker=build/common/libcommon_cpu.a -lcudart -lcublas -o $w/bench_$v &&
    nvcc -gencode=arch=compute_90a,code=sm_90a build/tests/test_gemm_$chn.p/meson-generated_.._test_gemm.cu.o $w/$v.o -Xlinker=build/common/libcommon_gpu.a -Xlinker=build/common/libcommon_cpu.a -lcudart -o $w/test_$v
    echo "built $v: $?" ) &
done
wait
( nice -n 19 ninja -C build -j 12 >"$o/build.txt" 2>&1; echo "ninja all exit $? ($(date -u +%T))" >"$o/build_done.txt" ) &
allbuild=$!
for v in $variants; do echo "$v $(grep -A3 'Compiling entry.*gemm_kernel' $w/$v.ptxas | grep -o 'Used [0-9]* registers\|[0-9]* bytes spill stores' | paste -sd' ')"; done | tee "$o/registers.txt"
ln -sf "$PWD/build/bench/bench_gemm_$chn" $w/bench_base; ln -sf "$PWD/build/tests/test_gemm_$chn" $w/test_base
trees="base $variants"
echo "=== GEMM tests ($(date -u +%T))"
for v in $trees; do $w/test_$v small >"$o/test_$v.txt" 2>&1; echo "test $v exit $? $(tail -1 "$o/test_$v.txt")"; done
echo "=== bench ($(date -u +%T))"
for r in 0 1 2; do
  for v in $trees; do
    first=""; [ $r = 1 ] && first=--cublas-first
    $w/bench_$v --only square $first --csv "$o/csv/${v}_r$r.csv" >>"$o/bench_log.txt" 2>&1 || echo "bench $v r$r failed"
    echo "$v r$r $first $(nvidia-smi --query-gpu=clocks.sm,power.draw --format=csv,noheader)" >>"$o/clocks.txt"
  done
  trees="$(echo $trees | cut -d' ' -f2-) $(echo $trees | cut -d' ' -f1)"
  echo "round $r done ($(date -u +%T))"
done
python3 exp/s26/summary.py "$o/csv" | tee "$o/summary.txt"
wait $allbuild; cat "$o/build_done.txt"
echo "=== suites 09 and 10 ($(date -u +%T))"
left=$((580 - $(date +%s) + start))
timeout $left meson test -C build --no-rebuild --suite 09_swap_ab_split_k --suite 10_persistent_step >"$o/tests.txt" 2>&1; echo "meson test exit $?"
tail -8 "$o/tests.txt"; cp build/meson-logs/testlog.txt "$o/" 2>/dev/null
echo "=== end ($(date -u +%T))"
cd $OUT && tar czf c1.tgz c1 && rm -rf c1
