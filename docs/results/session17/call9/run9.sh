#!/usr/bin/env bash
# Session 17, call 9: FirstLayerMasters' place() (the masters' row and pixel found once, update()
# without the weights it used only to test them), this checkout against HEAD (ab_base): suites 10
# and gpu; the first layer's three mutants; tools/ab_train.sh at batch 32, hidden 128 and 64.
export PATH=/usr/local/cuda/bin:$PATH
mkdir -p data/mnist "$OUT/m"
for f in .device/mnist-gz/*.gz; do gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
MUTATE_JOBS=3 timeout 500 tools/device_run.sh "$OUT/m" tests 10_persistent_step gpu -- mutate \
  10_on_chip_first_layer_odd_rows_fp16_stale 10_on_chip_first_layer_masters_of_the_next_pixel \
  10_on_chip_masters_not_stored 2>&1 | grep -E "^===|^ *[0-9]+/[0-9]+ |^Ok|^Fail|caught|missed|error|mutate:" | tail -16
REPS=3 timeout 200 tools/ab_train.sh /tmp/ab 10_persistent_step ab_base . 32x128 32x64 2>&1 | tail -5
 cp /tmp/ab/ab_summary.csv /tmp/ab/ab.csv "$OUT/" 2>/dev/null
echo "=== end ($(date -u +%T))"
