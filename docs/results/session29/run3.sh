#!/usr/bin/env bash
# Session 29, call 3 (issue 16), on this session's final tree (the commit that adds this line; the
# code as 7f0928f's but for comments and the GEMM test's new shape 72 x 120 x 136, three K tiles
# in the weight update): the whole build and every test suite (gpu, 01 to 10).
export PATH=/usr/local/cuda/bin:$PATH
start=$(date +%s); o=$OUT/c3; mkdir -p "$o" data/mnist
ls data/mnist/train-images-idx3-ubyte >/dev/null 2>&1 || for f in .device/mnist-gz/*.gz; do gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,power.limit --format=csv | tee "$o/gpu.txt"; date -u | tee -a "$o/gpu.txt"
git log --oneline -1 | cut -c1-80 | tee -a "$o/gpu.txt"
[ -f build/build.ninja ] || meson setup build >/dev/null
ninja -C build >"$o/build.txt" 2>&1; echo "ninja exit $? ($(date -u +%T))"
suites=""; for s in gpu 01_naive 02_smem_tiling 03_mma_sync 04_cp_async 05_split_k 06_fused_step 07_wgmma 08_warp_specialized 09_swap_ab_split_k 10_persistent_step; do suites="$suites --suite $s"; done
left=$((590 - $(date +%s) + start))
timeout $left meson test -C build --no-rebuild $suites >"$o/tests.txt" 2>&1; echo "meson test exit $?"
grep -E "^ *[0-9]+/[0-9]+ " "$o/tests.txt" | grep -vE " OK " ; tail -8 "$o/tests.txt"; cp build/meson-logs/testlog.txt "$o/" 2>/dev/null
echo "=== end ($(date -u +%T), $(( $(date +%s) - start )) s)"
cd $OUT && tar czf c3.tgz c3 && rm -rf c3
