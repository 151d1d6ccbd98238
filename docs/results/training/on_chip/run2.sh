#!/bin/bash
# Device run 2: the cluster barrier's machine code in context, and Nsight Compute on one launch
# of chapters 17 and 18 (20 steps at batch 32, hidden 128).
set -u
export PATH=/usr/local/cuda/bin:$PATH
cd "$(dirname "$0")"
R=$PWD
L=$OUT/logs2
mkdir -p $L data/mnist pb/chapters
for f in "${MNIST_GZ_DIR:?a folder holding the four MNIST .gz files}"/*.gz; do gunzip -c $f > data/mnist/$(basename ${f%.gz}); done
for c in 17_cluster_model 18_on_chip; do
  cuobjdump -sass pb/bin/test_training_$c | grep -B12 -A4 'UCGABAR_ARV' > $L/sass_barrier_$c.txt 2>&1
  cuobjdump -sass pb/bin/test_training_$c | grep -c 'UCGABAR_WAIT' >> $L/sass_barrier_$c.txt
done
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; ncu --version | tail -1; } > $L/env.txt 2>&1
for c in 17_cluster_model:cluster_training 18_on_chip:on_chip_training; do
  name=${c%%:*}; regex=${c#*:}
  timeout 120 ncu --clock-control none --kernel-name regex:$regex --launch-count 1 --set full \
    -o $L/ncu_$name pb/bin/train_$name --data-dir $R/data/mnist --hidden 128 --batch 32 --epochs 1 \
    --max-steps 20 --no-eval --out-dir /tmp/ncu_$name > $L/ncu_$name.stdout 2>&1
  ncu --import $L/ncu_$name.ncu-rep --page raw --csv > $L/ncu_$name.raw.csv 2>&1
  rm -f $L/ncu_$name.ncu-rep
done
date -u >> $L/env.txt
