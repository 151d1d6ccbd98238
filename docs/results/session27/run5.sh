#!/usr/bin/env bash
# Session 27, call 5: the column split in the tree (the tree of calls 1-4): chapter 09's GEMM
# benchmark, every case with cuBLAS in the same process, twice (the second with cuBLAS first, for
# the drift between processes); and the build the comparison grid of call 6 needs.
export PATH=/usr/local/cuda/bin:$PATH
start=$(date +%s); o=$OUT/c5; mkdir -p "$o" data/mnist
ls data/mnist/train-images-idx3-ubyte >/dev/null 2>&1 || for f in .device/mnist-gz/*.gz; do gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,power.limit --format=csv | tee "$o/gpu.txt"; date -u | tee -a "$o/gpu.txt"
[ -f build/build.ninja ] || meson setup build >/dev/null
c=09_swap_ab_split_k
ninja -C build bench/bench_gemm_$c chapters/train_08_warp_specialized chapters/train_$c chapters/train_10_persistent_step bench/train_cublas >"$o/build.txt" 2>&1; echo "ninja exit $? ($(date -u +%T))"
build/bench/bench_gemm_$c --csv "$o/gemm_$c.csv" >"$o/bench_log.txt" 2>&1; echo "bench exit $? ($(date -u +%T))"
build/bench/bench_gemm_$c --cublas-first --csv "$o/gemm_${c}_cublas_first.csv" >"$o/bench_log_cublas_first.txt" 2>&1; echo "bench cublas-first exit $? ($(date -u +%T))"
echo "=== end ($(date -u +%T), $(( $(date +%s) - start )) s)"
cd $OUT && tar czf c5.tgz c5 && rm -rf c5
