#!/usr/bin/env bash
# Session 15, call 8: the committed chapter 08 under compute-sanitizer (its GEMM test's small shapes,
# four tools), and the GEMM benchmarks of chapters 08 and 09 (09 hands its large products to 08).
export PATH=/usr/local/cuda/bin:$PATH
mkdir -p "$OUT/s" "$OUT/b"
tools/device_run.sh "$OUT/b" bench 08_warp_specialized 09_swap_ab_split_k 2>&1 | grep -E "^===|square|rror" | head -20
SANITIZE_ONLY='^[a-z]+_08_warp_specialized$' timeout 300 tools/sanitize.sh build-device "$OUT/s/sanitizer" 2>&1 | tail -8
tar -czf "$OUT/s.tar.gz" -C "$OUT" s && rm -rf "$OUT/s"
echo "=== end ($(date -u +%T))"
