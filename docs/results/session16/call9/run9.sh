#!/usr/bin/env bash
# Session 16, call 9: the one-warp softmax against HEAD (ab_base: git archive of HEAD), chapter 10's
# trainer at batch 32, hidden 128 and 64 (the on-chip kernel), 5 repetitions alternating; the two
# trees' step losses compared bit for bit; then PyTorch's CUDA-graph step and chapter 10 in one
# run of the comparison harness at batch 32, hidden 128.
export PATH=/usr/local/cuda/bin:$PATH
mkdir -p data/mnist "$OUT/ab" "$OUT/cmp"
for f in .device/mnist-gz/*.gz; do gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
REPS=5 timeout 300 tools/ab_train.sh "$OUT/ab" 10_persistent_step ab_base . 32x128 32x64 2>&1 | tail -8
for h in 128 64; do
  a=$(ls "$OUT"/ab/runs/a_b32_h${h}_r1/*_steps.csv) b=$(ls "$OUT"/ab/runs/b_b32_h${h}_r1/*_steps.csv)
  python3 - "$a" "$b" <<'PY'
import csv, sys
def losses(p):
    rows = list(csv.DictReader(open(p)))
    key = [k for k in rows[0] if "loss" in k][0]
    return key, [r[key] for r in rows]
ka, la = losses(sys.argv[1]); kb, lb = losses(sys.argv[2])
same = sum(x == y for x, y in zip(la, lb))
print(f"{sys.argv[1].split('/')[-2]} vs {sys.argv[2].split('/')[-2]}: column {ka}, {same} of {len(la)} step losses identical as printed")
PY
done
[ -f build-device/build.ninja ] || meson setup build-device >/dev/null
ninja -C build-device chapters/train_10_persistent_step | tail -1
PYTHONUNBUFFERED=1 timeout 200 python3 bench/compare.py --out "$OUT/cmp" --build-dir build-device \
  --batches 32 --hiddens 128 --implementations 10_persistent_step \
  --pytorch-variants pytorch_cudagraph --data-dir data/mnist 2>&1 | tail -n 12
rm -rf "$OUT/cmp/runs" "$OUT"/ab/build_*
tar -czf "$OUT/r9.tar.gz" -C "$OUT" ab cmp && rm -rf "$OUT/ab" "$OUT/cmp"
echo "=== end ($(date -u +%T))"
