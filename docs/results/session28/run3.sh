#!/usr/bin/env bash
# Session 28, call 3 (issue 16): chapter 09's trainer from call 2's three trees (base, new, eall),
# in one call: tools/ab_train.sh, 3 repetitions of 3 epochs, the order rotating.
export PATH=/usr/local/cuda/bin:$PATH
start=$(date +%s); o=$OUT/c3; mkdir -p "$o" data/mnist
ls data/mnist/train-images-idx3-ubyte >/dev/null 2>&1 || for f in .device/mnist-gz/*.gz; do gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,power.limit --format=csv | tee "$o/gpu.txt"; date -u | tee -a "$o/gpu.txt"
copy() { rm -rf $1 && mkdir -p $1 && tar --exclude=./build --exclude=./.device --exclude=./data --exclude=./exp -cf - . | tar -C $1 -xf -; }
[ -d /tmp/base/chapters ] || { copy /tmp/base; cp .device/base28/08_gemm.cuh /tmp/base/chapters/08_warp_specialized/gemm.cuh
  cp .device/base28/09_weight_update.cuh /tmp/base/chapters/09_swap_ab_split_k/weight_update.cuh; }
[ -d /tmp/eall/chapters ] || { copy /tmp/eall; sed -i 's/warp_specialized::l2_evict_normal()/warp_specialized::l2_evict_first()/' /tmp/eall/chapters/09_swap_ab_split_k/weight_update.cuh; }
tools/ab_train.sh /tmp/ab 09_swap_ab_split_k /tmp/base . /tmp/eall 32x2048 32x8192 256x2048 256x8192 >"$o/ab_train_log.txt" 2>&1
echo "ab_train exit $?"; cp /tmp/ab/ab.csv /tmp/ab/ab_summary.csv "$o/"; cat "$o/ab_summary.csv"
echo "=== end ($(date -u +%T), $(( $(date +%s) - start )) s)"
