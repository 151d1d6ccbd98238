#!/usr/bin/env bash
# Experiment driver (not for commit): chapter 10 before/after, phases, SASS, sync costs.
set -uo pipefail
out=$1
export PATH="/usr/local/cuda/bin:$PATH"
mkdir -p $out/a
tools/device_run.sh $out/a tests gpu 10_persistent_step 01_naive >/dev/null 2>&1
grep -E "^ *[0-9]+/[0-9]+ |^Ok|^Fail" $out/a/log.txt
build-device/bench/bench_sync_costs --csv $out/sync_costs.csv | tee $out/sync_costs_log.txt
cuobjdump -sass -fun persistent_training_kernel build-device/chapters/train_10_persistent_step > $out/sass_persistent.txt 2>&1
grep -n -B8 -A3 "ATOMG" $out/sass_persistent.txt | head -60 > $out/sass_barrier_excerpt.txt
head -30 $out/sass_barrier_excerpt.txt
variant() {  # name, then: copy the old files (before) and/or apply the phase patch
  local name=$1 dir=/tmp/v_$1; shift
  mkdir -p $dir
  tar -cf - --exclude='./build*' --exclude=./.git --exclude=./.device --exclude=./data/mnist . | tar -xf - -C $dir
  for p in "$@"; do
    case $p in
      before) cp -r exp/before/. $dir/ ;;
      phase) python3 exp/phase_patch.py $dir || return 1 ;;
    esac
  done
  meson setup $dir/b $dir >/dev/null && ninja -C $dir/b chapters/train_10_persistent_step >$out/build_$name.txt 2>&1 || { echo "build $name failed"; tail -5 $out/build_$name.txt; }
}
variant before before & variant after & variant phase_after phase & variant phase_before before phase & wait
echo "built $(date -u +%T)"
for rep in 1 2 3; do
  order="before after"; [ $((rep % 2)) -eq 0 ] && order="after before"
  for shape in "32 128" "256 128" "32 512"; do
    set -- $shape
    for name in $order phase_after phase_before; do
      [ $rep -gt 1 ] && [[ $name == phase_* ]] && continue
      d=$out/runs/${name}_b$1_h$2_r$rep; mkdir -p $d
      /tmp/v_$name/b/chapters/train_10_persistent_step --batch $1 --hidden $2 --epochs 3 --no-eval --data-dir data/mnist --out-dir $d >$d/log.txt 2>&1 || echo "run $name failed"
      us=$(python3 -c "import csv,sys; r=list(csv.DictReader(open(sys.argv[1]))); print(' '.join('%.2f' % (1000*float(x['ms_per_step'])) for x in r), r[-1]['sm_clock_mhz'])" $d/*_epochs.csv)
      echo "$name b$1 h$2 rep$rep: us/step by epoch, MHz: $us | $(grep phases $d/log.txt | tail -1)"
    done
  done
done
echo "done $(date -u +%T)"
