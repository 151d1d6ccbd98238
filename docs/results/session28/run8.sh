#!/usr/bin/env bash
# Session 28, call 8 (issue 16), a prototype: chapter 09's weight update for the weight gradients
# with 64 < K <= 256 through the SGD epilogue too (all K tiles of a 64 x 64 tile in shared memory at
# once; .device/proto/weight_update.cuh), where chapter 08's kernel takes them today. Chapter 09's
# trainer, this tree (a) against the prototype (b), in one call (tools/ab_train.sh); then the
# prototype's GEMM and training tests (its GEMM test still restates today's rule).
export PATH=/usr/local/cuda/bin:$PATH
start=$(date +%s); o=$OUT/c8; mkdir -p "$o" data/mnist
ls data/mnist/train-images-idx3-ubyte >/dev/null 2>&1 || for f in .device/mnist-gz/*.gz; do gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,power.limit --format=csv | tee "$o/gpu.txt"; date -u | tee -a "$o/gpu.txt"
rm -rf /tmp/proto && mkdir -p /tmp/proto && tar --exclude=./build --exclude=./.device --exclude=./data --exclude=./exp -cf - . | tar -C /tmp/proto -xf -
cp .device/proto/weight_update.cuh /tmp/proto/chapters/09_swap_ab_split_k/
rm -rf /tmp/ab8
tools/ab_train.sh /tmp/ab8 09_swap_ab_split_k . /tmp/proto 256x1024 256x2048 256x4096 256x8192 32x2048 >"$o/ab_train_log.txt" 2>&1
echo "ab_train exit $? ($(date -u +%T))"; cp /tmp/ab8/ab.csv /tmp/ab8/ab_summary.csv "$o/"; cat "$o/ab_summary.csv"
ninja -C /tmp/ab8/build_b tests/test_gemm_09_swap_ab_split_k tests/test_training_09_swap_ab_split_k >"$o/build_tests.txt" 2>&1; echo "test build exit $?"
/tmp/ab8/build_b/tests/test_gemm_09_swap_ab_split_k 1 >"$o/test_gemm.txt" 2>&1; echo "test_gemm exit $?: $(tail -1 "$o/test_gemm.txt")"
grep -E "FAIL|wrong|expected" "$o/test_gemm.txt" | cut -c1-160 | sort | uniq -c | sort -rn | head -8
/tmp/ab8/build_b/tests/test_training_09_swap_ab_split_k data/mnist >"$o/test_training.txt" 2>&1; echo "test_training exit $?: $(tail -1 "$o/test_training.txt")"
echo "=== end ($(date -u +%T), $(( $(date +%s) - start )) s)"
cd $OUT && tar czf c8.tgz c8 && rm -rf c8
