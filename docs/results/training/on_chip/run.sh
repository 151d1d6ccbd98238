#!/bin/bash
# Device run for chapters 17-18: tests, mutants, sanitizer, step times (prebuilt binaries in pb/).
set -u
export PATH=/usr/local/cuda/bin:$PATH
cd "$(dirname "$0")"
R=$PWD
L=$OUT/logs
mkdir -p $L data/mnist
for f in "${MNIST_GZ_DIR:?a folder holding the four MNIST .gz files}"/*.gz; do gunzip -c $f > data/mnist/$(basename ${f%.gz}); done
stamp() { echo "$(date -u +%T) $*" >> $L/timeline.txt; }
# Trainer wrappers: the prebuilt trainers' default data folder is this machine's checkout.
for t in pb/bin/train_*; do
  n=$(basename $t)
  printf '#!/bin/bash\nexec %s/%s --data-dir %s/data/mnist "$@"\n' "$R" "$t" "$R" > pb/chapters/$n
  chmod +x pb/chapters/$n
done
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv;
  nvcc --version | tail -2; } > $L/env.txt 2>&1
stamp start
mkdir -p $L/times
for c in 17_cluster_model 18_on_chip; do
  cuobjdump -sass pb/bin/test_training_$c > /tmp/sass_$c.txt 2>&1
  grep -n -B4 -A2 'UCGABAR_ARV' /tmp/sass_$c.txt > $L/sass_cluster_barrier_$c.txt
  grep -c 'UCGABAR_ARV' /tmp/sass_$c.txt >> $L/sass_cluster_barrier_$c.txt
done
# Mutants: built on the CPUs meanwhile (nice), their training tests run after all builds.
# A gate on its `timeout`: the mutants' tests wait until this script's own GPU work is done (the
# training tests check that no other process moves the free device memory).
mkdir -p /tmp/gate
printf '#!/bin/bash\nwhile [ ! -f /tmp/gpu_free ]; do sleep 1; done\nexec %s "$@"\n' "$(command -v timeout)" > /tmp/gate/timeout
chmod +x /tmp/gate/timeout
(stamp mutate-start; PATH=/tmp/gate:$PATH MUTATE_JOBS=4 MUTATE_DIR=/tmp/mut nice -n 19 bash tools/mutate.sh \
   17_no_cluster_barrier_after_forward 17_columns_stored_into_own_block_only \
   17_partials_into_the_next_block 17_gradient_rows_past_the_batch_kept > $L/mutate.txt 2>&1;
 stamp mutate-end) &
MPID=$!
stamp timing
# Step times: the three trainers alternating, 3 processes each, 3 epochs a process (the first warm-up).
for round in 1 2 3; do
  for c in 16_step_tile 17_cluster_model 18_on_chip; do
    pb/chapters/train_$c --batch 32 --hidden 128 --epochs 3 --no-eval --out-dir $L/times/r${round}_$c \
      > $L/times/r${round}_$c.txt 2>&1 || echo "FAILED $c round $round" >> $L/timeline.txt
  done
done
nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,temperature.gpu --format=csv >> $L/env.txt
stamp timing-end
stamp gemm-tests
pb/bin/test_gemm_17_cluster_model 7 small > $L/test_gemm_17.txt 2>&1; echo "rc=$?" >> $L/test_gemm_17.txt
pb/bin/test_gemm_18_on_chip 7 small > $L/test_gemm_18.txt 2>&1; echo "rc=$?" >> $L/test_gemm_18.txt
stamp training-17
pb/bin/test_training_17_cluster_model $R/data/mnist > $L/test_training_17.txt 2>&1; echo "rc=$?" >> $L/test_training_17.txt
stamp training-18
pb/bin/test_training_18_on_chip $R/data/mnist > $L/test_training_18.txt 2>&1; echo "rc=$?" >> $L/test_training_18.txt
stamp sanitize
SANITIZE_ONLY='train_b32_1[78]_' SANITIZE_TIMEOUT=200 bash tools/sanitize.sh pb $L/sanitizer > $L/sanitize.txt 2>&1
echo "rc=$?" >> $L/sanitize.txt
ls /tmp/mut >> $L/timeline.txt 2>&1
touch /tmp/gpu_free
stamp gate-open
wait $MPID
stamp end
