#!/usr/bin/env bash
# Session 28, call 9 (issue 16): the weight update for the weight gradients with 64 < K <= 256
# through the SGD epilogue (one kernel per count of K tiles, 2 to 4), as committed. Chapter 09's
# trainer against 0e31ab0 (`a`, its weight_update.cuh kept in .device/base28b) in one call
# (tools/ab_train.sh); then the build of the tests that call 10 runs.
export PATH=/usr/local/cuda/bin:$PATH
start=$(date +%s); o=$OUT/c9; mkdir -p "$o" data/mnist
ls data/mnist/train-images-idx3-ubyte >/dev/null 2>&1 || for f in .device/mnist-gz/*.gz; do gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,power.limit --format=csv | tee "$o/gpu.txt"; date -u | tee -a "$o/gpu.txt"
rm -rf /tmp/base && mkdir -p /tmp/base && tar --exclude=./build --exclude=./.device --exclude=./data --exclude=./exp -cf - . | tar -C /tmp/base -xf -
cp .device/base28b/weight_update.cuh /tmp/base/chapters/09_swap_ab_split_k/
[ -f build/build.ninja ] || meson setup build >/dev/null
rm -rf /tmp/ab9
tools/ab_train.sh /tmp/ab9 09_swap_ab_split_k /tmp/base . 256x1024 256x2048 256x4096 256x8192 32x2048 32x8192 >"$o/ab_train_log.txt" 2>&1
echo "ab_train exit $? ($(date -u +%T))"; cp /tmp/ab9/ab.csv /tmp/ab9/ab_summary.csv "$o/"; cat "$o/ab_summary.csv"
ninja -C build tests/test_gemm_09_swap_ab_split_k tests/test_training_09_swap_ab_split_k chapters/train_09_swap_ab_split_k \
  tests/test_gemm_10_persistent_step tests/test_training_10_persistent_step chapters/train_10_persistent_step tests/test_persistent_schedule >"$o/build.txt" 2>&1
echo "ninja exit $? ($(date -u +%T))"
echo "=== end ($(date -u +%T), $(( $(date +%s) - start )) s)"
cd $OUT && tar czf c9.tgz c9 && rm -rf c9
