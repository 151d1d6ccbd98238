#!/usr/bin/env bash
# Session 22, call 5 (the tree of call 4): the split mutants (call 4's run of them collided with its
# Meson build), then the comparison grid (chapters 08, 09, 10, train_cublas, PyTorch eager and CUDA
# graph; batch 32 and 256, hidden 128 to 8192) as session 21's call 5 ran it, the last epoch of
# each trainer's epochs CSV gathered into steps_last_epoch.csv. In $OUT/s5.tar.gz.
export PATH=/usr/local/cuda/bin:$PATH
start=$(date +%s)
o=$OUT/s5
mkdir -p "$o/mut" "$o/cmp" data/mnist
for f in .device/mnist-gz/*.gz; do gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,power.limit --format=csv | tee "$o/gpu.txt"
date -u
[ -f build-device/build.ninja ] || meson setup build-device >/dev/null
ninja -C build-device >"$o/build.txt" 2>&1; tail -1 "$o/build.txt"
echo "=== mutants ($(date -u +%T))"
MUTATE_JOBS=5 timeout 200 tools/device_run.sh "$o/mut" mutate 09_arrival_counter_not_reset \
  09_splits_summed_from_the_last_arrival 09_no_fence_before_arrival 09_never_splits \
  09_splits_below_32_k_tiles >/dev/null 2>&1
grep -E "caught|MISSED|survived|mutate:|error" "$o/mut/log.txt" | cut -c1-250
echo "=== grid ($(date -u +%T))"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv >"$o/cmp/gpu.txt"; date -u >>"$o/cmp/gpu.txt"
left=$((595 - $(date +%s) + start))
timeout $left python3 bench/compare.py --out "$o/cmp" --build-dir build-device \
  --implementations 08_warp_specialized,09_swap_ab_split_k,10_persistent_step,cublas \
  --data-dir data/mnist --pytorch-variants pytorch_eager,pytorch_cudagraph 2>&1 | tee "$o/cmp/log.txt" | tail -n 24
python3 - "$o/cmp" <<'PY'
import csv, glob, os, sys
out = sys.argv[1]
keys = ["chapter", "layers", "batch", "launch", "kernels_per_step", "ms_per_step",
        "floor_ms_per_step", "sm_clock_mhz", "date"]
rows = []
for path in sorted(glob.glob(os.path.join(out, "runs", "*", "b*_h*", "*_epochs.csv"))):
    last = list(csv.DictReader(open(path)))[-1]
    rows.append({k: last[k] for k in keys})
rows.sort(key=lambda r: (r["chapter"], int(r["batch"]), int(r["layers"].split("-")[1])))
with open(os.path.join(out, "steps_last_epoch.csv"), "w", newline="") as f:
    w = csv.DictWriter(f, keys)
    w.writeheader()
    w.writerows(rows)
print(f"steps_last_epoch.csv: {len(rows)} rows")
PY
rm -rf "$o/cmp/runs"
tar -czf "$OUT/s5.tar.gz" -C "$OUT" s5
echo "=== end ($(date -u +%T))"
