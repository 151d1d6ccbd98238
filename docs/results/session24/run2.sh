#!/usr/bin/env bash
# Session 24, call 2: build, suites 09 and 10 on the H100, and the weight update against the old path.
export PATH=/usr/local/cuda/bin:$PATH
o=$OUT/c2; mkdir -p "$o" data/mnist
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,power.limit --format=csv | tee "$o/gpu.txt"
date -u | tee -a "$o/gpu.txt"
ls data/mnist/train-images-idx3-ubyte >/dev/null 2>&1 || for f in .device/mnist-gz/*.gz; do gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
flags=(-O3 -std=c++17 --expt-relaxed-constexpr -gencode=arch=compute_90a,code=sm_90a -DCHAPTER_NAME='"09_swap_ab_split_k"' -DCHAPTER_NAMESPACE=swap_ab_split_k)
mkdir -p /tmp/waitall/09_swap_ab_split_k && cp chapters/09_swap_ab_split_k/*.cuh /tmp/waitall/09_swap_ab_split_k/
sed -i 's/warp_specialized::bulk_wait_read<0>();/warp_specialized::bulk_wait_all();/' /tmp/waitall/09_swap_ab_split_k/weight_update.cuh
grep -c bulk_wait_all /tmp/waitall/09_swap_ab_split_k/weight_update.cuh
( nvcc "${flags[@]}" -Ichapters/09_swap_ab_split_k -Ichapters -Icommon common/chapter.cu common/epilogue.cu exp/s24/time_sgd.cu -o /tmp/t_new &&
  nvcc "${flags[@]}" -Iexp/s24/old09/09_swap_ab_split_k -Iexp/s24/old09 -Ichapters -Icommon common/chapter.cu common/epilogue.cu exp/s24/time_sgd.cu -o /tmp/t_old &&
  nvcc "${flags[@]}" -I/tmp/waitall/09_swap_ab_split_k -I/tmp/waitall -Ichapters -Icommon common/chapter.cu common/epilogue.cu exp/s24/time_sgd.cu -o /tmp/t_waitall ) >"$o/build_sgd.txt" 2>&1 &
bp=$!
meson setup build >"$o/setup.txt" 2>&1 || tail "$o/setup.txt"
echo "=== build ($(date -u +%T))"
ninja -C build tests/test_gemm_09_swap_ab_split_k tests/test_gemm_10_persistent_step tests/test_training_09_swap_ab_split_k tests/test_training_10_persistent_step chapters/train_09_swap_ab_split_k chapters/train_10_persistent_step tests/test_persistent_schedule >"$o/build.txt" 2>&1; echo "ninja exit $?"; tail -n 2 "$o/build.txt"
wait $bp; echo "sgd build exit $?"; tail -n 3 "$o/build_sgd.txt"
echo "=== sgd ($(date -u +%T))"
shapes="8192 8192 32  8192 784 32  4096 4096 32  2048 2048 32  2048 784 32  1024 1024 32  8192 8192 64  10 8192 32"
for pass in 1 2; do
  for v in old new waitall; do echo "--- $v pass $pass"; /tmp/t_$v $shapes; done
done 2>&1 | tee "$o/sgd.txt"
nvidia-smi --query-gpu=clocks.sm --format=csv,noheader
echo "=== tests ($(date -u +%T))"
meson test -C build --no-rebuild --suite 09_swap_ab_split_k --suite 10_persistent_step --print-errorlogs >"$o/tests.txt" 2>&1; echo "tests exit $?"
grep -E "^ *[0-9]+/[0-9]+ " "$o/tests.txt"
cp build/meson-logs/testlog.txt "$o/testlog.txt"
grep -E "paths the products took" -A8 "$o/testlog.txt" | head -30
grep -E "newest kernels, batch" "$o/testlog.txt" | cut -c1-400
echo "=== end ($(date -u +%T))"
cd $OUT && tar czf c2.tgz c2
