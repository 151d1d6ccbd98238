#!/usr/bin/env bash
# Session 19, call 9: review, tiles_of(rows, cols) serving most_tiles too (one formula): suites 10
# and gpu on the working tree,.
export PATH=/usr/local/cuda/bin:$PATH
o=$OUT/s9
mkdir -p "$o/m"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,power.limit --format=csv | tee "$o/gpu.txt"
timeout 330 tools/device_run.sh "$o/m" tests 10_persistent_step gpu 2>&1 | grep -E "^===|^ *[0-9]+/[0-9]+ |^Ok|^Fail|error" | tail -12
tar -czf "$OUT/s9.tar.gz" -C "$OUT" s9 && rm -rf "$o"
