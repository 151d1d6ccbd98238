#!/usr/bin/env bash
# Session 19, call 8: the comparison grid again (chapters 08, 09, 10, train_cublas, PyTorch eager
# and CUDA graph; batch 32 and 256, hidden 128 to 8192) on main at ff278a1 (chapter 10's weight
# gradients on a 64 x 64 tile), as session 18's call 6 ran it; the last epoch of each trainer's
# epochs CSV gathered into steps_last_epoch.csv.
export PATH=/usr/local/cuda/bin:$PATH
mkdir -p data/mnist "$OUT/cmp"
for f in .device/mnist-gz/*.gz; do gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
[ -f build-device/build.ninja ] || meson setup build-device >/dev/null
ninja -C build-device chapters/train_08_warp_specialized chapters/train_09_swap_ab_split_k \
  chapters/train_10_persistent_step bench/train_cublas | tail -1
git log --oneline -1 2>/dev/null | cut -c1-60
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv >"$OUT/cmp/gpu.txt"; date -u >>"$OUT/cmp/gpu.txt"
timeout 480 python3 bench/compare.py --out "$OUT/cmp" --build-dir build-device \
  --implementations 08_warp_specialized,09_swap_ab_split_k,10_persistent_step,cublas \
  --data-dir data/mnist --pytorch-variants pytorch_eager,pytorch_cudagraph 2>&1 | tee "$OUT/cmp/log.txt" | tail -n 24
python3 - "$OUT/cmp" <<'PY'
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
rm -rf "$OUT/cmp/runs"
tar -czf "$OUT/cmp.tar.gz" -C "$OUT" cmp && rm -rf "$OUT/cmp"
echo "=== end ($(date -u +%T))"
