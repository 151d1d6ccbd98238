#!/usr/bin/env bash
# Session 28, call 4 (issue 16): the weight update's TMA stores under four L2 policies, chapter 09's
# trainer at batch 32 (where the weight update runs), the trees in one call (tools/ab_train.sh):
# a = this tree (both stores evict_normal), b = both evict_first (call 2's eall), c = the masters
# evict_first and the fp16 copies evict_normal, d = the reverse (.device/v28/).
export PATH=/usr/local/cuda/bin:$PATH
start=$(date +%s); o=$OUT/c4; mkdir -p "$o" data/mnist
ls data/mnist/train-images-idx3-ubyte >/dev/null 2>&1 || for f in .device/mnist-gz/*.gz; do gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,power.limit --format=csv | tee "$o/gpu.txt"; date -u | tee -a "$o/gpu.txt"
copy() { rm -rf $1 && mkdir -p $1 && tar --exclude=./build --exclude=./.device --exclude=./data --exclude=./exp -cf - . | tar -C $1 -xf -; }
for v in all_first masters_first copies_first; do copy /tmp/$v; cp .device/v28/$v.cuh /tmp/$v/chapters/09_swap_ab_split_k/weight_update.cuh; done
rm -rf /tmp/ab4
tools/ab_train.sh /tmp/ab4 09_swap_ab_split_k . /tmp/all_first /tmp/masters_first /tmp/copies_first 32x512 32x2048 32x4096 32x8192 >"$o/ab_train_log.txt" 2>&1
echo "ab_train exit $?"; cp /tmp/ab4/ab.csv /tmp/ab4/ab_summary.csv "$o/"; cat "$o/ab_summary.csv"
echo "=== end ($(date -u +%T), $(( $(date +%s) - start )) s)"
