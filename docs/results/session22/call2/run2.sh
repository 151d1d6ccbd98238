#!/usr/bin/env bash
# Session 22, call 2: the weight gradients on chapter 09's kernel only where their tiles with a
# batch tile of at most 128 all run at once (working tree). Times every trainer product at batch
# 32 and 256 with the rule, with K split only into ranges of at least 4 K tiles (minsplit4) and
# never split (nosplit), and cuBLAS, two passes in opposite orders; suites 09, 10 and gpu; the
# new mutants. Everything in $OUT/s2.tar.gz.
export PATH=/usr/local/cuda/bin:$PATH
start=$(date +%s)
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
  grep -n "kMinKTilesPerSplit = \|kMaxSplits = " "$dir/chapters/09_swap_ab_split_k/dispatch.cuh" >"$o/patch_$1.txt"
  (cd "$dir" && source tools/tile_sweep/build.sh &&
    build_gemm_timer "$dir/chapters/09_swap_ab_split_k" 09_swap_ab_split_k swap_ab_split_k "$dir/time_gemm" \
      >"$o/build_$1.txt" 2>&1) || echo "build $1 failed"
}
variant rule 's|^$||' &
variant minsplit4 's|kMinKTilesPerSplit = 2;|kMinKTilesPerSplit = 4;|' &
variant nosplit 's|kMaxSplits = 16;|kMaxSplits = 1;|' &
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
  order="rule minsplit4 nosplit cublas"
  [ $pass = 2 ] && order="cublas nosplit minsplit4 rule"
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
grep -E "FAIL|paths the products took" -A12 "$o/testlog.txt" | grep -v "^ *OK" | head -40
tar -czf "$OUT/s2.tar.gz" -C "$OUT" s2
left=$((585 - $(date +%s) + start))
echo "=== mutants, $left s left ($(date -u +%T))"
MUTATE_JOBS=4 timeout $left tools/device_run.sh "$o/mut" mutate 09_swap_ab_never_taken 09_weight_gradients_not_taken \
  09_weight_gradients_on_the_batch_tile_of_256 09_weight_gradient_rows_taken_as_k 2>&1 | grep -E "^===|caught|MISSED|survived|error|passed|failed" | tail -10
tar -czf "$OUT/s2.tar.gz" -C "$OUT" s2
echo "=== end ($(date -u +%T))"
