#!/usr/bin/env bash
# Session 27, call 9: compute-sanitizer's four tools on the GEMM tests of the chapters not yet run
# under it since the GEMM test gained 130 x 4100 x 8 and 129 x 4230 x 8 (small shapes, so in the
# sanitizer's set): 01, 03 to 08 and 10 (02 and 09 ran in calls 7 and 2). Their trainers did not
# change and are not rerun.
export PATH=/usr/local/cuda/bin:$PATH
start=$(date +%s); o=$OUT/c9; mkdir -p "$o"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,power.limit --format=csv | tee "$o/gpu.txt"; date -u | tee -a "$o/gpu.txt"
[ -f build/build.ninja ] || meson setup build >/dev/null
targets=""; for c in 01_naive 03_mma_sync 04_cp_async 05_split_k 06_fused_step 07_wgmma 08_warp_specialized 10_persistent_step; do targets="$targets tests/test_gemm_$c"; done
ninja -C build $targets >"$o/build.txt" 2>&1; echo "ninja exit $? ($(date -u +%T))"
left=$((560 - $(date +%s) + start))
SANITIZE_ONLY='^[a-z]+_(01|03|04|05|06|07|08|10)_' timeout $left tools/sanitize.sh build "$o/sanitizer" >"$o/sanitize.txt" 2>&1
echo "sanitize exit $?"; grep -E "^(ok|FAIL|fail)" "$o/sanitize.txt" | head -40; tail -2 "$o/sanitize.txt"
echo "=== end ($(date -u +%T), $(( $(date +%s) - start )) s)"
cd $OUT && tar czf c9.tgz c9 && rm -rf c9
