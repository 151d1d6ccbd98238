#!/usr/bin/env bash
# Session 16, call 7: which kernels chapter 10's trainer launches at batch 32, hidden 64 (call 6's
# new sanitizer run) and at batch 96: Nsight Compute lists every launch with its duration.
export PATH=/usr/local/cuda/bin:$PATH
mkdir -p data/mnist
for f in .device/mnist-gz/*.gz; do gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
[ -f build-device/build.ninja ] || meson setup build-device >/dev/null
ninja -C build-device chapters/train_10_persistent_step | tail -1
for batch in 32 96; do
  echo "== batch $batch"
  ncu --metrics gpu__time_duration.sum build-device/chapters/train_10_persistent_step --hidden 64 \
    --batch $batch --epochs 1 --max-steps 3 --out-dir /tmp/ncu_runs 2>&1 | grep -E '^  [A-Za-z_].*Context' | sed -E 's/ \(.*//; s/\(.*//' | sort | uniq -c
done
echo "=== end ($(date -u +%T))"
