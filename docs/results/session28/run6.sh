#!/usr/bin/env bash
# Session 28, call 6 (issue 16), on call 5's machine and build: chapter 08's whole GEMM benchmark
# (the results CSV) and chapter 09's again with cuBLAS first; Nsight Compute (--set full) on the two
# products the doc still has to explain, chapter 09 against cuBLAS: 8192 x 784 x 256 TN (the first
# layer's weight gradient at batch 256, hidden 8192, on chapter 08's kernel) and 256 x 4096 x 4096
# NT (the column split); compute-sanitizer's four tools on the GEMM tests of 08, 09, 10 and chapter
# 09's trainer.
export PATH=/usr/local/cuda/bin:$PATH
start=$(date +%s); o=$OUT/c6; mkdir -p "$o/ncu"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,power.limit --format=csv | tee "$o/gpu.txt"; date -u | tee -a "$o/gpu.txt"
build/bench/bench_gemm_08_warp_specialized --csv "$o/gemm_08_warp_specialized.csv" >"$o/bench_08.txt" 2>&1; echo "bench 08 exit $? ($(date -u +%T))"
build/bench/bench_gemm_09_swap_ab_split_k --cublas-first --csv "$o/gemm_09_cublas_first.csv" >"$o/bench_09_cublas_first.txt" 2>&1; echo "bench 09 exit $? ($(date -u +%T))"
source tools/tile_sweep/build.sh
build_gemm_timer chapters/09_swap_ab_split_k 09_swap_ab_split_k swap_ab_split_k /tmp/t09 >/dev/null 2>&1 &
build_gemm_timer bench/cublas cublas cublas /tmp/tcublas -lcublas >/dev/null 2>&1 &
wait
for shape in "8192 784 256 TN" "256 4096 4096 NT"; do
  tag=$(echo $shape | tr ' ' _)
  timeout 90 ncu --clock-control none --kernel-name regex:'gemm_kernel|weight_update' --launch-count 1 --set full -o "$o/ncu/09_$tag" /tmp/t09 $shape >"$o/ncu/09_$tag.stdout" 2>&1; echo "ncu 09 $tag rc $?"
  timeout 90 ncu --clock-control none --kernel-name regex:'nvjet|sm90|xmma|cutlass|gemm' --launch-count 1 --set full -o "$o/ncu/cublas_$tag" /tmp/tcublas $shape >"$o/ncu/cublas_$tag.stdout" 2>&1; echo "ncu cublas $tag rc $?"
done
for f in $o/ncu/*.ncu-rep; do ncu --import "$f" --page details >"${f%.ncu-rep}.txt" 2>&1; done
echo "ncu done ($(date -u +%T))"
SANITIZE_ONLY='^[a-z]+_(08_warp_specialized|09_swap_ab_split_k|10_persistent_step|train_09_swap_ab_split_k|train_b32_09_swap_ab_split_k)$' SANITIZE_TIMEOUT=240 \
  timeout 300 tools/sanitize.sh build "$o/sanitizer" >"$o/sanitizer.txt" 2>&1; echo "sanitize exit $?"; tail -20 "$o/sanitizer.txt"
rm -f "$o"/sanitizer/*.csv; find "$o/sanitizer" -name "*epochs.csv" -delete 2>/dev/null
echo "=== end ($(date -u +%T), $(( $(date +%s) - start )) s)"
cd $OUT && tar czf c6.tgz c6 && rm -rf c6
