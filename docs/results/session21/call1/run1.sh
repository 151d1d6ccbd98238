#!/usr/bin/env bash
# Session 21, call 1: chapter 09 with several batch tiles per product (working tree). Times every
# batch-256 trainer product with the batch tile forced to 64, 128 and 256, on chapter 08's path,
# and cuBLAS (tools/tile_sweep's timer: sampled check against float64, CUDA-graph median); then
# the GEMM test of chapter 09 on the committed rule. Everything in $OUT/s1.tar.gz.
export PATH=/usr/local/cuda/bin:$PATH
o=$OUT/s1
mkdir -p "$o" data/mnist
for f in .device/mnist-gz/*.gz; do gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,power.limit --format=csv | tee "$o/gpu.txt"
date -u
root=$PWD
variant() {  # name, sed program for dispatch.cuh
  local dir=/tmp/v_$1
  rm -rf "$dir"; mkdir -p "$dir"
  cp -r chapters common tools bench "$dir/"
  sed -i -E "$2" "$dir/chapters/09_swap_ab_split_k/dispatch.cuh"
  grep -n "FORCED\|p.m <= 128 &&\|<< 0;" "$dir/chapters/09_swap_ab_split_k/dispatch.cuh" >"$o/patch_$1.txt"
  (cd "$dir" && source tools/tile_sweep/build.sh &&
    build_gemm_timer "$dir/chapters/09_swap_ab_split_k" 09_swap_ab_split_k swap_ab_split_k "$dir/time_gemm" -Xptxas -v \
      >"$o/build_$1.txt" 2>&1) || echo "build $1 failed"
}
force='s|^(inline int batch_tile_for\(const GemmProblem& p\) \{)$|\1\n  if (p.m > 128) return FORCED;  // FORCED|'
weights='s|(kMinWeightsAtBatchTile256 = int64_t\(1\)) << 21;|\1 << 0;|'
variant t64 "$force; s|FORCED;|64;|; $weights" &
variant t128 "$force; s|FORCED;|128;|; $weights" &
variant t256 "$force; s|FORCED;|256;|; $weights" &
variant ch08 's|return kOpA == Op::N && p.m <= kMaxBatch &&|return kOpA == Op::N \&\& p.m <= 128 \&\&|' &
(source tools/tile_sweep/build.sh && build_gemm_timer "$root/bench/cublas" cublas cublas /tmp/v_cublas -lcublas >"$o/build_cublas.txt" 2>&1) || echo "cublas build failed" &
(meson setup build-device >/dev/null 2>&1; ninja -C build-device >"$o/build_meson.txt" 2>&1 || echo "meson build failed") &
wait
echo "=== built ($(date -u +%T))"
shapes=()
for h in 128 256 512 1024 2048 4096 8192; do
  shapes+=(256 $h 784 NT 256 $h $h NT 256 10 $h NT 256 $h $h NN)
done
shapes+=(250 1000 784 NT 200 136 64 NT 130 8200 264 NN 250 10 128 NT 255 777 1000 NN)
for pass in 1 2; do
  order="t64 t128 t256 ch08 cublas"
  [ $pass = 2 ] && order="cublas ch08 t256 t128 t64"
  for v in $order; do
    bin=/tmp/v_$v/time_gemm; [ $v = cublas ] && bin=/tmp/v_cublas
    echo "== $v pass $pass clock $(nvidia-smi --query-gpu=clocks.sm --format=csv,noheader)"
    $bin "${shapes[@]}" 2>&1
  done
done >"$o/times.txt"
grep -c WRONG "$o/times.txt"
echo "=== test ($(date -u +%T))"
timeout 240 meson test -C build-device test_gemm_09_swap_ab_split_k --print-errorlogs >"$o/test.txt" 2>&1
tail -5 "$o/test.txt"
tar -czf "$OUT/s1.tar.gz" -C "$OUT" s1
echo "=== end ($(date -u +%T))"
