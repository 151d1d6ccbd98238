#!/usr/bin/env bash
# Session 27, call 7 (issue 13): the whole build; Nsight Compute (--set full) on the forward 4096^3
# product of chapter 04 as committed (two blocks of 8 warps per SM) and of session 25's variant
# 04_bm256 (one block of 16 warps, docs/results/session25/variants/04_bm256.diff, in
# .device/v04_bm256/), for the stall reasons behind chapter 04's miss; compute-sanitizer's four
# tools on chapter 02 (changed in session 26).
export PATH=/usr/local/cuda/bin:$PATH
start=$(date +%s); o=$OUT/c7; mkdir -p "$o/ncu" data/mnist
ls data/mnist/train-images-idx3-ubyte >/dev/null 2>&1 || for f in .device/mnist-gz/*.gz; do gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,power.limit --format=csv | tee "$o/gpu.txt"; date -u | tee -a "$o/gpu.txt"
source tools/tile_sweep/build.sh
( build_gemm_timer chapters/04_cp_async 04 cp_async /tmp/t04 >"$o/build_t04.txt" 2>&1
  build_gemm_timer .device/v04_bm256 04_bm256 cp_async /tmp/t04_bm256 >"$o/build_t04_bm256.txt" 2>&1 ) &
[ -f build/build.ninja ] || meson setup build >/dev/null
ninja -C build >"$o/build.txt" 2>&1; echo "ninja exit $? ($(date -u +%T))"
wait
for name in 04 04_bm256; do
  timeout 90 ncu --clock-control none --kernel-name regex:gemm_kernel --launch-count 1 --set full \
    -o "$o/ncu/$name" /tmp/t$name 4096 4096 4096 NT >"$o/ncu/$name.stdout" 2>&1; echo "ncu $name rc $?"
  ncu --import "$o/ncu/$name.ncu-rep" --print-summary none >"$o/ncu/$name.txt" 2>&1
  ncu --import "$o/ncu/$name.ncu-rep" --page raw --csv >"$o/ncu/$name.raw.csv" 2>&1
done
python3 tools/ncu_summary.py "$o/ncu" 04 04_bm256 | tee "$o/ncu_summary.txt"
rm -f "$o"/ncu/*.ncu-rep
echo "=== sanitizer 02 ($(date -u +%T))"
left=$((585 - $(date +%s) + start))
SANITIZE_ONLY='02_smem_tiling' timeout $left tools/sanitize.sh build "$o/sanitizer" >"$o/sanitize.txt" 2>&1
echo "sanitize exit $?"; tail -10 "$o/sanitize.txt"
echo "=== end ($(date -u +%T), $(( $(date +%s) - start )) s)"
cd $OUT && tar czf c7.tgz c7 && rm -rf c7
