#!/usr/bin/env bash
# Session 27, call 8: on call 7's build, the GPU tests of suites gpu and 01 to 08 (the GEMM test gained two shapes this session; suites 09 and 10 passed in call 3).
export PATH=/usr/local/cuda/bin:$PATH
start=$(date +%s); o=$OUT/c8; mkdir -p "$o"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,power.limit --format=csv | tee "$o/gpu.txt"; date -u | tee -a "$o/gpu.txt"
ninja -C build >"$o/build.txt" 2>&1; echo "ninja exit $? ($(date -u +%T))"
suites=""; for s in gpu 01_naive 02_smem_tiling 03_mma_sync 04_cp_async 05_split_k 06_fused_step 07_wgmma 08_warp_specialized; do suites="$suites --suite $s"; done
left=$((585 - $(date +%s) + start))
timeout $left meson test -C build --no-rebuild $suites >"$o/tests.txt" 2>&1; echo "meson test exit $?"
grep -E "OK|FAIL|SKIP|TIMEOUT" "$o/tests.txt" | tail -40; tail -8 "$o/tests.txt"; cp build/meson-logs/testlog.txt "$o/" 2>/dev/null
echo "=== end ($(date -u +%T))"
cd $OUT && tar czf c8.tgz c8 && rm -rf c8
