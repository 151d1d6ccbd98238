#!/usr/bin/env bash
# Session 17, call 1: chapter 10's on-chip kernel, three variants against HEAD: two accumulator
# chains in tile_product (b), the first layer's SGD taken transposed (c), both (d). Test suite 10's
# training test on b, c, d; tools/ab_train.sh of a (HEAD), b, c, d at batch 32, hidden 128 and 64;
# block 0's section clock (exp/onchip_clock.py) on a and d.
export PATH=/usr/local/cuda/bin:$PATH
date -u; nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit,driver_version --format=csv
mkdir -p data/mnist "$OUT/t" "$OUT/c"
for f in .device/mnist-gz/*.gz; do gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
T=/tmp/trees; rm -rf $T; mkdir -p $T/a
tar -cf - --exclude=./.git --exclude=./exp --exclude=./.device --exclude=./docs --exclude=./data/mnist --exclude='./build*' . | tar -xf - -C $T/a
for v in b:two_chains c:sgd_transposed d:both; do
  n=${v%%:*}; cp -r $T/a $T/$n; patch -d $T/$n -p1 -s < "exp/${v#*:}.diff" || echo "patch $v failed"
done
for v in a d; do cp -r $T/$v $T/clock_$v; python3 exp/onchip_clock.py $T/clock_$v; done
build() { meson setup $T/$1/b $T/$1 >/dev/null 2>&1; ninja -C $T/$1/b $2 >"$OUT/t/build_$1.txt" 2>&1 || echo "build $1 failed"; }
for v in b c d; do build $v tests/test_training_10_persistent_step & done
for v in clock_a clock_d; do build $v chapters/train_10_persistent_step & done
wait; echo "=== builds done $(date -u +%T)"
for v in b c d; do
  timeout 120 $T/$v/b/tests/test_training_10_persistent_step data/mnist >"$OUT/t/test_$v.txt" 2>&1
  echo "test_training $v: rc $? $(grep -ciE 'fail' "$OUT/t/test_$v.txt") lines with fail; $(tail -n 1 "$OUT/t/test_$v.txt")"
done
echo "=== ab $(date -u +%T)"
REPS=5 timeout 330 tools/ab_train.sh /tmp/ab 10_persistent_step $T/a $T/b $T/c $T/d 32x128 32x64 2>&1 | tail -8
cp /tmp/ab/ab.csv /tmp/ab/ab_summary.csv "$OUT/"
for v in a b c d; do
  python3 - /tmp/ab/runs/a_b32_h128_r1 /tmp/ab/runs/${v}_b32_h128_r1 <<'PY'
import csv, glob, sys
def losses(d):
    rows = list(csv.DictReader(open(glob.glob(d + "/*_steps.csv")[0])))
    key = [k for k in rows[0] if "loss" in k][0]
    return [float(r[key]) for r in rows]
a, b = losses(sys.argv[1]), losses(sys.argv[2])
print(f"{sys.argv[2].split('/')[-1]}: {len(b)} steps, max |loss - a's| {max(abs(x - y) for x, y in zip(a, b)):.2e}, last {b[-1]:.5f} (a {a[-1]:.5f})")
PY
done
echo "=== clock $(date -u +%T)"
for v in a d; do for h in 128 64; do
  timeout 60 $T/clock_$v/b/chapters/train_10_persistent_step --batch 32 --hidden $h --epochs 2 --no-eval \
    --data-dir data/mnist --out-dir /tmp/c_$v$h >"$OUT/c/clock_${v}_h$h.txt" 2>&1
  echo "clock $v h$h: $(grep onchip "$OUT/c/clock_${v}_h$h.txt" | tail -1)"
done; done
tar -czf "$OUT/r1.tar.gz" -C "$OUT" t c && rm -rf "$OUT/t" "$OUT/c"
echo "=== end $(date -u +%T)"
