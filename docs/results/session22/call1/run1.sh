#!/usr/bin/env bash
# Session 22, call 1: the weight gradients (A transposed, K = batch) on chapter 09's swap-AB kernel
# (working tree). Times every trainer weight gradient at batch 32 and 256 with the rule, with the
# batch tile forced to 64, 128 and 256, on chapter 08's path (as main at eca01a2) and cuBLAS
# (tools/tile_sweep's timer), two passes in opposite orders; suites 09, 10 and gpu; then
# tools/ab_train.sh against eca01a2 (ab_base/). Everything in $OUT/s1.tar.gz.
export PATH=/usr/local/cuda/bin:$PATH
start=$(date +%s)
o=$OUT/s1
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
  grep -n "FORCED\|kOpA == Op::N && p.m" "$dir/chapters/09_swap_ab_split_k/dispatch.cuh" >"$o/patch_$1.txt"
  (cd "$dir" && source tools/tile_sweep/build.sh &&
    build_gemm_timer "$dir/chapters/09_swap_ab_split_k" 09_swap_ab_split_k swap_ab_split_k "$dir/time_gemm" \
      >"$o/build_$1.txt" 2>&1) || echo "build $1 failed"
}
force='s|^(int batch_tile_for\(const GemmProblem& p, Resident&& resident\) \{)$|\1\n  if (kOpA == Op::T) return FORCED;  // FORCED|'
variant rule 's|^$||' &
variant t64 "$force; s|FORCED;|64;|" &
variant t128 "$force; s|FORCED;|128;|" &
variant t256 "$force; s|FORCED;|256;|" &
variant ch08 's|return \(kOpA == Op::N \? p.m : p.k\) <= kMaxBatch &&|return kOpA == Op::N \&\& p.m <= kMaxBatch \&\&|' &
(source tools/tile_sweep/build.sh && build_gemm_timer "$root/bench/cublas" cublas cublas /tmp/v_cublas -lcublas >"$o/build_cublas.txt" 2>&1) &
(meson setup build-device >/dev/null 2>&1; ninja -C build-device >"$o/build_meson.txt" 2>&1 || echo "meson build failed") &
wait
echo "=== built ($(date -u +%T))"
cat "$o"/patch_*.txt
shapes=()
for b in 32 256; do
  for h in 128 256 512 1024 2048 4096 8192; do shapes+=($h 784 $b TN $h $h $b TN); done
done
shapes+=(200 136 64 TN 4096 4096 4096 TN)
for pass in 1 2; do
  order="rule t64 t128 t256 ch08 cublas"
  [ $pass = 2 ] && order="cublas ch08 t256 t128 t64 rule"
  for v in $order; do
    bin=/tmp/w_$v/time_gemm; [ $v = cublas ] && bin=/tmp/v_cublas
    echo "== $v pass $pass clock $(nvidia-smi --query-gpu=clocks.sm --format=csv,noheader)"
    $bin "${shapes[@]}" 2>&1
  done
done >"$o/times.txt"
echo "WRONG lines: $(grep -c WRONG "$o/times.txt")"
echo "=== tests ($(date -u +%T))"
timeout 200 meson test -C build-device --print-errorlogs --suite 09_swap_ab_split_k --suite 10_persistent_step --suite gpu >"$o/tests.txt" 2>&1
grep -E "^ *[0-9]+/[0-9]+ |^Ok|^Fail|Timeout" "$o/tests.txt" | tail -20
cp build-device/meson-logs/testlog.txt "$o/testlog.txt"
grep -E "FAIL" "$o/testlog.txt" | head -10
tar -czf "$OUT/s1.tar.gz" -C "$OUT" s1
left=$((585 - $(date +%s) + start))
echo "=== ab, $left s left ($(date -u +%T))"
REPS=3 timeout $left tools/ab_train.sh "$o/ab" 09_swap_ab_split_k ab_base . 256x512 256x1024 256x2048 256x4096 256x8192 32x1024 32x8192 2>&1 | tail -n 10
rm -rf "$o"/ab/build_* "$o"/ab/runs
tar -czf "$OUT/s1.tar.gz" -C "$OUT" s1
echo "=== end ($(date -u +%T))"
