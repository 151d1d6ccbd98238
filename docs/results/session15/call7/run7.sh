#!/usr/bin/env bash
# Session 15, call 7: the committed chapter 08 (stored result through TMA). The square products of
# chapters 07 and 08 against cuBLAS (tools/device_run.sh squares: 3 processes each order), then
# the chapter 08 mutants, old and new.
export PATH=/usr/local/cuda/bin:$PATH
mkdir -p "$OUT/q" "$OUT/m"
tools/device_run.sh "$OUT/q" squares 07_wgmma 08_warp_specialized 2>&1 | grep -E "^===|rror|FAIL" | head -20
mkdir -p /tmp/sq && tar -xzf "$OUT/q/results.tar.gz" -C /tmp/sq && python3 tools/squares_summary.py /tmp/sq/squares_*.csv | grep -E "^\| square|^0"
MUTATE_JOBS=4 timeout 420 tools/device_run.sh "$OUT/m" mutate 08_staging_unswizzled 08_store_started_before_all_wrote \
  08_staging_rewritten_before_read 08_no_proxy_fence_before_store 08_empty_barrier_half_the_arrivals \
  tma_mn_major_boxes_overlap 08_warp_specialized_never_taken 2>&1 | grep -E "caught|missed|MISSED|error" | head -20
echo "=== end ($(date -u +%T))"
