#!/usr/bin/env bash
# Session 18, call 9 (review): the four bias-group mutants on the working tree of call 8.
export PATH=/usr/local/cuda/bin:$PATH
mkdir -p data/mnist "$OUT/m"
for f in .device/mnist-gz/*.gz; do [ -f "data/mnist/$(basename "${f%.gz}")" ] || gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
MUTATE_JOBS=4 timeout 560 tools/device_run.sh "$OUT/m" mutate 10_first_bias_group_never_updated \
  10_bias_group_sum_one_row_short 10_bias_group_summed_before_staged 10_bias_group_restaged_before_summed \
  2>&1 | grep -E "caught|missed|error|mutate:" | tail -6
tar -czf "$OUT/m.tar.gz" -C "$OUT" m && rm -rf "$OUT/m"
echo "=== end ($(date -u +%T))"
