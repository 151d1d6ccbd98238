#!/usr/bin/env bash
# Session 25, call 1: tile-shape variants of chapters 03 and 04 (exp/s25/v/NAME/gemm.cuh, each a
# copy of the chapter's gemm.cuh with constants changed), each checked by the chapter's GEMM test
# and timed on the square products against cuBLAS in the same process, trees in rotating order,
# half of the processes with cuBLAS first.
export PATH=/usr/local/cuda/bin:$PATH
o=$OUT/c1; mkdir -p "$o" "$o/csv"; w=/tmp/variants; mkdir -p $w
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,power.limit --format=csv | tee "$o/gpu.txt"; date -u | tee -a "$o/gpu.txt"
mkdir -p data/mnist; for f in .device/mnist-gz/*.gz; do gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
meson setup build >/dev/null 2>&1
ninja -C build bench/bench_gemm_03_mma_sync bench/bench_gemm_04_cp_async tests/test_gemm_03_mma_sync tests/test_gemm_04_cp_async >"$o/build.txt" 2>&1; echo "ninja exit $? ($(date -u +%T))"
flags="-O3 -lineinfo --expt-relaxed-constexpr -gencode=arch=compute_90a,code=sm_90a"
chn_of() { case $1 in 03*) echo 03_mma_sync;; 04*) echo 04_cp_async;; esac; }
ns_of() { case $1 in 03*) echo mma_sync;; 04*) echo cp_async;; esac; }
variants=$(ls exp/s25/v)
for v in $variants; do
  ( chn=$(chn_of $v); ns=$(ns_of $v)
    nvcc $flags -Ibuild/chapters -Icommon -Ibuild/common -Iexp/s25/v/$v -Ichapters -Ichapters/$chn "-DCHAPTER_NAME=\"$chn\"" -DCHAPTER_NAMESPACE=$ns -Xptxas -v -c build/chapters/chapter_$chn.cu -o $w/$v.o >$w/$v.ptxas 2>&1 &&
    nvcc -gencode=arch=compute_90a,code=sm_90a build/bench/bench_gemm_$chn.p/meson-generated_.._gemm_bench.cu.o $w/$v.o -Xlinker=build/common/libcommon_gpu.a -Xlinker=build/common/libcommon_cpu.a -lcudart -lcublas -o $w/bench_$v &&
    nvcc -gencode=arch=compute_90a,code=sm_90a build/tests/test_gemm_$chn.p/meson-generated_.._test_gemm.cu.o $w/$v.o -Xlinker=build/common/libcommon_gpu.a -Xlinker=build/common/libcommon_cpu.a -lcudart -o $w/test_$v
    echo "built $v: $?" ) &
done; wait
for v in $variants; do echo "$v $(grep -A3 'entry.*gemm_kernel' $w/$v.ptxas | grep -o '[0-9]* bytes spill loads\|Used [0-9]* registers' | paste -sd' ')"; done | tee "$o/registers.txt"
for c in 03_mma_sync 04_cp_async; do ln -sf "$PWD/build/bench/bench_gemm_$c" $w/bench_${c:0:2}_base; ln -sf "$PWD/build/tests/test_gemm_$c" $w/test_${c:0:2}_base; done
trees="03_base $variants 04_base"
echo "=== GEMM tests ($(date -u +%T))"
for v in $trees; do $w/test_$v 7 >"$o/test_$v.txt" 2>&1; echo "test $v exit $? $(tail -1 "$o/test_$v.txt")"; done
echo "=== bench ($(date -u +%T))"
set -- $trees; n=$#
for r in 0 1 2 3; do
  i=0
  for v in $trees; do
    first=""; [ $((r % 2)) = 1 ] && first=--cublas-first
    $w/bench_$v --only square $first --csv "$o/csv/${v}_r$r.csv" >>"$o/bench_log.txt" 2>&1 || echo "bench $v r$r failed"
    echo "$v r$r $first $(nvidia-smi --query-gpu=clocks.sm,power.draw --format=csv,noheader)" >>"$o/clocks.txt"
    i=$((i + 1))
  done
  trees="$(echo $trees | cut -d' ' -f2-) $(echo $trees | cut -d' ' -f1)"  # rotate
  echo "round $r done ($(date -u +%T))"
done
python3 exp/s25/summary.py "$o/csv" | tee "$o/summary.txt"
echo "=== end ($(date -u +%T))"
cd $OUT && tar czf c1.tgz c1
