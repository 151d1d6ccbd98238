#!/usr/bin/env bash
# Session 27, call 1 (issue 16): chapter 09 with the column split as the rule (the batch tile of 64
# becomes a tile of 64 weight rows by 128 batch columns, two consumers of 64 columns each, for the
# forward and backward-data products where its tiles all run at once). Build; the suites of
# chapters 09 and 10 (GEMM tests, training, machine-code checks); then chapter 09's benchmark at
# batch 256 against the tree before the change (8f6bbc6's chapters/09, kept in .device/base09),
# 3 processes per tree in rotating order, round 2 with cuBLAS first. One tarball back.
export PATH=/usr/local/cuda/bin:$PATH
start=$(date +%s); o=$OUT/c1; mkdir -p "$o/csv" data/mnist
ls data/mnist/train-images-idx3-ubyte >/dev/null 2>&1 || for f in .device/mnist-gz/*.gz; do gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,power.limit --format=csv | tee "$o/gpu.txt"; date -u | tee -a "$o/gpu.txt"
c=09_swap_ab_split_k
base=/tmp/base
rm -rf $base && mkdir -p $base && tar --exclude=./build --exclude=./.device --exclude=./data -cf - . | tar -C $base -xf -
cp .device/base09/*.cuh $base/chapters/$c/
[ -f build/build.ninja ] || meson setup build >/dev/null
( meson setup $base/build $base >/dev/null && ninja -C $base/build bench/bench_gemm_$c chapters/train_$c >"$o/build_base.txt" 2>&1; echo "base build exit $? ($(date -u +%T))" ) &
ninja -C build bench/bench_gemm_$c tests/test_gemm_$c tests/test_training_$c chapters/train_$c \
  tests/test_gemm_10_persistent_step tests/test_training_10_persistent_step chapters/train_10_persistent_step \
  tests/test_gemm_02_smem_tiling >"$o/build.txt" 2>&1; echo "ninja exit $? ($(date -u +%T))"
wait
echo "=== suites 09 and 10 ($(date -u +%T))"
meson test -C build --no-rebuild --suite $c --suite 10_persistent_step --print-errorlogs >"$o/suites.txt" 2>&1
echo "suites exit $?"; grep -E "^ *[0-9]+/[0-9]+ " "$o/suites.txt"; cp build/meson-logs/testlog.txt "$o/testlog_suites.txt"
echo "=== bench ($(date -u +%T))"
trees="base new"
for r in 0 1 2; do
  for t in $trees; do
    first=""; [ $r = 1 ] && first=--cublas-first
    dir=build; [ $t = base ] && dir=$base/build
    $dir/bench/bench_gemm_$c --only b256 $first --csv "$o/csv/${t}_r$r.csv" >>"$o/bench_log.txt" 2>&1 || echo "bench $t r$r failed"
    echo "$t r$r $first $(nvidia-smi --query-gpu=clocks.sm --format=csv,noheader)" >>"$o/clocks.txt"
  done
  trees="$(echo $trees | cut -d' ' -f2-) $(echo $trees | cut -d' ' -f1)"
  echo "round $r ($(date -u +%T))"
done
python3 docs/results/session26/ab3_table.py "$o/csv" base,new | tee "$o/ab.txt"
echo "=== end ($(date -u +%T), $(( $(date +%s) - start )) s)"
cd $OUT && tar czf c1.tgz c1 && rm -rf c1
