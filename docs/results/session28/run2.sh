#!/usr/bin/env bash
# Session 28, call 2 (issue 16): chapter 08's TMA store of C under an L2 evict_first policy (this
# tree, `new`) against 27's main (`base`, .device/base28), and `eall`: new with the weight update's
# stores evict_first too. Chapter 08's squares, chapter 09's batch-256 and batch-32 hidden-8192 rows, 3
# processes per tree in rotating order, round 1 with cuBLAS first; chapter 09's trainer, the three
# trees in one call, is call 3 (run3.sh). The GEMM tests of 08 and 09 and the TMA-store check.
export PATH=/usr/local/cuda/bin:$PATH
start=$(date +%s); o=$OUT/c2; mkdir -p "$o/csv08" "$o/csv09" data/mnist
ls data/mnist/train-images-idx3-ubyte >/dev/null 2>&1 || for f in .device/mnist-gz/*.gz; do gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,power.limit --format=csv | tee "$o/gpu.txt"; date -u | tee -a "$o/gpu.txt"
copy() { rm -rf $1 && mkdir -p $1 && tar --exclude=./build --exclude=./.device --exclude=./data --exclude=./exp -cf - . | tar -C $1 -xf -; }
copy /tmp/base; cp .device/base28/08_gemm.cuh /tmp/base/chapters/08_warp_specialized/gemm.cuh
cp .device/base28/09_weight_update.cuh /tmp/base/chapters/09_swap_ab_split_k/weight_update.cuh
copy /tmp/eall; sed -i 's/warp_specialized::l2_evict_normal()/warp_specialized::l2_evict_first()/' /tmp/eall/chapters/09_swap_ab_split_k/weight_update.cuh
grep -c l2_evict_first /tmp/eall/chapters/09_swap_ab_split_k/weight_update.cuh
[ -f build/build.ninja ] || meson setup build >/dev/null
for t in base eall; do
  ( meson setup /tmp/$t/build /tmp/$t >/dev/null && ninja -C /tmp/$t/build bench/bench_gemm_09_swap_ab_split_k bench/bench_gemm_08_warp_specialized >"$o/build_$t.txt" 2>&1; echo "$t build exit $?" ) &
done
ninja -C build bench/bench_gemm_08_warp_specialized bench/bench_gemm_09_swap_ab_split_k tests/test_gemm_08_warp_specialized \
  tests/test_gemm_09_swap_ab_split_k tests/test_gemm_10_persistent_step >"$o/build.txt" 2>&1; echo "ninja exit $? ($(date -u +%T))"
wait
echo "=== tests ($(date -u +%T))"
for c in 08_warp_specialized 09_swap_ab_split_k 10_persistent_step; do
  build/tests/test_gemm_$c 1 >"$o/test_$c.txt" 2>&1; echo "test_gemm_$c exit $?: $(tail -1 "$o/test_$c.txt")"
done
python3 tests/check_tma_stores.py build/tests/test_gemm_09_swap_ab_split_k | tee "$o/check_tma_stores.txt"
python3 tests/check_fences.py build/tests/test_gemm_09_swap_ab_split_k >"$o/check_fences.txt" 2>&1; echo "check_fences exit $?: $(tail -1 "$o/check_fences.txt")"
cuobjdump -sass build/tests/test_gemm_08_warp_specialized | grep -oE "UTMASTG[.A-Z0-9_]*|UTMAPF[.A-Z0-9_]*|CCTL[.A-Z0-9_]*" | sort | uniq -c >"$o/sass_08_stores.txt"; cat "$o/sass_08_stores.txt"
echo "=== bench ($(date -u +%T))"
bin() { [ $1 = new ] && echo build || echo /tmp/$1/build; }
trees="base new"
for r in 0 1 2; do
  for t in $trees; do
    first=""; [ $r = 1 ] && first=--cublas-first
    $(bin $t)/bench/bench_gemm_08_warp_specialized --only square $first --csv "$o/csv08/${t}_r$r.csv" >>"$o/bench_log.txt" 2>&1 || echo "bench 08 $t r$r failed"
    echo "08 $t r$r $first $(nvidia-smi --query-gpu=clocks.sm --format=csv,noheader)" >>"$o/clocks.txt"
  done
  trees="$(echo $trees | cut -d' ' -f2-) $(echo $trees | cut -d' ' -f1)"
done
trees="base new eall"
for r in 0 1 2; do
  for t in $trees; do
    first=""; [ $r = 1 ] && first=--cublas-first
    $(bin $t)/bench/bench_gemm_09_swap_ab_split_k --only b256 $first --csv "$o/csv09/${t}_b256_r$r.csv" >>"$o/bench_log.txt" 2>&1 || echo "bench 09 $t b256 r$r failed"
    $(bin $t)/bench/bench_gemm_09_swap_ab_split_k --only "b32 h8192" $first --csv "$o/csv09/${t}_b32_r$r.csv" >>"$o/bench_log.txt" 2>&1 || echo "bench 09 $t b32 r$r failed"
    echo "09 $t r$r $first $(nvidia-smi --query-gpu=clocks.sm --format=csv,noheader)" >>"$o/clocks.txt"
  done
  trees="$(echo $trees | cut -d' ' -f2-) $(echo $trees | cut -d' ' -f1)"
  echo "round $r ($(date -u +%T))"
done
python3 docs/results/session26/ab3_table.py "$o/csv08" base,new | tee "$o/ab08.txt"
for b in b256 b32; do mkdir -p $o/t_$b; for f in $o/csv09/*_${b}_r*.csv; do n=$(basename $f); cp $f $o/t_$b/${n%%_b*}_r${n##*_r}; done
  python3 docs/results/session26/ab3_table.py "$o/t_$b" base,new,eall | tee "$o/ab09_$b.txt"; done
echo "=== end ($(date -u +%T), $(( $(date +%s) - start )) s)"
cd $OUT && tar czf c2.tgz c2 && rm -rf c2
