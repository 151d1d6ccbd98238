#!/usr/bin/env bash
# Experiment (not for commit): chapter 10 variants, the per-phase times, the barrier's cost.
set -uo pipefail
out=$1
root=$(pwd)
export PATH="/usr/local/cuda/bin:$PATH"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv
mkdir -p data/mnist
for f in .device/mnist-gz/*.gz; do gunzip -c "$f" >"data/mnist/$(basename "${f%.gz}")"; done
nvcc -O3 -std=c++17 -arch=sm_90a -I chapters -I common exp/barrier_bench.cu -o /tmp/bb &
variant() {  # name, patches...
  local name=$1; shift
  local dir=/tmp/v_$name
  mkdir -p $dir
  tar -cf - --exclude='./build*' --exclude=./.git --exclude=./.device --exclude=./data/mnist . | tar -xf - -C $dir
  for p in "$@"; do python3 $dir/exp/${p%%=*}_patch.py $dir ${p#*=} || return 1; done
  meson setup $dir/b $dir >/dev/null && ninja -C $dir/b chapters/train_10_persistent_step >$out/build_$name.txt 2>&1 || { echo "build $name failed"; tail -5 $out/build_$name.txt; }
}
names=(base phase stages4 stages8 phase_stages8 grid64 grid32 phase_grid32)
variant base &
variant phase phase= &
variant stages4 stages=4 &
variant stages8 stages=8 &
variant phase_stages8 phase= stages=8 &
variant grid64 grid=64 &
variant grid32 grid=32 &
variant phase_grid32 phase= grid=32 &
wait
echo "built $(date -u +%T)"
/tmp/bb | tee $out/barrier.csv
for rep in 1 2; do
  for name in "${names[@]}"; do
    for shape in "32 128" "256 128" "32 512"; do
      set -- $shape
      d=$out/runs/$name/b$1_h$2_r$rep
      mkdir -p $d
      /tmp/v_$name/b/chapters/train_10_persistent_step --batch $1 --hidden $2 --epochs 3 --no-eval --data-dir data/mnist --out-dir $d >$d/log.txt 2>&1 || echo "run $name $shape failed"
      us=$(python3 -c "import csv,sys,statistics; r=list(csv.DictReader(open(sys.argv[1]))); print(' '.join('%.2f' % (1000*float(x['ms_per_step'])) for x in r))" $d/*_epochs.csv)
      echo "$name b$1 h$2 rep$rep: us/step by epoch $us | $(grep phases $d/log.txt | tail -1)"
    done
  done
done
echo "done $(date -u +%T)"
