#!/usr/bin/env bash
# Session 27, call 6: the comparison grid with the column split in chapter 09 (call 5's build) (chapters 08, 09,
# 10, train_cublas, PyTorch eager and CUDA graph; batch 32 and 256, hidden 128 to 8192) as session
# 22's call 5 ran it, the last epoch of each trainer's epochs CSV gathered into
# steps_last_epoch.csv. Everything in one tarball (the tool returns a few files at most).
export PATH=/usr/local/cuda/bin:$PATH
start=$(date +%s)
o=$OUT/c6
mkdir -p "$o/cmp" data/mnist
ls data/mnist/train-images-idx3-ubyte >/dev/null 2>&1 || for f in .device/mnist-gz/*.gz; do gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version,power.limit --format=csv | tee "$o/gpu.txt"
date -u
[ -f build/build.ninja ] || meson setup build >/dev/null
ninja -C build chapters/train_08_warp_specialized chapters/train_09_swap_ab_split_k chapters/train_10_persistent_step bench/train_cublas >"$o/build.txt" 2>&1; tail -1 "$o/build.txt"
echo "=== grid ($(date -u +%T))"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv >"$o/cmp/gpu.txt"; date -u >>"$o/cmp/gpu.txt"
left=$((595 - $(date +%s) + start))
timeout $left python3 bench/compare.py --out "$o/cmp" --build-dir build \
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
tar -czf "$OUT/c6.tar.gz" -C "$OUT" c6 && rm -rf "$o"
echo "=== end ($(date -u +%T))"
