#!/usr/bin/env bash
# Session 28, call 5 (issue 16): the committed change (chapter 08's C stored under evict_first, the
# weight update's dW too, its masters and copies under L2's normal policy): build, the suites of
# chapters 08, 09 and 10, and chapter 09's whole GEMM benchmark in one process (the results CSV).
export PATH=/usr/local/cuda/bin:$PATH
start=$(date +%s); o=$OUT/c5; mkdir -p "$o" data/mnist
ls data/mnist/train-images-idx3-ubyte >/dev/null 2>&1 || for f in .device/mnist-gz/*.gz; do gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,power.limit --format=csv | tee "$o/gpu.txt"; date -u | tee -a "$o/gpu.txt"
[ -f build/build.ninja ] || meson setup build >/dev/null
ninja -C build >"$o/build.txt" 2>&1; echo "ninja exit $? ($(date -u +%T))"
meson test -C build --no-rebuild --suite 08_warp_specialized --suite 09_swap_ab_split_k --suite 10_persistent_step --print-errorlogs >"$o/suites.txt" 2>&1
echo "suites exit $? ($(date -u +%T))"; grep -E "^ *[0-9]+/[0-9]+ " "$o/suites.txt"; cp build/meson-logs/testlog.txt "$o/testlog.txt"
build/bench/bench_gemm_09_swap_ab_split_k --csv "$o/gemm_09_swap_ab_split_k.csv" >"$o/bench_09.txt" 2>&1; echo "bench 09 exit $? ($(date -u +%T))"
echo "=== end ($(date -u +%T), $(( $(date +%s) - start )) s)"
cd $OUT && tar czf c5.tgz c5 && rm -rf c5
