#!/usr/bin/env bash
# Session 17, call 2: the on-chip kernel's next images looked up a phase ahead (b) and, with it,
# the column sends mapped once a thread (c = this checkout), against HEAD (a = ab_base). Suites 10
# and gpu on c; tools/ab_train.sh a b c at batch 32, hidden 128 and 64; block 0's section clock on
# c; the on-chip kernel's SASS size.
export PATH=/usr/local/cuda/bin:$PATH
date -u; nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit,driver_version --format=csv
mkdir -p data/mnist "$OUT/t" "$OUT/c"
for f in .device/mnist-gz/*.gz; do gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
T=/tmp/trees; rm -rf $T; mkdir -p $T
cp -r ab_base $T/b && patch -d $T/b -p1 -s < exp/prefetch.diff || echo "patch b failed"
mkdir -p $T/clock_c && tar -cf - --exclude=./.git --exclude=./exp --exclude=./ab_base --exclude=./.device --exclude=./docs --exclude=./data/mnist --exclude='./build*' . | tar -xf - -C $T/clock_c
python3 exp/onchip_clock.py $T/clock_c
(meson setup $T/clock_c/b $T/clock_c >/dev/null 2>&1; ninja -C $T/clock_c/b chapters/train_10_persistent_step >"$OUT/c/build.txt" 2>&1 || echo "clock build failed") &
timeout 400 tools/device_run.sh "$OUT/t" tests 10_persistent_step gpu 2>&1 | grep -E "^ *[0-9]+/[0-9]+ |^Ok|^Fail|FAIL|rror" | head -30
wait
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
echo "=== clock $(date -u +%T)"
for h in 128 64; do
  timeout 60 $T/clock_c/b/chapters/train_10_persistent_step --batch 32 --hidden $h --epochs 2 --no-eval \
    --data-dir data/mnist --out-dir /tmp/cc$h >"$OUT/c/clock_h$h.txt" 2>&1
  echo "clock c h$h: $(grep onchip "$OUT/c/clock_h$h.txt" | tail -1)"
done
cuobjdump -sass build-device/chapters/train_10_persistent_step | awk '/Function : .*on_chip_training/{p=1} p&&/Function : /&&!/on_chip_training/{p=0} p' >"$OUT/c/sass_on_chip.txt"
echo "on-chip kernel SASS: $(grep -cE '^\s+/\*[0-9a-f]{4}\*/' "$OUT/c/sass_on_chip.txt") instructions, $(grep -cE 'HMMA' "$OUT/c/sass_on_chip.txt") HMMA, $(grep -cE 'BAR.SYNC' "$OUT/c/sass_on_chip.txt") BAR.SYNC"
gzip "$OUT/c/sass_on_chip.txt"
tar -czf "$OUT/r2.tar.gz" -C "$OUT" t c && rm -rf "$OUT/t" "$OUT/c"
echo "=== end $(date -u +%T)"
