#!/usr/bin/env bash
# Session 16, call 5: mutants of the changed code (the on-chip bias through bias_sgd_column, with the
# dZ stride and with the output bias frozen; chapter 08's staging swizzle; chapter 07's MN-major
# boxes, now beside the shared encoder), then compute-sanitizer's four tools on chapter 10.
export PATH=/usr/local/cuda/bin:$PATH
mkdir -p "$OUT/m" "$OUT/s"
timeout 330 tools/device_run.sh "$OUT/m" mutate 10_on_chip_bias_reads_dz_with_its_width 10_on_chip_output_bias_frozen 08_staging_unswizzled tma_mn_major_boxes_overlap 2>&1 | grep -E "^===|caught|MISSED|missed|error" | head -20
SANITIZE_ONLY='^[a-z]+_10_persistent_step$' timeout 230 tools/sanitize.sh build-device "$OUT/s/sanitizer" 2>&1 | tail -8
tar -czf "$OUT/s.tar.gz" -C "$OUT" s && rm -rf "$OUT/s"
echo "=== end ($(date -u +%T))"
