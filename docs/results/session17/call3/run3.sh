#!/usr/bin/env bash
# Session 17, call 3: the on-chip kernel with its column sends by warp, one receiver at a time (b),
# the batch copied by TMA multicast (c), both (d = this checkout), against HEAD (a = ab_base). Suites 10
# and gpu on d, the training test on c; tools/ab_train.sh a b c d at batch 32, hidden 128 and 64;
# block 0's section clock on d; the on-chip kernel's SASS size.
export PATH=/usr/local/cuda/bin:$PATH
date -u; nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit,driver_version --format=csv
mkdir -p data/mnist "$OUT/t" "$OUT/c" "$OUT/s"
for f in .device/mnist-gz/*.gz; do gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
T=/tmp/trees; rm -rf $T; mkdir -p $T
cp -r ab_base $T/b && patch -d $T/b -p1 -s < exp/sends_by_warp.diff || echo "patch b failed"
cp -r ab_base $T/c && patch -d $T/c -p1 -s < exp/multicast.diff || echo "patch c failed"
(meson setup $T/c/bt $T/c >/dev/null 2>&1; ninja -C $T/c/bt tests/test_training_10_persistent_step >"$OUT/t/build_c.txt" 2>&1 || echo "build c failed") &
mkdir -p $T/clock_c && tar -cf - --exclude=./.git --exclude=./exp --exclude=./ab_base --exclude=./.device --exclude=./docs --exclude=./data/mnist --exclude='./build*' . | tar -xf - -C $T/clock_c
python3 exp/onchip_clock.py $T/clock_c
(meson setup $T/clock_c/b $T/clock_c >/dev/null 2>&1; ninja -C $T/clock_c/b chapters/train_10_persistent_step >"$OUT/c/build.txt" 2>&1 || echo "clock build failed") &
timeout 400 tools/device_run.sh "$OUT/t" tests 10_persistent_step gpu 2>&1 | grep -E "^ *[0-9]+/[0-9]+ |^Ok|^Fail|FAIL|rror" | head -30
wait
timeout 120 $T/c/bt/tests/test_training_10_persistent_step data/mnist >"$OUT/t/test_c.txt" 2>&1
echo "test_training c: rc $? $(tail -n 1 "$OUT/t/test_c.txt")"
echo "=== ab $(date -u +%T)"
REPS=5 timeout 300 tools/ab_train.sh /tmp/ab 10_persistent_step ab_base $T/b $T/c . 32x128 32x64 2>&1 | tail -8
cp /tmp/ab/ab.csv /tmp/ab/ab_summary.csv "$OUT/"
for v in b c d; do
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
  echo "clock d h$h: $(grep onchip "$OUT/c/clock_h$h.txt" | tail -1)"
done
cuobjdump -sass build-device/chapters/train_10_persistent_step | awk '/Function : .*on_chip_training/{p=1} p&&/Function : /&&!/on_chip_training/{p=0} p' >"$OUT/c/sass_on_chip.txt"
echo "on-chip kernel SASS: $(grep -cE '^\s+/\*[0-9a-f]{4,}\*/' "$OUT/c/sass_on_chip.txt") instructions, $(grep -cE 'HMMA' "$OUT/c/sass_on_chip.txt") HMMA, $(grep -cE 'BAR.SYNC' "$OUT/c/sass_on_chip.txt") BAR.SYNC"
gzip "$OUT/c/sass_on_chip.txt"
echo "=== sanitize $(date -u +%T)"
SANITIZE_ONLY='_train_b32_10_' timeout 240 tools/device_run.sh "$OUT/s" sanitize 2>&1 | grep -E "^ok|^FAIL|sanitize:" | head -10
tar -czf "$OUT/r3.tar.gz" -C "$OUT" s && rm -rf "$OUT/s"
tar -czf "$OUT/r3b.tar.gz" -C "$OUT" t c && rm -rf "$OUT/t" "$OUT/c"
echo "=== end $(date -u +%T)"
