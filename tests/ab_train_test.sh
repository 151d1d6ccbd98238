#!/usr/bin/env bash
# maint/ab_train.sh with stand-in trainers (no GPU, no build): A at 40 us a step, B at 30, each
# three times as slow in its first epoch, which the summary leaves out, so it must say 40, 30 and
# 0.750; the order of A and B alternates between repetitions; a third tree, C at 20, gives 0.500
# and the order of the three rotates; a trainer that fails, a shape that is not BATCHxHIDDEN and
# EPOCHS=1 each stop it with an error line.
#   tests/ab_train_test.sh SOURCE_ROOT
set -u
root=$1
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
fail() {
  echo "FAIL $*"
  exit 1
}
out=$scratch/out
mkdir -p "$scratch/data"
touch "$scratch/data/train-images-idx3-ubyte"
stand_in() {  # variant, ms per step, exit status
  mkdir -p "$out/build_$1/chapters"
  local first_epoch
  first_epoch=$(python3 -c "print(3 * $2)")
  printf 'rule noop\n  command = true\nbuild chapters/train_fake: phony\n' >"$out/build_$1/build.ninja"
  cat >"$out/build_$1/chapters/train_fake" <<SH
#!/usr/bin/env bash
[ $3 -eq 0 ] || { echo "error: no CUDA-capable GPU found" >&2; exit $3; }
while [ \$# -gt 0 ]; do
  case \$1 in --batch) b=\$2; shift ;; --hidden) h=\$2; shift ;; --out-dir) o=\$2; shift ;; esac
  shift
done
echo "$1" >>"$out/order.txt"
f=\$o/fake_epochs.csv
echo chapter,gpu,layers,batch,epoch,ms_per_step,date,sm_clock_mhz,driver >\$f
echo "fake,\"GPU X\",784-\$h-\$h-\$h-10,\$b,1,$first_epoch,2026-11-24,1980,580" >>\$f
echo "fake,\"GPU X\",784-\$h-\$h-\$h-10,\$b,2,$2,2026-11-24,1980,580" >>\$f
SH
  chmod +x "$out/build_$1/chapters/train_fake"
}
stand_in a 0.040 0
stand_in b 0.030 0
ab=("$root/maint/ab_train.sh" "$out" fake "$scratch" "$scratch")
output=$(DATA_DIR=$scratch/data REPS=2 EPOCHS=2 "${ab[@]}" 32x128 256x128 2>&1) || fail "ab_train.sh: $output"
grep -q '^32,128,40.00,30.00,0.750,2,1980,1980$' "$out/ab_summary.csv" ||
  fail "summary: $(cat "$out/ab_summary.csv")"
[ "$(tr '\n' ' ' <"$out/order.txt")" = "a b a b b a b a " ] ||
  fail "order of the runs: $(tr '\n' ' ' <"$out/order.txt")"
[ "$(grep -c '' "$out/ab.csv")" -eq 17 ] || fail "ab.csv has $(grep -c '' "$out/ab.csv") lines, not 17"
stand_in c 0.020 0
rm -f "$out/order.txt"
output=$(DATA_DIR=$scratch/data REPS=3 EPOCHS=2 "${ab[@]}" "$scratch" 32x128 2>&1) ||
  fail "ab_train.sh, three trees: $output"
grep -q '^32,128,40.00,30.00,0.750,20.00,0.500,3,1980,1980$' "$out/ab_summary.csv" ||
  fail "summary of three trees: $(cat "$out/ab_summary.csv")"
[ "$(tr '\n' ' ' <"$out/order.txt")" = "a b c b c a c a b " ] ||
  fail "order of the runs of three trees: $(tr '\n' ' ' <"$out/order.txt")"
output=$(DATA_DIR=$scratch/data "${ab[@]}" 32by128 2>&1) && fail "a bad shape was taken"
grep -q "^error: shape '32by128'" <<<"$output" || fail "bad shape: $output"
output=$(DATA_DIR=$scratch/data EPOCHS=1 "${ab[@]}" 32x128 2>&1) && fail "EPOCHS=1 was taken"
grep -q "^error: EPOCHS=1" <<<"$output" || fail "EPOCHS=1: $output"
stand_in b 0.030 1
output=$(DATA_DIR=$scratch/data REPS=1 "${ab[@]}" 32x128 2>&1) && fail "a failing trainer passed"
grep -q "^error: b at batch 32, hidden 128 failed" <<<"$output" || fail "failing trainer: $output"
echo "ab_train: summary 0.750 from stand-ins, runs alternate, a third tree rotates, 3 bad inputs refused with one line"
