#!/usr/bin/env bash
# Session 21, call 2: chapter 09's batch tile chosen per product (working tree). Times every
# batch-256 trainer product with the committed rule, with the batch tile forced to 32 and to 64,
# on chapter 08's path, and cuBLAS (tools/tile_sweep's timer), two passes in opposite orders; then
# suites 09_swap_ab_split_k, 10_persistent_step and gpu. Everything in $OUT/s2.tar.gz.
export PATH=/usr/local/cuda/bin:$PATH
o=$OUT/s2
mkdir -p "$o" data/mnist
for f in .device/mnist-gz/*.gz; do gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,power.limit --format=csv | tee "$o/gpu.txt"
date -u
root=$PWD
variant() {  # name, sed program for dispatch.cuh
  local dir=/tmp/w_$1
  rm -rf "$dir"; mkdir -p "$dir"
  cp -r chapters common tools bench "$dir/"
  sed -i -E "$2" "$dir/chapters/09_swap_ab_split_k/dispatch.cuh"
  grep -n "FORCED\|p.m <= 128 &&" "$dir/chapters/09_swap_ab_split_k/dispatch.cuh" >"$o/patch_$1.txt"
  (cd "$dir" && source tools/tile_sweep/build.sh &&
    build_gemm_timer "$dir/chapters/09_swap_ab_split_k" 09_swap_ab_split_k swap_ab_split_k "$dir/time_gemm" \
      >"$o/build_$1.txt" 2>&1) || echo "build $1 failed"
}
force='s|^(int batch_tile_for\(const GemmProblem& p, Resident&& resident\) \{)$|\1\n  if (p.m > 128) return FORCED;  // FORCED|'
variant rule 's|^$||' &
variant t32 "$force; s|FORCED;|32;|" &
variant t64 "$force; s|FORCED;|64;|" &
variant ch08 's|return kOpA == Op::N && p.m <= kMaxBatch &&|return kOpA == Op::N \&\& p.m <= 128 \&\&|' &
[ -x /tmp/v_cublas ] || (source tools/tile_sweep/build.sh && build_gemm_timer "$root/bench/cublas" cublas cublas /tmp/v_cublas -lcublas >"$o/build_cublas.txt" 2>&1) &
(meson setup build-device >/dev/null 2>&1; ninja -C build-device >"$o/build_meson.txt" 2>&1 || echo "meson build failed") &
wait
echo "=== built ($(date -u +%T))"
cat "$o"/patch_*.txt
shapes=()
for h in 128 256 512 1024 2048 4096 8192; do
  shapes+=(256 $h 784 NT 256 $h $h NT 256 10 $h NT 256 $h $h NN)
done
shapes+=(96 1024 784 NT 96 1024 1024 NT 250 1000 784 NT 200 4168 200 NT 200 8456 136 NN)
for pass in 1 2; do
  order="rule t32 t64 ch08 cublas"
  [ $pass = 2 ] && order="cublas ch08 t64 t32 rule"
  for v in $order; do
    bin=/tmp/w_$v/time_gemm; [ $v = cublas ] && bin=/tmp/v_cublas
    echo "== $v pass $pass clock $(nvidia-smi --query-gpu=clocks.sm --format=csv,noheader)"
    $bin "${shapes[@]}" 2>&1
  done
done >"$o/times.txt"
echo "WRONG lines: $(grep -c WRONG "$o/times.txt")"
echo "=== tests ($(date -u +%T))"
timeout 400 meson test -C build-device --print-errorlogs --suite 09_swap_ab_split_k --suite 10_persistent_step --suite gpu >"$o/tests.txt" 2>&1
grep -E "^ *[0-9]+/[0-9]+ |^Ok|^Fail|Timeout" "$o/tests.txt" | tail -20
cp build-device/meson-logs/testlog.txt "$o/testlog.txt"
grep -E "batch tile|FAIL" "$o/testlog.txt" | head -20
tar -czf "$OUT/s2.tar.gz" -C "$OUT" s2
echo "=== end ($(date -u +%T))"
