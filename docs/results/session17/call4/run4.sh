#!/usr/bin/env bash
# Session 17, call 4: the on-chip kernel with its column sends by warp (b), and with them the batch
# copied by the copy engine, one bulk copy a row issued by the block itself (c = this checkout),
# against HEAD (a = ab_base). Suites 10 and gpu on c; tools/ab_train.sh a b c at batch 32, hidden
# 128 and 64; compute-sanitizer's four tools on the batch-32 trainer; PyTorch's CUDA-graph step and
# chapter 10 in one run of the comparison harness at batch 32, hidden 128.
export PATH=/usr/local/cuda/bin:$PATH
date -u; nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit,driver_version --format=csv
mkdir -p data/mnist "$OUT/t" "$OUT/s" "$OUT/cmp"
for f in .device/mnist-gz/*.gz; do gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
T=/tmp/trees; rm -rf $T; mkdir -p $T
cp -r ab_base $T/b && patch -d $T/b -p1 -s < exp/sends_by_warp.diff || echo "patch b failed"
timeout 400 tools/device_run.sh "$OUT/t" tests 10_persistent_step gpu 2>&1 | grep -E "^ *[0-9]+/[0-9]+ |^Ok|^Fail|FAIL|rror" | head -30
echo "=== ab $(date -u +%T)"
REPS=5 timeout 300 tools/ab_train.sh /tmp/ab 10_persistent_step ab_base $T/b . 32x128 32x64 2>&1 | tail -7
cp /tmp/ab/ab.csv /tmp/ab/ab_summary.csv "$OUT/"
for v in b c; do
  python3 - /tmp/ab/runs/a_b32_h128_r1 /tmp/ab/runs/${v}_b32_h128_r1 <<'PY'
import csv, glob, sys
def losses(d):
    rows = list(csv.DictReader(open(glob.glob(d + "/*_steps.csv")[0])))
    key = [k for k in rows[0] if "loss" in k][0]
    return [float(r[key]) for r in rows]
a, b = losses(sys.argv[1]), losses(sys.argv[2])
print(f"{sys.argv[2].split('/')[-1]}: {len(b)} steps, max |loss - a's| {max(abs(x - y) for x, y in zip(a, b)):.2e}")
PY
done
echo "=== sanitize $(date -u +%T)"
SANITIZE_ONLY='_train_b32_10_' timeout 200 tools/device_run.sh "$OUT/s" sanitize 2>&1 | grep -E "^ok|^FAIL|sanitize:" | head -10
echo "=== compare $(date -u +%T)"
PYTHONUNBUFFERED=1 timeout 200 python3 bench/compare.py --out "$OUT/cmp" --build-dir build-device \
  --batches 32 --hiddens 128 --implementations 10_persistent_step \
  --pytorch-variants pytorch_cudagraph --data-dir data/mnist 2>&1 | tail -n 8
rm -rf "$OUT/cmp/runs"
tar -czf "$OUT/r4.tar.gz" -C "$OUT" t s cmp && rm -rf "$OUT/t" "$OUT/s" "$OUT/cmp"
echo "=== end $(date -u +%T)"
