#!/usr/bin/env bash
# Session 26, call 2: on call 1's build, the GPU tests of the other suites (gpu, 01 to 08).
export PATH=/usr/local/cuda/bin:$PATH
start=$(date +%s); o=$OUT/c2; mkdir -p "$o"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,power.limit --format=csv | tee "$o/gpu.txt"; date -u | tee -a "$o/gpu.txt"
ninja -C build >"$o/build.txt" 2>&1; echo "ninja exit $? ($(date -u +%T))"
suites=""; for s in gpu 01_naive 02_smem_tiling 03_mma_sync 04_cp_async 05_split_k 06_fused_step 07_wgmma 08_warp_specialized; do suites="$suites --suite $s"; done
left=$((585 - $(date +%s) + start))
timeout $left meson test -C build --no-rebuild $suites >"$o/tests.txt" 2>&1; echo "meson test exit $?"
grep -E "OK|FAIL|SKIP|TIMEOUT" "$o/tests.txt" | tail -40; tail -8 "$o/tests.txt"; cp build/meson-logs/testlog.txt "$o/" 2>/dev/null
echo "=== end ($(date -u +%T))"
cd $OUT && tar czf c2.tgz c2 && rm -rf c2
