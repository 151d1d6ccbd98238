#!/usr/bin/env bash
# Session 16, call 6: compute-sanitizer's four tools on chapter 10's trainer at batch 96 (the
# step-by-step kernel) and, new in tools/sanitize.sh, at batch 32 (the on-chip kernel, which takes
# batches up to 32): call 5's pattern matched the GEMM test only, and batch 96 never reaches it.
export PATH=/usr/local/cuda/bin:$PATH
mkdir -p "$OUT/s"
SANITIZE_ONLY='_train_(b32_)?10_' timeout 500 tools/device_run.sh "$OUT/s" sanitize 2>&1 | grep -E "^===|^ok|^FAIL|sanitize:" | head -20
echo "=== end ($(date -u +%T))"
