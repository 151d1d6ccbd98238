#!/usr/bin/env bash
# Session 22, call 3: chapter 09's split rule (working tree: K split only where a product's tiles are
# fewer than the SMs, into ranges of at least 8 K tiles) against the rule of call 2 (as many blocks
# as are resident, ranges of at least 2: "old"), the new rule with ranges of at least 4 and 16,
# and cuBLAS, every trainer product at batch 32 and 256, two passes in opposite orders; suites 09,
# 10 and gpu; tools/ab_train.sh against eca01a2 (ab_base/). Everything in $OUT/s3.tar.gz.
export PATH=/usr/local/cuda/bin:$PATH
start=$(date +%s)
o=$OUT/s3
mkdir -p "$o" data/mnist
for f in .device/mnist-gz/*.gz; do gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,power.limit --format=csv | tee "$o/gpu.txt"
date -u
root=$PWD
variant() {  # name, sed program for dispatch.cuh, sed program for gemm.cuh
  local dir=/tmp/w_$1
  rm -rf "$dir"; mkdir -p "$dir"
  cp -r chapters common tools bench "$dir/"
  sed -i -E "$2" "$dir/chapters/09_swap_ab_split_k/dispatch.cuh"
  sed -i -E "$3" "$dir/chapters/09_swap_ab_split_k/gemm.cuh"
  grep -n "kMinKTilesPerSplit = " "$dir/chapters/09_swap_ab_split_k/dispatch.cuh" >"$o/patch_$1.txt"
  grep -n "plan_split(p, B" "$dir/chapters/09_swap_ab_split_k/gemm.cuh" >>"$o/patch_$1.txt"
  (cd "$dir" && source tools/tile_sweep/build.sh &&
    build_gemm_timer "$dir/chapters/09_swap_ab_split_k" 09_swap_ab_split_k swap_ab_split_k "$dir/time_gemm" \
      >"$o/build_$1.txt" 2>&1) || echo "build $1 failed"
}
variant sm8 's|^$||' 's|^$||' &
variant sm4 's|kMinKTilesPerSplit = 8;|kMinKTilesPerSplit = 4;|' 's|^$||' &
variant sm16 's|kMinKTilesPerSplit = 8;|kMinKTilesPerSplit = 16;|' 's|^$||' &
variant old 's|kMinKTilesPerSplit = 8;|kMinKTilesPerSplit = 2;|' 's|resident / B::kBlocksPerSm\);|resident);|' &
(source tools/tile_sweep/build.sh && build_gemm_timer "$root/bench/cublas" cublas cublas /tmp/v_cublas -lcublas >"$o/build_cublas.txt" 2>&1) &
(meson setup build-device >/dev/null 2>&1; ninja -C build-device >"$o/build_meson.txt" 2>&1 || echo "meson build failed") &
wait
echo "=== built ($(date -u +%T))"
cat "$o"/patch_*.txt
shapes=()
for b in 32 256; do
  for h in 128 256 512 1024 2048 4096 8192; do
    shapes+=($b $h 784 NT $b $h $h NT $b 10 $h NT $b $h $h NN $h 784 $b TN $h $h $b TN)
  done
done
for pass in 1 2; do
  order="sm8 old sm4 sm16 cublas"
  [ $pass = 2 ] && order="cublas sm16 sm4 old sm8"
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
tar -czf "$OUT/s3.tar.gz" -C "$OUT" s3
left=$((585 - $(date +%s) + start))
echo "=== ab, $left s left ($(date -u +%T))"
REPS=3 timeout $left tools/ab_train.sh "$o/ab" 09_swap_ab_split_k ab_base . 256x512 256x1024 256x2048 256x4096 256x8192 32x1024 32x8192 2>&1 | tail -n 10
rm -rf "$o"/ab/build_* "$o"/ab/runs
tar -czf "$OUT/s3.tar.gz" -C "$OUT" s3
echo "=== end ($(date -u +%T))"
